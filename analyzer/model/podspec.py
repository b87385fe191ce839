"""What a pod spec asks for: effective requests and limits, quota usage, GPU intent, unmodelled needs.

Effective request (causes.md, Kubernetes resourcehelper.PodRequests): the
larger of (a) the sum over app containers plus restartable init containers
(sidecars, `restartPolicy: Always`) and (b) for each ordinary init container
its own request plus the sidecars started before it; then plus spec.overhead.
A container's request for a resource defaults to its limit when only the
limit is given (API defaulting; needed for manifests that never reached the
API server, and the rule for extended resources).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, TypeVar

from analyzer.kube import DEFAULT_SCHEDULER
from analyzer.model import quantity
from analyzer.model.accelerators import NO_GPU_VISIBLE_DEVICES, REDACTION_MARKER, AcceleratorConfig, is_extended
from analyzer.model.quantity import QuantityError

T = TypeVar("T", int, Fraction)


def container_requests(container: dict, convert: Callable[[str, object], T]) -> dict[str, T]:
    res = container.get("resources") or {}
    requests = res.get("requests") or {}
    limits = res.get("limits") or {}
    out: dict[str, T] = {}
    for name, value in limits.items():
        if name not in requests:
            out[name] = convert(name, value)
    for name, value in requests.items():
        out[name] = convert(name, value)
    return out


def container_limits(container: dict, convert: Callable[[str, object], T]) -> dict[str, T]:
    limits = (container.get("resources") or {}).get("limits") or {}
    return {name: convert(name, value) for name, value in limits.items()}


def _add(into: dict, more: dict) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _aggregate(spec: dict, per_container: Callable[[dict], dict]) -> dict:
    """Containers' aggregate: max(app + sidecars, each init container + the sidecars started before it)."""
    total: dict = {}
    for c in spec.get("containers") or ():
        _add(total, per_container(c))
    init = spec.get("initContainers")
    if init:
        sidecars: dict = {}
        init_max: dict = {}
        for c in init:
            r = per_container(c)
            if c.get("restartPolicy") == "Always":
                _add(total, r)
                _add(sidecars, r)
                current = dict(sidecars)
            else:
                current = dict(sidecars)
                _add(current, r)
            for k, v in current.items():
                if v > init_max.get(k, 0):
                    init_max[k] = v
        for k, v in init_max.items():
            if v > total.get(k, 0):
                total[k] = v
    return total


# Pod-level resources (spec.resources, KEP-2837, on by default since v1.34): where set they replace
# the containers' aggregate, for these resources only.
POD_LEVEL_RESOURCES = ("cpu", "memory")


def _pod_level_supported(name: str) -> bool:
    return name in POD_LEVEL_RESOURCES or name.startswith("hugepages-")


def _pod_requests(spec: dict, per_container: Callable[[dict], dict], convert: Callable[[str, object], T]) -> dict[str, T]:
    """resourcehelper.PodRequests: aggregate, pod-level requests over it, then plus spec.overhead."""
    total = _aggregate(spec, per_container)
    res = spec.get("resources")
    if isinstance(res, dict):
        requests = res.get("requests") or {}
        limits = res.get("limits") or {}
        for name in set(requests) | set(limits):
            if not _pod_level_supported(name):
                continue
            if name in requests:
                total[name] = convert(name, requests[name])
            elif name not in total:
                # Defaulting: a pod-level limit alone becomes the request only when no container states one.
                total[name] = convert(name, limits[name])
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + convert(name, value)
    return total


def _container_nano(container: dict) -> dict[str, int]:
    """One container's requests in nano-units; an extended resource must be a whole number (API validation)."""
    res = container.get("resources")
    if not res:
        return {}
    out = container_requests(container, quantity.nano)
    for name, value in out.items():
        if value % quantity.NANO and is_extended(name):
            raise QuantityError(f"{name}: not a whole number (extended resources are integers)")
    return out


