"""What the node has said about a bound pod (node-start.md): the kubelet's admission rejection in the pod's status,
its container states, the kubelet's and the attach/detach controller's events on the pod, and the node's Ready
condition. Read once per bundle; nothing here decides a cause word.

The kubelet's texts and reasons quoted here are its own:
  - pkg/kubelet/lifecycle/predicate.go: admission reasons (UnexpectedAdmissionError, OutOf<resource>, the
    predicate names NodeAffinity, NodeName, NodePorts, TaintToleration, ...); `Pod was rejected: <message>` is
    what kubelet.rejectPod writes in status.message, and its event carries the message alone;
  - pkg/kubelet/images, pkg/kubelet/kuberuntime: container waiting reasons and the events `Failed`, `BackOff`,
    `InspectFailed`, `ErrImageNeverPull`, `FailedCreatePodSandBox`, `FailedPrepareDynamicResources`;
  - pkg/kubelet/volumemanager (FailedMount) and pkg/controller/volume/attachdetach (FailedAttachVolume).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.validation import Loaded
from analyzer.model.events import event_time

# lifecycle/predicate.go and the kubelet's other admit handlers: a pod refused before any container ran.
ADMISSION_REASONS: frozenset[str] = frozenset({
    "UnexpectedAdmissionError", "UnexpectedPredicateFailureType", "UnknownReason", "InvalidNodeInfo",
    "PodOSSelectorNodeLabelDoesNotMatch", "PodOSNotSupported", "InitContainerRestartPolicyForbidden",
    "SupplementalGroupsPolicyNotSupported", "NodeAffinity", "NodeName", "NodePorts", "TaintToleration",
    "SysctlForbidden", "NodeShutdown",
})
OUT_OF = "OutOf"  # predicate.go InsufficientResourcePrefix: OutOfcpu, OutOfnvidia.com/gpu, ...

# Container waiting reasons (images/types.go, kuberuntime).
IMAGE_REASONS: tuple[str, ...] = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                                  "ImageInspectError", "RegistryUnavailable")
RUNTIME_WAITING: tuple[str, ...] = ("CreateContainerError", "RunContainerError", "PreCreateHookError",
                                    "PreStartHookError", "PostStartHookError")
CONFIG_WAITING = "CreateContainerConfigError"  # a missing ConfigMap/Secret key: node-side, named
CRASH_LOOP = "CrashLoopBackOff"
START_ERROR = ("StartError", "ContainerCannotRun")  # terminated without ever starting (exit 128)

# Pod events the node writes (kubelet, attach/detach controller), read for rows 7-10.
IMAGE_EVENTS: tuple[str, ...] = ("Failed", "BackOff", "InspectFailed", "ErrImageNeverPull")
VOLUME_EVENTS: tuple[str, ...] = ("FailedMount", "FailedAttachVolume", "FailedMapVolume")
RUNTIME_EVENTS: tuple[str, ...] = ("FailedCreatePodSandBox", "FailedPrepareDynamicResources")
NODE_EVENT_REASONS: tuple[str, ...] = IMAGE_EVENTS + VOLUME_EVENTS + RUNTIME_EVENTS + tuple(sorted(ADMISSION_REASONS))
NODE_COMPONENTS: tuple[str, ...] = ("kubelet", "attachdetach-controller")


def is_node_event_reason(reason: object) -> bool:
    """The streaming reader keeps an event when this holds (pipeline.py): the reasons above and OutOf<resource>."""
    return isinstance(reason, str) and (reason in _REASONS or reason.startswith(OUT_OF))


_REASONS = frozenset(NODE_EVENT_REASONS)


def is_admission_reason(reason: object) -> bool:
    return isinstance(reason, str) and (reason in ADMISSION_REASONS or (reason.startswith(OUT_OF) and len(reason) > 5))


def container_statuses(status: dict) -> list[dict]:
    out = []
    for key in ("initContainerStatuses", "containerStatuses"):
        value = status.get(key)
        if isinstance(value, list):
            out.extend(cs for cs in value if isinstance(cs, dict))
    return out


def _terminated(cs: dict) -> list[dict]:
    out = []
    for key in ("state", "lastState"):
        part = cs.get(key)
        t = part.get("terminated") if isinstance(part, dict) else None
        if isinstance(t, dict):
            out.append(t)
    return out


def ever_ran(status: dict) -> bool:
    """Some container ran: it is running, says started, or ended other than by failing to start."""
    for cs in container_statuses(status):
        state = cs.get("state") if isinstance(cs.get("state"), dict) else {}
        if state.get("running") or cs.get("started") is True:
            return True
        if any(t.get("reason") not in START_ERROR for t in _terminated(cs)):
            return True
    return False


def kubelet_rejected(status: dict) -> bool:
    """Phase Failed with a kubelet admission reason and no container that ever ran (causes.md, targets)."""
    return status.get("phase") == "Failed" and is_admission_reason(status.get("reason")) and not ever_ran(status)


def never_started(status: dict) -> bool:
    """Phase Running only because every container is restarting after failing to start (kubelet getPhase counts a
    waiting container with a last termination as stopped; restartPolicy Always then says Running): no container
    has ever started, so the pod is one that will not start."""
    if status.get("phase") != "Running":
        return False
    first = status.get("containerStatuses")
    first = first[0] if isinstance(first, list) and first else None
    state = first.get("state") if isinstance(first, dict) else None
    if isinstance(first, dict) and (first.get("started") is True or (isinstance(state, dict) and state.get("running"))):
        return False  # the common case, asked of every running pod: a container runs
    statuses = container_statuses(status)
    return bool(statuses) and not ever_ran(status) and any(_terminated(cs) for cs in statuses)


def is_bound_target(node: str, status: dict) -> bool:
    """Beyond Pending and unbound pods: a bound pod the kubelet rejected, or one whose containers never started."""
    if not node:
        return False
    return never_started(status) if status.get("phase") == "Running" else kubelet_rejected(status)


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
