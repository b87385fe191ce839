"""What the autoscalers say and hold (autoscalers.md), built once per bundle: cluster-autoscaler's and Karpenter's
events on each pod, cluster-autoscaler's status (its node groups), Karpenter's NodePools and NodeClaims, and the
ProvisioningRequests. Nothing here decides a word (rules/autoscalers.py does).

Texts and fields, as the components write them:
- cluster-autoscaler 1.36: `TriggeredScaleUp` / `NotTriggerScaleUp` on the pod
  (processors/status/eventing_scale_up_processor.go), `ScaleUpFailed` on the status ConfigMap
  (clusterstate/clusterstate.go), the status YAML (clusterstate/api/types.go: nodeGroups[].health
  {cloudProviderTarget, minSize, maxSize, nodeCounts}, scaleUp {status, backoffInfo}).
- Karpenter v1.14: `Nominated` ("Pod should schedule on: nodeclaim/<name>") and `FailedScheduling`
  ("Failed to schedule pod, <err>") from karpenter (pkg/controllers/provisioning/scheduling/events.go);
  NodeClaim conditions Launched, Registered, Initialized (pkg/controllers/nodeclaim/lifecycle/*.go). A launch that
  failed (lifecycle/launch.go): on insufficient capacity (a cloud quota counts) a Warning `InsufficientCapacityError`
  event on the NodeClaim, "NodeClaim <name> event: <cloud error>" (lifecycle/events.go), and the NodeClaim deleted;
  any other error leaves `Launched` Unknown with the error's reason (`LaunchFailed`, or the cloud's own) and message.
- cluster-autoscaler's failed scale-ups on its status ConfigMap: `ScaleUpFailed` (above) and `FailedToScaleUpGroup`
  "Scale-up failed for group %s: %v" (core/scaleup/orchestrator/executor.go); GKE's managed autoscaler writes
  `FailedScaleUp` on the pod itself.
- ProvisioningRequest (autoscaling.x-k8s.io/v1): conditions Accepted, Provisioned, Failed; a pod names the one it
  consumes by annotation (cluster-autoscaler apis/provisioningrequest, Kueue's provisioning admission check).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from analyzer.bundle.catalog import CA_STATUS, CA_STATUS_CONFIGMAP
from analyzer.bundle.validation import Loaded, Violation
from analyzer.model import quantity
from analyzer.model.events import NOT_SCHEDULERS, component_of, event_time, instant
from analyzer.model.quantity import QuantityError
from analyzer.bundle.safe_yaml import NotYaml, UnsafeYaml, load_all

AUTOSCALERS = NOT_SCHEDULERS
KARPENTER, CA = AUTOSCALERS
# The events read here (FailedScheduling is kept for the scheduler already; Karpenter writes it too).
EVENT_REASONS: tuple[str, ...] = ("TriggeredScaleUp", "NotTriggerScaleUp", "Nominated", "ScaleUpFailed",
                                  "FailedToScaleUpGroup", "FailedScaleUp", "InsufficientCapacityError")
GROUP_FAILURES = ("ScaleUpFailed", "FailedToScaleUpGroup")  # cluster-autoscaler's, on its status ConfigMap
# A new NodeClaim's Launched condition before its first launch attempt says Unknown with no reason, or the status
# library's initial one; any other reason on Launched Unknown is a launch error (lifecycle/launch.go).
_NOT_YET_LAUNCHED = frozenset({"", "AwaitingReconciliation"})
MAX_STATUS_BYTES = 1 << 20  # a ConfigMap's data cannot exceed 1 MiB (the API server's limit)


@dataclass(frozen=True, kw_only=True)
class Said:
    """One autoscaler event on a pod."""

    component: str  # cluster-autoscaler | karpenter
    reason: str
    message: str
    time: str  # normalised UTC instant (model/events.event_time); "" when the event has none
    source: str  # "events.json $.items[37]"


@dataclass(frozen=True, kw_only=True)
class Group:
    """One node group in cluster-autoscaler's status."""

    name: str
    min_size: int | None
    max_size: int | None
    target: int | None  # health.cloudProviderTarget
    registered: int | None
    ready: int | None
    unregistered: int | None
    scale_up: str  # InProgress | NoActivity | Backoff | "" (clusterstate/api/types.go)
    backoff: str  # "errorCode: errorMessage" while in Backoff
    since: str  # scaleUp.lastTransitionTime

    @property
    def at_max(self) -> bool:
        return self.target is not None and self.max_size is not None and self.target >= self.max_size

    @property
    def in_flight(self) -> bool:
        """A scale-up not finished: InProgress, or a target above the registered nodes."""
        ahead = self.target is not None and self.registered is not None and self.target > self.registered
        return self.scale_up == "InProgress" or ahead

    def as_data(self) -> dict:
        return {"name": self.name, "min": self.min_size, "max": self.max_size, "target": self.target,
                "registered": self.registered, "unregistered": self.unregistered, "ready": self.ready,
                "scale_up": self.scale_up,
                **({"backoff": self.backoff} if self.backoff else {})}


