"""Why one node fails one check: the value every check returns (rules/checks.py, rules/dra_devices.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Check(StrEnum):
    """The checks a node can fail, named as `-o json` prints them (a str, so JSON and comparisons read it)."""

    NODE_NAME = "node-name"
    SELECTOR = "selector"
    NOT_ADVERTISED = "not-advertised"
    OTHER_NAME = "other-name"  # the vendor's devices advertised under another name (resource-name-mismatch)
    NO_DEVICES = "no-devices"
    DEVICE_SELECTORS = "device-selectors"
    DEVICE_CONSTRAINTS = "device-constraints"
    CLAIM_PINNED = "claim-pinned"
    CORDON = "cordon"
    TAINT = "taint"
    CONDITION = "condition"  # only condition taints (node-unhealthy: the node's condition, not a toleration)
    DEVICE_TAINT = "device-taint"
    ZERO_ALLOCATABLE = "zero-allocatable"
    FIT = "fit"
    DEVICES = "devices"
    VOLUME_TOPOLOGY = "volume-topology"
    VOLUME_ZONE = "volume-zone"
    VOLUME_BINDING = "volume-binding"
    POD_AFFINITY = "pod-affinity"
    TOPOLOGY_SPREAD = "topology-spread"
    HOST_PORT = "host-port"
    RWOP = "rwop"
    VOLUME_LIMIT = "volume-limit"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """Why one node fails one check (a funnel stage's removed node)."""

    check: Check
    text: str  # for a person
    scheduler: tuple[str, ...] = ()  # what the scheduler writes for this node, when this is its first failure


class Removed:
    """Nodes a funnel stage removed for one reason: their positions in nodes.json (ascending), and the Reason,
    made when first asked for. A vector stage removes 3,700 nodes short of memory by 3,700 different amounts:
    the evidence names a few of those reasons, so only those are ever written out. `distinct_text`: no other
    group of the stage has the same text (the vector forms' texts are one-to-one with their groups)."""

    __slots__ = ("_make", "_reason", "at", "distinct_text")

    def __init__(self, at, reason: Reason | None = None, make=None, distinct_text: bool = False) -> None:
        self.at = at
        self._reason = reason
        self._make = make
        self.distinct_text = distinct_text

    @property
    def reason(self) -> Reason:
        if self._reason is None:
            self._reason = self._make()
            self._make = None
        return self._reason


class Groups:
    """A vector stage's removed nodes, many groups at once: positions ordered group by group (each group's
    ascending, groups in the order of their first node), where each group starts, and its code. A group's
    Removed (and its Reason) is made only when asked for: 3,700 nodes short of memory by 3,700 amounts cost
    three arrays, and the evidence makes the few groups it names. Texts are distinct from group to group."""

    def __init__(self, at, starts, codes, reason_of) -> None:
        self.at = at
        self.starts = starts
        self.codes = codes
        self._reason_of = reason_of
        self._made: dict[int, Removed] = {}

    @property
    def sizes(self):
        ends = list(self.starts[1:].tolist()) + [len(self.at)]
        return [e - s for s, e in zip(self.starts.tolist(), ends)]

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k: int) -> Removed:
        g = self._made.get(k)
        if g is None:
            s = int(self.starts[k])
            e = int(self.starts[k + 1]) if k + 1 < len(self.starts) else len(self.at)
            code = int(self.codes[k])
            g = self._made[k] = Removed(self.at[s:e], make=lambda: self._reason_of(code), distinct_text=True)
        return g

    def __iter__(self):
        return (self[k] for k in range(len(self)))


def group_sizes(groups) -> list[int]:
    return groups.sizes if isinstance(groups, Groups) else [len(g.at) for g in groups]


def removed_positions(groups):
    """Every removed position, group by group (a numpy array)."""
    import numpy as np

    if isinstance(groups, Groups):
        return groups.at
    return np.concatenate([g.at for g in groups]) if len(groups) else np.zeros(0, dtype=np.int64)
