"""What the node has said about a bound pod (node-start.md): the kubelet's admission rejection in the pod's status,
its container states, the kubelet's and the attach/detach controller's events on the pod, and the node's Ready
condition. Read once per bundle; nothing here decides a cause word. The kubelet's reasons and the predicates on a
pod's status are model/pod_status.py's (asked of every pod while pods.json is read).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.validation import Loaded
from analyzer.model.events import event_time
from analyzer.model.pod_status import NODE_COMPONENTS, is_node_event_reason


@dataclass(frozen=True, slots=True, kw_only=True)
class PodEvent:
    reason: str
    message: str
    time: str  # normalised (events.event_time); "" unknown
    count: int
    component: str
    type: str

    def as_data(self) -> dict:
        return {"reason": self.reason, "message": self.message, "time": self.time or None, "count": self.count,
                "component": self.component, "type": self.type}


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeCondition:
    ready: str  # "True", "False", "Unknown", or "" when the node reports no Ready condition
    reason: str = ""
    message: str = ""


@dataclass(kw_only=True)
class NodeStart:
    """Per pod, the node's events (newest first); per node, its Ready condition."""

    events: dict[tuple[str, str], list[PodEvent]] = field(default_factory=dict)
    ready: dict[str, NodeCondition] = field(default_factory=dict)
    events_read: bool = False  # events.json was in the bundle

    def of(self, namespace: str, name: str) -> list[PodEvent]:
        return self.events.get((namespace, name), [])


def _component(e: dict) -> str:
    source = e.get("source") if isinstance(e.get("source"), dict) else {}
    return str(e.get("reportingComponent") or source.get("component") or "")


def _count(e: dict) -> int:
    series = e.get("series")
    if isinstance(series, dict) and isinstance(series.get("count"), int):
        return series["count"]
    return e["count"] if isinstance(e.get("count"), int) and e["count"] > 0 else 1


def read_node_start(loaded: Loaded) -> NodeStart:
    out = NodeStart()
    doc = loaded.documents.get("events")
    if doc is not None:
        out.events_read = True
        for _, e in doc.valid_items():
            if not is_node_event_reason(e.get("reason")):
                continue
            io = e.get("involvedObject") or {}
            component = _component(e)
            if io.get("kind") != "Pod" or component not in NODE_COMPONENTS:
                continue
            key = (str(io.get("namespace") or ""), str(io.get("name") or ""))
            out.events.setdefault(key, []).append(PodEvent(
                reason=str(e.get("reason")), message=str(e.get("message") or ""), time=event_time(e), count=_count(e),
                component=component, type=str(e.get("type") or "")))
        for events in out.events.values():
            events.sort(key=lambda ev: ev.time, reverse=True)
    nodes = loaded.documents.get("nodes")
    if nodes is not None:
        for _, item in nodes.valid_items():
            conditions = (item.get("status") or {}).get("conditions") or ()
            ready = next((c for c in conditions if isinstance(c, dict) and c.get("type") == "Ready"), None)
            out.ready[item["metadata"]["name"]] = (
                NodeCondition(ready=str(ready.get("status") or ""), reason=str(ready.get("reason") or ""),
                              message=str(ready.get("message") or "")) if ready else NodeCondition(ready=""))
    return out