def effective_requests(spec: dict) -> dict[str, int]:
    """Scheduler units (cpu in millicores, the rest in whole units), rounded up once for the whole pod,
    as Kubernetes sums exact quantities and rounds the total (two containers of 0.0005 cpu ask 1m, not 2m)."""
    total = _pod_requests(spec, _container_nano, quantity.nano)
    to_units = quantity.nano_to_units
    return {name: to_units(name, value) for name, value in total.items()}


def exact_requests(spec: dict) -> dict[str, Fraction]:
    return _pod_requests(spec, lambda c: container_requests(c, _exact), _exact)


def exact_limits(spec: dict) -> dict[str, Fraction]:
    """resourcehelper.PodLimits: aggregate, pod-level limits over it, overhead added only where a limit exists."""
    total = _aggregate(spec, lambda c: container_limits(c, _exact))
    res = spec.get("resources")
    if isinstance(res, dict):
        for name, value in (res.get("limits") or {}).items():
            if _pod_level_supported(name):
                total[name] = _exact(name, value)
    for name, value in (spec.get("overhead") or {}).items():
        if name in total:
            total[name] += _exact(name, value)
    return total


def _exact(_name: str, value: object) -> Fraction:
    return quantity.parse(value)


def names_claims(spec: dict, status: dict) -> bool:
    """Does the pod name a ResourceClaim (spec.resourceClaims, or the claim made for its extended resources)?
    model/dra/reading.pod_claims reads them; this answers without the DRA model."""
    refs = spec.get("resourceClaims")
    if isinstance(refs, list) and any(isinstance(r, dict) for r in refs):
        return True
    ext = status.get("extendedResourceClaimStatus")
    return isinstance(ext, dict) and bool(ext.get("resourceClaimName"))


def all_containers(spec: dict) -> list[dict]:
    return list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())


def accelerator_requests(spec: dict, config: AcceleratorConfig) -> dict[str, int]:
    """Accelerator resources any container or init container asks for (requests or limits), > 0.
    (A resource claim is the other way to ask for one: rules/intent.py looks at spec.resourceClaims.)"""
    out: dict[str, int] = {}
    for c in all_containers(spec):
        for name, units in container_requests(c, quantity.scheduler_units).items():
            if units > 0 and config.is_accelerator(name):
                out[name] = max(out.get(name, 0), units)
    return out


def extended_requested(requests: dict[str, int]) -> list[str]:
    """Extended resources (domain-prefixed, outside kubernetes.io) the pod requests (> 0)."""
    return sorted(name for name, units in requests.items() if units > 0 and is_extended(name))


def gpu_intent(spec: dict, runtimeclasses: dict[str, dict] | None, config: AcceleratorConfig,
               key: tuple[str, str] | None = None) -> str | None:
    """The first GPU-intent signal the pod shows (causes.md, rule 3), as a sentence, or None."""
    if key is not None and key in config.gpu_pods:
        return "declared a GPU pod with --gpu-pod"
    rc = spec.get("runtimeClassName")
    if rc:
        handler = str(((runtimeclasses or {}).get(rc) or {}).get("handler") or "")
        if "nvidia" in rc.lower() or "nvidia" in handler.lower():
            return f"spec.runtimeClassName {rc!r}" + (f" (handler {handler!r})" if handler else "")
    for k, v in (spec.get("nodeSelector") or {}).items():
        # A node's name is not a declaration of intent ("gpu-ok" is just a hostname).
        value = "" if k in NAME_LABELS else str(v)
        if config.mentions_accelerator(k) or config.mentions_accelerator(value):
            return f"spec.nodeSelector {k}={v}"
    for term in required_terms(spec):
        for expr in (term.get("matchExpressions") or ()):
            if expr.get("operator") not in ("In", "Exists", "Gt", "Lt"):
                continue  # NotIn / DoesNotExist keep a pod *off* accelerator nodes
            key = str(expr.get("key", ""))
            texts = [key] + ([] if key in NAME_LABELS else [str(x) for x in expr.get("values") or ()])
            if any(config.mentions_accelerator(t) for t in texts):
                return f"required node affinity on {expr.get('key')}"
    for t in spec.get("tolerations") or ():
        k = t.get("key") or ""
        if k and config.is_accelerator(k):
            return f"a toleration for {k}"
    for c in all_containers(spec):
        for env in c.get("env") or ():
            if env.get("name") == "NVIDIA_VISIBLE_DEVICES":
                value = env.get("value")
                if isinstance(value, str) and value.strip().lower() not in NO_GPU_VISIBLE_DEVICES and value != REDACTION_MARKER:
                    return f"container {c.get('name')!r} sets NVIDIA_VISIBLE_DEVICES={value}"
    return None


