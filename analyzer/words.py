"""The cause words: the contract of ../shared/spec/causes.md, defined once.

The words are an API (alert routing keys on them). Every other module refers
to these constants; the order below is the order the classifier walks.
"""

from __future__ import annotations

from dataclasses import dataclass

NO_RUNTIMECLASS = "no-runtimeclass"
QUOTA_EXCEEDED = "quota-exceeded"
NO_GPU_REQUEST = "no-gpu-request"
SCHEDULING_GATED = "scheduling-gated"
NODE_SIDE = "node-side"
NO_RESOURCECLAIM = "no-resourceclaim"
NO_DEVICECLASS = "no-deviceclass"
SELECTOR_MISMATCH = "selector-mismatch"
DEVICE_SELECTOR_MISMATCH = "device-selector-mismatch"
CORDONED = "cordoned"
UNTOLERATED_TAINT = "untolerated-taint"
NO_GPU_NODE = "no-gpu-node"
ALLOCATABLE_ZERO = "allocatable-zero"
EXHAUSTED = "exhausted"
UNCLASSIFIED = "unclassified"
FITS_NOW = "fits-now"
# Not part of the order: answers for pods asked about by name, and for a
# question the bundle cannot decide.
RUNNING = "running"
INSUFFICIENT_EVIDENCE = "insufficient-evidence"


@dataclass(frozen=True, kw_only=True)
class Word:
    word: str
    row: int | None  # the row of causes.md (version 2); None for the two answers outside the order
    holds_when: str
    next_action: str


# The README's word table is generated from these (scripts/refresh_readme.py; tests/test_readme.py checks it).
ORDER: tuple[Word, ...] = (
    Word(word=NO_RUNTIMECLASS, row=1, holds_when="(never created) `spec.runtimeClassName` names no RuntimeClass",
         next_action="create the RuntimeClass or fix the name"),
    Word(word=QUOTA_EXCEEDED, row=2, holds_when="(never created) a ResourceQuota in the namespace would be exceeded",
         next_action="raise the quota or free usage in that namespace"),
    Word(word=NO_GPU_REQUEST, row=3,
         holds_when="GPU intent, but no container asks for an accelerator and the pod has no resource claim",
         next_action="add the accelerator limit (or a resource claim)"),
    Word(word=SCHEDULING_GATED, row=4, holds_when="`spec.schedulingGates` is non-empty",
         next_action="look at the controller that owns the gate (e.g. a queueing system)"),
    Word(word=NODE_SIDE, row=5, holds_when="`spec.nodeName` is set and the pod is still `Pending`",
         next_action="look at the node and its runtime"),
    Word(word=NO_RESOURCECLAIM, row=6,
         holds_when="a ResourceClaim the pod names, or the ResourceClaimTemplate it names (no claim generated), is not in the bundle",
         next_action="create the claim or template, or fix the name"),
    Word(word=NO_DEVICECLASS, row=7,
         holds_when="a request of one of the pod's claims (or of its template) names a DeviceClass that is not in the bundle",
         next_action="create the DeviceClass or fix the name"),
    Word(word=SELECTOR_MISMATCH, row=8, holds_when="no node satisfies nodeSelector together with required node affinity",
         next_action="fix the selector/affinity or the node labels"),
    Word(word=NO_GPU_NODE, row=9,
         holds_when="no candidate advertises the requested extended resource at all, or no ResourceSlice offers a candidate any device of a claim's DeviceClass",
         next_action="restore what advertises the devices: the device plugin, or the DRA driver"),
    Word(word=DEVICE_SELECTOR_MISMATCH, row=10,
         holds_when="candidates offer devices of the class, but none can satisfy a claim even with every device free (CEL selectors, constraints)",
         next_action="fix the claim's selectors, count or constraints (or the DeviceClass)"),
    Word(word=CORDONED, row=11, holds_when="every remaining candidate is excluded only because it is cordoned",
         next_action="uncordon, or wait for the maintenance"),
    Word(word=UNTOLERATED_TAINT, row=12,
         holds_when="every remaining candidate has a NoSchedule/NoExecute taint (or cordon) the pod does not tolerate, or every device that could serve a claim there has an untolerated device taint",
         next_action="add the toleration, or fix the taint"),
    Word(word=ALLOCATABLE_ZERO, row=13, holds_when="the candidates that report the resource all have allocatable 0 (capacity > 0)",
         next_action="repair the node (driver, validation)"),
    Word(word=EXHAUSTED, row=14,
         holds_when="on every remaining candidate something is short once non-terminated pods are counted, or too few matching devices are unallocated (too-large: even empty)",
         next_action="wait for free slots, or add capacity"),
    Word(word=UNCLASSIFIED, row=15, holds_when="nothing above holds and the pod depends on something not modelled",
         next_action="read the scheduler's own message (quoted in the evidence)"),
    Word(word=FITS_NOW, row=16, holds_when="nothing above holds: by this bundle some node can take the pod now",
         next_action="wait for the retry; compare the scheduler's message with the evidence"),
)

EXTRA: tuple[Word, ...] = (
    Word(word=RUNNING, row=None, holds_when="(asked by name) the pod is bound and past Pending",
         next_action="nothing to fix at scheduling; look inside the pod"),
    Word(word=INSUFFICIENT_EVIDENCE, row=None, holds_when="a rule needs a file the bundle lacks or that is invalid (named)",
         next_action="collect the named file and run again"),
)

ALL: tuple[Word, ...] = ORDER + EXTRA
BY_WORD: dict[str, Word] = {w.word: w for w in ALL}
VOCABULARY: tuple[str, ...] = tuple(w.word for w in ALL)


def next_action(word: str) -> str:
    return BY_WORD[word].next_action


def readme_table() -> str:
    """The README's word table, from the definitions above."""
    lines = ["| # | word | holds when | next action |", "|---|---|---|---|"]
    for w in ALL:
        lines.append(f"| {w.row if w.row is not None else '–'} | `{w.word}` | {w.holds_when} | {w.next_action} |")
    return "\n".join(lines) + "\n"