@dataclass(frozen=True, kw_only=True)
class CaStatus:
    groups: dict[str, Group]
    time: str  # the status's own `time`
    source: str  # file and JSON path of the status text


@dataclass(frozen=True, kw_only=True)
class Condition:
    status: str
    reason: str
    message: str
    since: str


@dataclass(frozen=True, kw_only=True)
class NodePool:
    name: str
    limits: dict[str, int]  # scheduler units (model/quantity.py), as the pod's requests
    usage: dict[str, int]  # status.resources
    source: str

    def over(self, requests: dict[str, int]) -> list[str]:
        """The limited resources the pod's request would take past the limit (Karpenter: an instance type
        exceeding what remains is filtered out, scheduler.go filterByRemainingResources)."""
        out = []
        for r, limit in sorted(self.limits.items()):
            asked = 1 if r == "nodes" else requests.get(r, 0)
            if asked and self.usage.get(r, 0) + asked > limit:
                out.append(r)
        return out


@dataclass(frozen=True, kw_only=True)
class NodeClaim:
    name: str
    nodepool: str
    created: str
    node_name: str
    instance_type: str
    conditions: dict[str, Condition]
    source: str

    def _is(self, kind: str, status: str) -> bool:
        c = self.conditions.get(kind)
        return c is not None and c.status == status

    @property
    def launch_failed(self) -> Condition | None:
        """Launched False (a cloud provider's own), or Unknown with an error's reason: the node did not come."""
        c = self.conditions.get("Launched")
        if c is None or c.status == "True":
            return None
        return c if c.status == "False" or c.reason not in _NOT_YET_LAUNCHED else None

    @property
    def arrived(self) -> bool:
        return self._is("Initialized", "True") or self._is("Ready", "True")

    @property
    def gpu_missing(self) -> Condition | None:
        """The node registered, but a resource it was launched for never appeared (lifecycle/initialization.go:
        `Resource %q was requested but not registered`)."""
        c = self.conditions.get("Initialized")
        return c if c is not None and c.status != "True" and c.reason == "ResourceNotRegistered" else None

    @property
    def state(self) -> str:
        for kind in ("Launched", "Registered", "Initialized"):
            c = self.conditions.get(kind)
            if c is None or c.status != "True":
                why = f" ({c.reason}: {c.message})" if c is not None and (c.reason or c.message) else ""
                return f"{kind} {c.status if c else 'not yet'}{why}"
        return "Ready" if self.arrived else "Initialized"


@dataclass(frozen=True, kw_only=True)
class ProvisioningRequest:
    namespace: str
    name: str
    class_name: str
    conditions: dict[str, Condition]
    source: str


@dataclass(frozen=True, kw_only=True)
class Autoscalers:
    said: dict[tuple[str, str], tuple[Said, ...]]  # per pod, oldest first
    scheduler_failed: dict[tuple[str, str], str]  # per pod, its latest FailedScheduling from a scheduler
    group_events: tuple[Said, ...]  # ScaleUpFailed / FailedToScaleUpGroup on the status ConfigMap, oldest first
    ca: CaStatus | None
    nodepools: dict[str, NodePool] | None  # None: not in the bundle (not served, not collected)
    nodeclaims: dict[str, NodeClaim] | None
    provreqs: dict[tuple[str, str], ProvisioningRequest] | None
    collected: str | None  # the bundle's collection time (manifest.json), normalised
    present: tuple[str, ...]  # the autoscalers the bundle shows
    findings: list[Violation] = field(default_factory=list)
    # Karpenter's InsufficientCapacityError events per NodeClaim name, oldest first (the NodeClaim itself is deleted)
    claim_events: dict[str, tuple[Said, ...]] = field(default_factory=dict)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _conditions(obj: dict) -> dict[str, Condition]:
    out = {}
    for c in _dict(obj.get("status")).get("conditions") or ():
        out[c["type"]] = Condition(status=c["status"], reason=_str(c.get("reason")), message=_str(c.get("message")),
                                   since=_str(c.get("lastTransitionTime")))
    return out


