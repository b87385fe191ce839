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
SELECTOR_MISMATCH = "selector-mismatch"
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


@dataclass(frozen=True)
class Word:
    word: str
    holds_when: str
    next_action: str


ORDER: tuple[Word, ...] = (
    Word(NO_RUNTIMECLASS, "never created: spec.runtimeClassName names no RuntimeClass", "create the RuntimeClass or fix the name"),
    Word(QUOTA_EXCEEDED, "never created: a ResourceQuota in the namespace would be exceeded", "raise the quota or free usage in that namespace"),
    Word(NO_GPU_REQUEST, "GPU intent, but no container asks for an accelerator resource", "add the accelerator limit to the container"),
    Word(SCHEDULING_GATED, "spec.schedulingGates is non-empty", "look at the controller that owns the gate (e.g. a queueing system)"),
    Word(NODE_SIDE, "spec.nodeName is set and the pod is still Pending", "look at the node and its runtime"),
    Word(SELECTOR_MISMATCH, "no node satisfies nodeSelector and required node affinity", "fix the selector/affinity or the node labels"),
    Word(CORDONED, "every remaining candidate is excluded only because it is cordoned", "uncordon, or wait for the maintenance"),
    Word(UNTOLERATED_TAINT, "every remaining candidate has a NoSchedule/NoExecute taint the pod does not tolerate", "add the toleration, or fix the taint"),
    Word(NO_GPU_NODE, "no remaining candidate has the requested extended resource in status.capacity", "restore the device plugin"),
    Word(ALLOCATABLE_ZERO, "the candidates that report it all have allocatable 0 (capacity > 0)", "repair the node (driver, validation)"),
    Word(EXHAUSTED, "on every remaining candidate, allocatable minus what non-terminated pods request is short", "wait for free slots, or add capacity"),
    Word(UNCLASSIFIED, "nothing above holds and the pod depends on something not modelled", "read the scheduler's own message (quoted in the evidence)"),
    Word(FITS_NOW, "nothing above holds: by this bundle some node can take the pod now", "wait for the retry; compare the scheduler's message with the evidence"),
)

EXTRA: tuple[Word, ...] = (
    Word(RUNNING, "asked by name: the pod is bound and past Pending", "nothing to fix at scheduling; look inside the pod"),
    Word(INSUFFICIENT_EVIDENCE, "a rule needs a file the bundle lacks (or that is invalid)", "collect the named file and run again"),
)

ALL: tuple[Word, ...] = ORDER + EXTRA
BY_WORD: dict[str, Word] = {w.word: w for w in ALL}
VOCABULARY: tuple[str, ...] = tuple(w.word for w in ALL)


def next_action(word: str) -> str:
    return BY_WORD[word].next_action
