"""The other names a vendor's devices go by (node-start.md, `resource-name-mismatch`), and what NVIDIA's GPU feature discovery and
MIG manager say about a node in its labels. Nothing here decides a cause word.

NVIDIA's device plugin advertises `nvidia.com/gpu.shared` under time-slicing or MPS with `renameByDefault`, and one
`nvidia.com/mig-<profile>` per MIG profile under the mixed strategy (NVIDIA/k8s-device-plugin, api/config/v1:
the resource names; gpu-feature-discovery writes the labels below). A node *advertises* a resource when its
capacity has it above 0: a reconfigured node keeps `nvidia.com/gpu: "0"` beside `nvidia.com/gpu.shared`.
"""

from __future__ import annotations

from collections.abc import Iterable

from dataclasses import dataclass

from analyzer.model.accelerators import AcceleratorConfig

MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"
REPLICAS = "nvidia.com/gpu.replicas"
PRODUCT = "nvidia.com/gpu.product"
GFD_LABELS: tuple[str, ...] = (MIG_STRATEGY, MIG_CONFIG, MIG_CONFIG_STATE, SHARING_STRATEGY, REPLICAS, PRODUCT)
MIG_SETTLED = "success"  # the MIG manager's state once the layout is applied (pending, rebooting, failed otherwise)
SHARED_SUFFIX = ".shared"
MIG_PREFIX = "nvidia.com/mig-"


def vendor(resource: str) -> str:
    return resource.split("/", 1)[0] if "/" in resource else ""


def siblings(resource: str, capacity: dict[str, int], config: AcceleratorConfig) -> list[tuple[str, int]]:
    """Other accelerator resources of the same vendor domain the node advertises (capacity > 0), by name."""
    domain = vendor(resource)
    if not domain or not config.is_accelerator(resource):
        return []
    return sorted((name, count) for name, count in capacity.items()
                  if name != resource and count > 0 and vendor(name) == domain and config.is_accelerator(name))


# Labels that say a node has an accelerator whatever advertises it: node feature discovery's PCI vendor labels
# (10de NVIDIA, 1002 AMD, 8086 Intel) and the clouds' accelerator labels.
_ACCELERATOR_LABELS = ("feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-1002.present",
                       "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/instance-gpu-count",
                       "node.kubernetes.io/instance-gpu")


def cpu_node(capacity: dict[str, int], labels: dict[str, str], resources: Iterable[str]) -> bool:
    """A node that is what it is: no capacity entry for any of `resources` (not even 0, which a departed device
    plugin leaves) and no label of their vendors or of node feature discovery saying a GPU is there. Restoring a
    device plugin cannot help it; a GPU-labelled node without the resource is a different matter."""
    domains = {vendor(r) for r in resources if vendor(r)}
    # Any resource of the same vendor in its capacity (nvidia.com/gpu for a pod asking nvidia.com/gpu.shared): a
    # GPU node advertising its devices under another name, not a CPU node.
    if any(r in capacity for r in resources) or any(vendor(k) in domains for k in capacity):
        return False
    return not any(k in _ACCELERATOR_LABELS or k.split("/", 1)[0] in domains for k in labels)


def gfd_labels(labels: dict[str, str]) -> dict[str, str]:
    """The GPU feature discovery and MIG manager labels a node carries, in GFD_LABELS order."""
    return {k: labels[k] for k in GFD_LABELS if k in labels}


def mig_unsettled(labels: dict[str, str]) -> str | None:
    """The MIG manager's state when it is not `success` (pending, rebooting, failed): the layout is changing."""
    state = labels.get(MIG_CONFIG_STATE)
    return state if state is not None and state != MIG_SETTLED else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Sharing:
    """How one accelerator resource of a node is cut: time-slicing/MPS replicas, or a MIG profile."""

    kind: str  # "shared" | "mig" | ""
    detail: str  # for a person: "time-slicing, 10 replicas per GPU", "MIG profile 1g.10gb (mixed strategy)"


def sharing_of(resource: str, labels: dict[str, str]) -> Sharing:
    if resource.endswith(SHARED_SUFFIX):
        strategy = labels.get(SHARING_STRATEGY) or "shared"
        replicas = labels.get(REPLICAS)
        return Sharing(kind="shared", detail=strategy + (f", {replicas} replicas per GPU" if replicas else ""))
    if resource.startswith(MIG_PREFIX):
        strategy = labels.get(MIG_STRATEGY)
        return Sharing(kind="mig", detail=f"MIG profile {resource.removeprefix(MIG_PREFIX)}"
                       + (f" ({strategy} strategy)" if strategy else ""))
    strategy = labels.get(SHARING_STRATEGY)
    if strategy and strategy != "none" and resource == "nvidia.com/gpu":
        replicas = labels.get(REPLICAS)
        return Sharing(kind="shared", detail=strategy + (f", {replicas} replicas per GPU" if replicas else ""))
    return Sharing(kind="", detail="")