def _units(resources: object, file: str, path: str, findings: list[Violation]) -> dict[str, int]:
    out = {}
    for name, value in _dict(resources).items():
        try:
            out[name] = quantity.scheduler_units(name, value)
        except QuantityError as exc:
            findings.append(Violation(file=file, path=f"{path}[{name!r}]", expected="a quantity the autoscaler rule can use", found=str(exc)))
    return out


def _group(g: dict) -> Group | None:
    name = g.get("name")
    if not isinstance(name, str) or not name:
        return None
    health, up = _dict(g.get("health")), _dict(g.get("scaleUp"))
    counts = _dict(health.get("nodeCounts"))
    registered = _dict(counts.get("registered"))
    info = _dict(up.get("backoffInfo"))
    backoff = ": ".join(x for x in (_str(info.get("errorCode")), _str(info.get("errorMessage"))) if x)
    return Group(name=name, min_size=_int(health.get("minSize")), max_size=_int(health.get("maxSize")),
                 target=_int(health.get("cloudProviderTarget")), registered=_int(registered.get("total")),
                 ready=_int(registered.get("ready")), unregistered=_int(counts.get("unregistered")),
                 scale_up=_str(up.get("status")), backoff=backoff, since=_str(up.get("lastTransitionTime")))


def _ca_status(loaded: Loaded, findings: list[Violation]) -> CaStatus | None:
    """The status text, parsed bounded: a YAML bomb is a finding naming the file and path, never a hang."""
    doc = loaded.documents.get(CA_STATUS_CONFIGMAP.name)
    if doc is None:
        return None
    for i, item in doc.valid_items():
        meta = item["metadata"]
        if (meta.get("namespace"), meta.get("name")) != CA_STATUS:
            continue  # only the one ConfigMap is read, whatever else a hand-made file holds
        path = f"{doc.item_path(i)}.data.status"
        text = _dict(item.get("data")).get("status")
        if not isinstance(text, str):
            findings.append(Violation(file=doc.file, path=path, expected="cluster-autoscaler's status (YAML text)", found="missing"))
            return None
        if len(text.encode("utf-8", "surrogatepass")) > MAX_STATUS_BYTES:
            findings.append(Violation(file=doc.file, path=path, expected=f"at most {MAX_STATUS_BYTES} bytes (a ConfigMap's limit)",
                                       found=f"{len(text)} characters"))
            return None
        try:
            docs = load_all(text)
        except (NotYaml, UnsafeYaml) as exc:
            found = f"not YAML: {exc}" if isinstance(exc, NotYaml) else f"unusable YAML: {exc}"
            findings.append(Violation(file=doc.file, path=path, expected="cluster-autoscaler's status YAML", found=found))
            return None
        status = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else None
        if status is None or not isinstance(status.get("nodeGroups", []), list):
            findings.append(Violation(file=doc.file, path=path, expected="cluster-autoscaler's status YAML (a mapping with nodeGroups)",
                                       found="another shape"))
            return None
        groups = {}
        for g in status.get("nodeGroups") or ():
            group = _group(g) if isinstance(g, dict) else None
            if group is not None:
                groups[group.name] = group
        return CaStatus(groups=groups, time=str(status.get("time") or ""), source=f"{doc.file} {path}")
    return None


