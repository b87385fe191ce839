"""A node's condition taints and the conditions behind them (causes.md `node-unhealthy`, node-start.md).

The node lifecycle controller and the kubelet taint a node for a condition: `not-ready` (Ready False) and
`unreachable` (Ready Unknown) by the controller (pkg/controller/nodelifecycle, NoSchedule then NoExecute);
`memory-pressure`, `disk-pressure`, `pid-pressure` by the kubelet's conditions (NoSchedule; TaintNodesByCondition);
`network-unavailable` while the network plugin says so; `out-of-service` by an operator after a non-graceful
shutdown (no condition behind it). The keys are k8s.io/api/core/v1 well_known_taints.go. A toleration is not the fix
for them: the node's condition is, so the evidence names the condition with its reason, message and since when.
Node conditions have no schema of their own in the bundle: every field is read defensively.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model.matching import Taint

OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
# taint key -> the condition type behind it ("" where no condition is: the operator's out-of-service)
CONDITION_TAINTS: dict[str, str] = {
    "node.kubernetes.io/not-ready": "Ready",
    "node.kubernetes.io/unreachable": "Ready",
    "node.kubernetes.io/memory-pressure": "MemoryPressure",
    "node.kubernetes.io/disk-pressure": "DiskPressure",
    "node.kubernetes.io/pid-pressure": "PIDPressure",
    "node.kubernetes.io/network-unavailable": "NetworkUnavailable",
    OUT_OF_SERVICE: "",
}
SAID = 500  # characters of a condition's message in a sentence (the kubelet's are one line; a hostile one is not)
# A condition is adverse when its status is this one ("Ready" the other way round: anything but True).
_ADVERSE_WHEN_TRUE = frozenset({"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"})


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeConditionSeen:
    """One adverse condition in a node's status.conditions, as written ("" where a field is absent)."""

    type: str
    status: str
    reason: str
    message: str
    since: str  # lastTransitionTime

    def says(self) -> str:
        """`MemoryPressure=True since 2026-12-01T10:00:00Z (KubeletHasInsufficientMemory: "…")`."""
        since = f" since {self.since}" if self.since else " (since when: no lastTransitionTime)"
        message = self.message if len(self.message) <= SAID else self.message[:SAID] + "…"  # as_data keeps it whole
        why = ": ".join(x for x in (self.reason, f'"{message}"' if message else "") if x)
        return f"{self.type}={self.status or '?'}{since}" + (f" ({why})" if why else "")

    def as_data(self) -> dict:
        return {"type": self.type, "status": self.status, "reason": self.reason or None,
                "message": self.message or None, "since": self.since or None}


def is_condition_taint(taint: Taint) -> bool:
    return taint.key in CONDITION_TAINTS


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def adverse_conditions(status: object) -> tuple[NodeConditionSeen, ...]:
    """The node's conditions that say it is unwell: Ready not True, a pressure or NetworkUnavailable True."""
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return ()
    out = []
    for c in conditions:
        if not isinstance(c, dict):
            continue
        kind, state = _text(c.get("type")), _text(c.get("status"))
        if (kind == "Ready" and state != "True") or (kind in _ADVERSE_WHEN_TRUE and state == "True"):
            out.append(NodeConditionSeen(type=kind, status=state, reason=_text(c.get("reason")),
                                         message=_text(c.get("message")), since=_text(c.get("lastTransitionTime"))))
    return tuple(out)


def behind(taint: Taint, conditions: tuple[NodeConditionSeen, ...]) -> str:
    """What a condition taint stands for on this node, in words: its condition, or why none is named."""
    kind = CONDITION_TAINTS.get(taint.key)
    if kind == "":
        return f"{taint} (set by an operator: the node is out of service)"
    found = next((c for c in conditions if c.type == kind), None)
    if found is not None:
        return f"{taint} for {found.says()}"
    return f"{taint} (its condition {kind} is not adverse in status.conditions: the taint outlived it, or the " \
           f"status is stale)"