NAME_LABELS = ("kubernetes.io/hostname",)

# What makes a pod part of the GPU stack rather than a user of it: the kubelet's device plugin directory
# (kubernetes pkg/kubelet/apis/deviceplugin/v1beta1/constants.go, DevicePluginPath) and its plugin registry (a DRA
# driver's kubelet plugin registers there), and the GPU operator's per-operand node selector
# (NVIDIA/gpu-operator: nvidia.com/gpu.deploy.<operand>=true).
_STACK_PATHS = {"/var/lib/kubelet/device-plugins": "a device plugin (it mounts /var/lib/kubelet/device-plugins)",
                "/var/lib/kubelet/plugins_registry": "a kubelet plugin such as a DRA driver (it mounts "
                                                     "/var/lib/kubelet/plugins_registry)"}
_OPERAND_SELECTOR = "nvidia.com/gpu.deploy."


def gpu_stack(spec: dict) -> str | None:
    """What of the GPU stack the pod is (the device plugin, a DRA driver, a GPU operator operand), or None. Such a
    pod tolerates and selects GPU nodes to serve them: it must never be told to request a GPU."""
    for vol in spec.get("volumes") or ():
        path = str(((vol or {}).get("hostPath") or {}).get("path") or "").rstrip("/") if isinstance(vol, dict) else ""
        if path in _STACK_PATHS:
            return _STACK_PATHS[path]
    for key in (spec.get("nodeSelector") or {}):
        if str(key).startswith(_OPERAND_SELECTOR):
            return f"a GPU operator operand (spec.nodeSelector {key})"
    return None


def required_terms(spec: dict) -> list[dict]:
    na = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    return list(req.get("nodeSelectorTerms") or ())


def unmodelled(spec: dict) -> list[str]:
    """What the pod depends on that the funnel does not model (causes.md, rule 28). Volumes, inter-pod
    affinity, topology spread and host ports are modelled (rules/volumes.py, interpod.py, spread.py, in_use.py)."""
    found: list[str] = []
    name = spec.get("schedulerName")
    if name and name != "default-scheduler":
        found.append(f"schedulerName {name!r} (not the default scheduler)")
    return found


def quota_usage(spec: dict) -> dict[str, Fraction]:
    """What one pod counts toward each quota key (Kubernetes' pod quota evaluator, PodUsageFunc)."""
    req = exact_requests(spec)
    lim = exact_limits(spec)
    usage: dict[str, Fraction] = {"pods": Fraction(1), "count/pods": Fraction(1)}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in req:
            usage[name] = req[name]
            usage[f"requests.{name}"] = req[name]
        if name in lim:
            usage[f"limits.{name}"] = lim[name]
    for name, value in req.items():
        if name.startswith("hugepages-"):
            usage[name] = value  # the pod evaluator charges both hugepages-<size> and requests.hugepages-<size>
            usage[f"requests.{name}"] = value
        elif is_extended(name):
            usage[f"requests.{name}"] = value
    return usage


def qos_best_effort(spec: dict) -> bool:
    for c in all_containers(spec):
        res = c.get("resources") or {}
        for section in ("requests", "limits"):
            if any(k in ("cpu", "memory") for k in (res.get(section) or {})):
                return False
    return True


def priority_of(spec: dict) -> int:
    """corev1.PodPriority: spec.priority, 0 when unset."""
    value = spec.get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def nominated_node(spec: dict, status: dict) -> str:
    """The node a pending, unbound pod of the default scheduler is nominated to ("" when none): only pods in that
    scheduler's queue are in its nominator."""
    name = status.get("nominatedNodeName")
    if not isinstance(name, str) or not name or spec.get("nodeName"):
        return ""
    return name if (spec.get("schedulerName") or DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER else ""