def _events(loaded: Loaded) -> tuple[dict, dict, list[Said], set[str], dict[str, tuple[Said, ...]]]:
    doc = loaded.documents.get("events")
    said: dict[tuple[str, str], list[tuple[str, int, Said]]] = {}
    failed: dict[tuple[str, str], str] = {}
    group_events: list[tuple[str, int, Said]] = []
    claim_events: dict[str, list[tuple[str, int, Said]]] = {}
    seen: set[str] = set()
    if doc is None:
        return {}, {}, [], seen, {}
    for i, e in doc.valid_items():
        io = _dict(e.get("involvedObject"))
        component, reason, t = component_of(e), e.get("reason"), event_time(e)
        if component in AUTOSCALERS:
            seen.add(component)
        key = (_str(io.get("namespace")), _str(io.get("name")))
        if io.get("kind") == "Pod" and reason == "FailedScheduling" and component not in AUTOSCALERS:
            if t > failed.get(key, ""):
                failed[key] = t
            continue
        if component not in AUTOSCALERS or reason not in EVENT_REASONS + ("FailedScheduling",):
            continue
        s = Said(component=component, reason=str(reason), message=_str(e.get("message")), time=t,
                 source=f"{doc.file} {doc.item_path(i)}")
        if io.get("kind") == "Pod":
            said.setdefault(key, []).append((t, i, s))
        elif reason in GROUP_FAILURES:
            group_events.append((t, i, s))
        elif reason == "InsufficientCapacityError" and io.get("kind") == "NodeClaim":
            claim_events.setdefault(key[1], []).append((t, i, s))
    ordered = {k: tuple(s for _, _, s in sorted(v)) for k, v in said.items()}
    claims = {k: tuple(s for _, _, s in sorted(v)) for k, v in claim_events.items()}
    return ordered, failed, [s for _, _, s in sorted(group_events)], seen, claims


def _collected(loaded: Loaded) -> str | None:
    manifest = loaded.bundle.manifest or {}
    for key in ("completed", "created"):
        t = instant(manifest.get(key))
        if t:
            return t
    return None


def build_autoscalers(loaded: Loaded) -> Autoscalers:
    findings: list[Violation] = []
    said, failed, group_events, seen, claim_events = _events(loaded)
    ca = _ca_status(loaded, findings)
    pools = claims = reqs = None
    if (doc := loaded.documents.get("nodepools.karpenter.sh")) is not None:
        pools = {}
        for i, item in doc.valid_items():
            path = doc.item_path(i)
            pools[item["metadata"]["name"]] = NodePool(
                name=item["metadata"]["name"], source=f"{doc.file} {path}",
                limits=_units(_dict(item["spec"]).get("limits"), doc.file, f"{path}.spec.limits", findings),
                usage=_units(_dict(item.get("status")).get("resources"), doc.file, f"{path}.status.resources", findings))
    if (doc := loaded.documents.get("nodeclaims.karpenter.sh")) is not None:
        claims = {}
        for i, item in doc.valid_items():
            meta = item["metadata"]
            labels = _dict(meta.get("labels"))
            claims[meta["name"]] = NodeClaim(
                name=meta["name"], nodepool=_str(labels.get("karpenter.sh/nodepool")),
                created=instant(meta.get("creationTimestamp")),
                node_name=_str(_dict(item.get("status")).get("nodeName")),
                instance_type=_str(labels.get("node.kubernetes.io/instance-type")),
                conditions=_conditions(item), source=f"{doc.file} {doc.item_path(i)}")
    if (doc := loaded.documents.get("provisioningrequests.autoscaling.x-k8s.io")) is not None:
        reqs = {}
        for i, item in doc.valid_items():
            meta = item["metadata"]
            reqs[(meta["namespace"], meta["name"])] = ProvisioningRequest(
                namespace=meta["namespace"], name=meta["name"], conditions=_conditions(item),
                class_name=_str(_dict(item["spec"]).get("provisioningClassName")),
                source=f"{doc.file} {doc.item_path(i)}")
    present = [c for c in AUTOSCALERS if c in seen or (c == CA and (ca is not None or reqs))
               or (c == KARPENTER and (pools or claims))]
    return Autoscalers(said=said, scheduler_failed=failed, group_events=tuple(group_events), ca=ca, nodepools=pools,
                       nodeclaims=claims, provreqs=reqs, collected=_collected(loaded), present=tuple(present),
                       findings=findings, claim_events=claim_events)


def seconds_between(earlier: str, later: str) -> int | None:
    """Whole seconds from one normalised instant to another (None when either is unknown)."""
    if not earlier or not later:
        return None
    a = datetime.fromisoformat(earlier)  # normalised: UTC, "Z"
    b = datetime.fromisoformat(later)
    return int((b - a).total_seconds())
