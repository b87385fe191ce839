"""What a pod's own status and events say the kubelet did with it (node-start.md): refused it at admission, never
started a container, or is pulling, mounting or creating its sandbox. Plain predicates on the pod's dicts, asked of
every pod as pods.json is read (model/pods_index.py), so this module imports nothing; model/node_start.py reads the
events and nodes around them once per bundle.

The kubelet's texts and reasons quoted here are its own:
  - pkg/kubelet/lifecycle/predicate.go: admission reasons (UnexpectedAdmissionError, OutOf<resource>, the
    predicate names NodeAffinity, NodeName, NodePorts, TaintToleration, ...); `Pod was rejected: <message>` is
    what kubelet.rejectPod writes in status.message, and its event carries the message alone;
  - pkg/kubelet/images, pkg/kubelet/kuberuntime: container waiting reasons and the events `Failed`, `BackOff`,
    `InspectFailed`, `ErrImageNeverPull`, `FailedCreatePodSandBox`, `FailedPrepareDynamicResources`;
  - pkg/kubelet/volumemanager (FailedMount) and pkg/controller/volume/attachdetach (FailedAttachVolume).
"""

from __future__ import annotations

# lifecycle/predicate.go and the kubelet's other admit handlers: a pod refused before any container ran.
ADMISSION_REASONS: frozenset[str] = frozenset({
    "UnexpectedAdmissionError", "UnexpectedPredicateFailureType", "UnknownReason", "InvalidNodeInfo",
    "PodOSSelectorNodeLabelDoesNotMatch", "PodOSNotSupported", "InitContainerRestartPolicyForbidden",
    "SupplementalGroupsPolicyNotSupported", "NodeAffinity", "NodeName", "NodePorts", "TaintToleration",
    "SysctlForbidden", "NodeShutdown",
    "TopologyAffinityError",
})
# pkg/kubelet/cm/topologymanager/topology_manager.go ErrorTopologyAffinity; its error text is
# "Resources cannot be allocated with Topology locality" (kubelet.rejectPod: "Pod was rejected: <text>").
TOPOLOGY_AFFINITY = "TopologyAffinityError"
OUT_OF = "OutOf"  # predicate.go InsufficientResourcePrefix: OutOfcpu, OutOfnvidia.com/gpu, ...

# Container waiting reasons (images/types.go, kuberuntime).
IMAGE_REASONS: tuple[str, ...] = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                                  "ImageInspectError", "RegistryUnavailable")
RUNTIME_WAITING: tuple[str, ...] = ("CreateContainerError", "RunContainerError", "PreCreateHookError",
                                    "PreStartHookError", "PostStartHookError")
CONFIG_WAITING = "CreateContainerConfigError"  # a missing ConfigMap/Secret key: node-side, named
CRASH_LOOP = "CrashLoopBackOff"
START_ERROR = ("StartError", "ContainerCannotRun")  # terminated without ever starting (exit 128)

# Pod events the node writes (kubelet, attach/detach controller), read for the node-side words (image-pull, volume-mount, node-runtime, node-side).
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


def failed_start(status: dict, restart_policy: object) -> bool:
    """Ended Failed under restartPolicy Never because no container could start: a container terminated with
    StartError / ContainerCannotRun (kuberuntime: the runtime refused it, exit 128) and none ever ran. A pod that
    ran and then failed is not one that will not start."""
    if status.get("phase") != "Failed" or restart_policy != "Never" or ever_ran(status):
        return False
    return any(t.get("reason") in START_ERROR for cs in container_statuses(status) for t in _terminated(cs))


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


def is_bound_target(node: str, status: dict, restart_policy: object = None) -> bool:
    """Beyond Pending and unbound pods: a bound pod the kubelet rejected, one whose containers never started, or
    one that ended Failed because none could start (causes.md, targets)."""
    if not node:
        return False
    if status.get("phase") == "Running":
        return never_started(status)
    return kubelet_rejected(status) or failed_start(status, restart_policy)
