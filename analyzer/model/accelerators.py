"""Which resources are accelerators, and what signals GPU intent: one place, extendable.

The defaults follow ../shared/spec/causes.md. `--resource NAME` (a name or a
shell-style pattern such as `example.com/fpga-*`) adds an accelerator resource;
`--gpu-pod NS/NAME` declares intent for a pod that shows none of the signals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache

DEFAULT_ACCELERATORS: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",  # time-slicing or MPS with renameByDefault (causes.md: accelerator resource)
    "nvidia.com/mig-*",
    "amd.com/gpu",
    "gpu.intel.com/*",
    "habana.ai/*",
    "aws.amazon.com/neuron*",
    "google.com/tpu",
)

# Lower-case substrings that, in a nodeSelector / node-affinity key or value,
# mean "this pod wants an accelerator node" (causes.md, GPU intent). Chosen so
# that ordinary labels do not match: plain "tpu" would match "output".
DEFAULT_INTENT_WORDS: tuple[str, ...] = (
    "nvidia",
    "gpu",
    "amd.com/",
    "habana.ai/",
    "aws.amazon.com/neuron",
    "google.com/tpu",
    "gke-tpu",
)

# The collector's redaction marker (scripts/collect.py MARKER): a redacted value says nothing.
REDACTION_MARKER = "REDACTED-BY-GPU-TRIAGE"

# NVIDIA's container runtime reads this variable; these values mean "no GPU".
NO_GPU_VISIBLE_DEVICES = ("void", "none", "")

# Order in which shortages are reported for `exhausted`: accelerators first,
# then the native resources, then every other extended resource by name.
NATIVE_ORDER: tuple[str, ...] = ("cpu", "memory", "pods", "ephemeral-storage")


def is_extended(name: str) -> bool:
    """Kubernetes IsExtendedResourceName: a domain-prefixed name outside kubernetes.io."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


@dataclass(frozen=True)
class AcceleratorConfig:
    patterns: tuple[str, ...] = DEFAULT_ACCELERATORS
    intent_words: tuple[str, ...] = DEFAULT_INTENT_WORDS
    gpu_pods: frozenset[tuple[str, str]] = field(default_factory=frozenset)

    def with_additions(self, resources: list[str] | tuple[str, ...] = (), gpu_pods: list[tuple[str, str]] | tuple = ()) -> "AcceleratorConfig":
        extra = tuple(r for r in resources if r not in self.patterns)
        return AcceleratorConfig(self.patterns + extra, self.intent_words + tuple(r.rstrip("*").lower() for r in extra),
                                 self.gpu_pods | frozenset(gpu_pods))

    def is_accelerator(self, name: str) -> bool:
        return _matches(self.patterns, name)

    def mentions_accelerator(self, text: str) -> bool:
        low = text.lower()
        return any(word in low for word in self.intent_words)

    def resource_order(self, names: set[str] | list[str]) -> list[str]:
        """Accelerators first, then cpu, memory, pods, ephemeral-storage, then the rest by name."""
        return list(_order(self.patterns, tuple(sorted(set(names)))))


@lru_cache(maxsize=8192)
def _matches(patterns: tuple[str, ...], name: str) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


@lru_cache(maxsize=4096)
def _order(patterns: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    def key(name: str) -> tuple[int, int, str]:
        if _matches(patterns, name):
            return (0, 0, name)
        if name in NATIVE_ORDER:
            return (1, NATIVE_ORDER.index(name), name)
        return (2, 0, name)
    return tuple(sorted(names, key=key))
