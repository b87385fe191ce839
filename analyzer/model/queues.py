"""Kueue's objects as slim records, built once per bundle (queues.md).

Nothing here decides a word. Quantities are scheduler units (cpu in millicores), as Kueue counts them.
Kueue serves v1beta2 from v0.15 and v1beta1 before: a ClusterQueue names its cohort `spec.cohortName`
(v1beta2) or `spec.cohort` (v1beta1); a Cohort its parent `spec.parentName` (`spec.parent` in v1alpha1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.catalog import KUEUE
from analyzer.bundle.validation import Document, Loaded
from analyzer.model import quantity
from analyzer.model.matching import Taint, Toleration, tolerations_of
from analyzer.model.podspec import effective_requests
from analyzer.model.quantity import QuantityError

KUEUE_GROUP_PREFIX = "kueue.x-k8s.io/"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
STOPPED = ("Hold", "HoldAndDrain")
WORKLOADS, LOCAL_QUEUES, CLUSTER_QUEUES, FLAVORS, COHORTS, CHECKS, TOPOLOGIES = KUEUE
# The pod set's topology request as annotations on its template (Kueue copies them to spec.podSets[].topologyRequest).
TOPOLOGY_ANNOTATIONS = (("required", "kueue.x-k8s.io/podset-required-topology"),
                        ("preferred", "kueue.x-k8s.io/podset-preferred-topology"),
                        ("unconstrained", "kueue.x-k8s.io/podset-unconstrained-topology"))


@dataclass(frozen=True, kw_only=True)
class FlavorQuota:
    flavor: str
    nominal: dict[str, int]
    borrowing_limit: dict[str, int]  # only the resources that set one
    lending_limit: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuota, ...]


@dataclass(frozen=True, kw_only=True)
class Condition:
    status: str
    reason: str
    message: str


@dataclass(frozen=True, kw_only=True)
class ClusterQueue:
    name: str
    cohort: str  # "" when it is in none
    groups: tuple[ResourceGroup, ...]
    stop_policy: str
    checks: tuple[tuple[str, tuple[str, ...]], ...]  # admission check -> the flavors it applies to (() = all)
    reserved_status: dict[tuple[str, str], int]  # (flavor, resource) -> status.flavorsReservation total
    active: Condition | None
    source: str
    strategy: str = "BestEffortFIFO"  # spec.queueingStrategy: under StrictFIFO the head blocks those behind it

    def group_for(self, resource: str) -> ResourceGroup | None:
        for g in self.groups:
            if resource in g.covered:
                return g
        return None

    def flavor_names(self) -> list[str]:
        return [f.flavor for g in self.groups for f in g.flavors]


@dataclass(frozen=True, kw_only=True)
class Cohort:
    name: str
    parent: str
    groups: tuple[ResourceGroup, ...]


@dataclass(frozen=True, kw_only=True)
class Flavor:
    name: str
    node_labels: dict[str, str]
    taints: tuple[Taint, ...]
    tolerations: tuple[Toleration, ...]
    topology: str = ""  # spec.topologyName: the Topology its nodes are placed by ("" without)


@dataclass(frozen=True, kw_only=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str
    active: Condition | None


@dataclass(frozen=True, kw_only=True)
class PodSet:
    name: str
    count: int
    spec: dict  # the pod template's spec: requests, selector, affinity, tolerations
    requests: dict[str, int]  # one pod's, scheduler units
    topology: tuple[str, str] | None = None  # (mode required / preferred / unconstrained, level node label)


@dataclass(frozen=True, kw_only=True)
class Workload:
    namespace: str
    name: str
    queue: str
    pod_sets: tuple[PodSet, ...]
    owners: tuple[tuple[str, str, str, str], ...]  # (apiVersion, kind, name, uid) of each owner reference
    conditions: dict[str, Condition]
    cluster_queue: str  # status.admission.clusterQueue ("" before quota is reserved)
    usage: dict[tuple[str, str], int]  # (flavor, resource) -> what its admission reserves
    assigned: dict[str, dict[str, str]]  # pod set -> resource -> flavor
    checks: tuple[tuple[str, str, str], ...]  # (name, state, message) of status.admissionChecks
    active: bool
    source: str
    priority: int = 0
    created: str = ""  # metadata.creationTimestamp (RFC 3339 sorts as text)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def holds(self, kind: str) -> bool:
        c = self.conditions.get(kind)
        return c is not None and c.status == "True"

    @property
    def finished(self) -> bool:
        return self.holds("Finished")


@dataclass(kw_only=True)
class Kueue:
    """Everything Kueue left in the bundle, indexed; `missing` names the files it lacks (kind -> why)."""

    workloads: list[Workload] = field(default_factory=list)
    by_owner: dict[tuple[str, str, str], list[Workload]] = field(default_factory=dict)  # (ns, kind, name)
    by_key: dict[tuple[str, str], Workload] = field(default_factory=dict)  # (ns, name)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    flavors: dict[str, Flavor] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    admission_checks: dict[str, Condition | None] = field(default_factory=dict)  # name -> its Active condition
    check_controllers: dict[str, str] = field(default_factory=dict)  # AdmissionCheck -> its spec.controllerName
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Topology -> its levels' node labels
    missing: dict[str, str] = field(default_factory=dict)
    unreadable: set[str] = field(default_factory=set)  # the kinds of `missing` whose file is there but unreadable
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (file, JSON path, what is wrong)

    @property
    def present(self) -> bool:
        return WORKLOADS not in self.missing

    def workload_of(self, namespace: str, kind: str, name: str) -> Workload | None:
        """The owner's newest unfinished Workload (a finished one no longer holds it)."""
        found = [w for w in self.by_owner.get((namespace, kind, name), ()) if not w.finished]
        return found[-1] if found else None


def _units(resources: dict | None) -> dict[str, int]:
    return {str(k): quantity.scheduler_units(str(k), v) for k, v in (resources or {}).items()}


def _conditions(obj: dict) -> dict[str, Condition]:
    out = {}
    for c in (obj.get("status") or {}).get("conditions") or ():
        out[str(c.get("type"))] = Condition(status=str(c.get("status")), reason=str(c.get("reason") or ""),
                                            message=str(c.get("message") or ""))
    return out


def _groups(spec: dict) -> tuple[ResourceGroup, ...]:
    groups = []
    for g in spec.get("resourceGroups") or ():
        flavors = []
        for f in g.get("flavors") or ():
            nominal, borrow, lend = {}, {}, {}
            for r in f.get("resources") or ():
                name = str(r["name"])
                nominal[name] = quantity.scheduler_units(name, r.get("nominalQuota") or 0)
                if r.get("borrowingLimit") is not None:
                    borrow[name] = quantity.scheduler_units(name, r["borrowingLimit"])
                if r.get("lendingLimit") is not None:
                    lend[name] = quantity.scheduler_units(name, r["lendingLimit"])
            flavors.append(FlavorQuota(flavor=str(f["name"]), nominal=nominal, borrowing_limit=borrow, lending_limit=lend))
        groups.append(ResourceGroup(covered=tuple(str(r) for r in g.get("coveredResources") or ()), flavors=tuple(flavors)))
    return tuple(groups)


def _usage(entries: list | None) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for f in entries or ():
        for r in f.get("resources") or ():
            out[(str(f["name"]), str(r["name"]))] = quantity.scheduler_units(str(r["name"]), r.get("total") or 0)
    return out


def _cluster_queue(item: dict, source: str) -> ClusterQueue:
    spec = item.get("spec") or {}
    checks = [(str(name), ()) for name in spec.get("admissionChecks") or ()]
    for rule in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ():
        checks.append((str(rule["name"]), tuple(str(f) for f in rule.get("onFlavors") or ())))
    return ClusterQueue(name=item["metadata"]["name"], cohort=str(spec.get("cohortName") or spec.get("cohort") or ""),
                        groups=_groups(spec), stop_policy=str(spec.get("stopPolicy") or "None"), checks=tuple(checks),
                        reserved_status=_usage((item.get("status") or {}).get("flavorsReservation")),
                        active=_conditions(item).get("Active"), source=source,
                        strategy=str(spec.get("queueingStrategy") or "BestEffortFIFO"))


def _topology_request(ps: dict) -> tuple[str, str] | None:
    """spec.podSets[].topologyRequest, or the template's annotations it is made from: (mode, level label)."""
    request = ps.get("topologyRequest") or {}
    annotations = ((ps.get("template") or {}).get("metadata") or {}).get("annotations") or {}
    for mode, annotation in TOPOLOGY_ANNOTATIONS:
        value = request[mode] if request.get(mode) is not None else annotations.get(annotation)
        if mode == "unconstrained":
            if value is True or value == "true":
                return (mode, "")
        elif value:
            return (mode, str(value))
    return None


def _workload(item: dict, source: str) -> Workload:
    meta, spec, status = item["metadata"], item.get("spec") or {}, item.get("status") or {}
    pod_sets = []
    for ps in spec.get("podSets") or ():
        pod_spec = (ps.get("template") or {}).get("spec") or {}
        count = ps.get("count")
        pod_sets.append(PodSet(name=str(ps["name"]), count=1 if count is None else int(count), spec=pod_spec,
                               requests=effective_requests(pod_spec), topology=_topology_request(ps)))
    admission = status.get("admission") or {}
    usage: dict[tuple[str, str], int] = {}
    assigned: dict[str, dict[str, str]] = {}
    for a in admission.get("podSetAssignments") or ():
        flavors = {str(k): str(v) for k, v in (a.get("flavors") or {}).items()}
        assigned[str(a.get("name"))] = flavors
        for resource, units in _units(a.get("resourceUsage")).items():
            if resource in flavors:
                key = (flavors[resource], resource)
                usage[key] = usage.get(key, 0) + units
    owners = tuple((str(r.get("apiVersion") or ""), str(r.get("kind")), str(r.get("name")), str(r.get("uid") or ""))
                   for r in meta.get("ownerReferences") or ())
    checks = tuple((str(c["name"]), str(c.get("state") or ""), str(c.get("message") or ""))
                   for c in status.get("admissionChecks") or ())
    return Workload(namespace=meta["namespace"], name=meta["name"], queue=str(spec.get("queueName") or ""),
                    pod_sets=tuple(pod_sets), owners=owners, conditions=_conditions(item),
                    cluster_queue=str(admission.get("clusterQueue") or ""), usage=usage, assigned=assigned,
                    checks=checks, active=spec.get("active") is not False, source=source,
                    priority=int(spec.get("priority") or 0), created=str(meta.get("creationTimestamp") or ""))


def _read(loaded: Loaded, kind: str, kueue: Kueue, make) -> None:
    """Each valid item through `make`; an item whose quantities cannot be used is a finding, not a crash."""
    doc: Document | None = loaded.documents.get(kind)
    if doc is None:
        kueue.missing[kind] = loaded.why_missing(kind)
        if loaded.unreadable_file(kind):
            kueue.unreadable.add(kind)
        return
    for i, item in doc.valid_items():
        try:
            make(item, f"{doc.file} {doc.item_path(i)}")
        except (QuantityError, ValueError, TypeError) as exc:
            kueue.findings.append((doc.file, doc.item_path(i), str(exc)))


def build_kueue(loaded: Loaded) -> Kueue:
    k = Kueue()

    def workload(item: dict, path: str) -> None:
        w = _workload(item, path)
        k.workloads.append(w)
        k.by_key[(w.namespace, w.name)] = w
        for _, kind, name, _ in w.owners:
            k.by_owner.setdefault((w.namespace, kind, name), []).append(w)

    def local_queue(item: dict, path: str) -> None:
        spec = item.get("spec") or {}
        meta = item["metadata"]
        k.local_queues[(meta["namespace"], meta["name"])] = LocalQueue(
            namespace=meta["namespace"], name=meta["name"], cluster_queue=str(spec.get("clusterQueue") or ""),
            stop_policy=str(spec.get("stopPolicy") or "None"), active=_conditions(item).get("Active"))

    def cluster_queue(item: dict, path: str) -> None:
        k.cluster_queues[item["metadata"]["name"]] = _cluster_queue(item, path)

    def flavor(item: dict, path: str) -> None:
        spec = item.get("spec") or {}
        taints = tuple(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"])) for t in spec.get("nodeTaints") or ())
        k.flavors[item["metadata"]["name"]] = Flavor(name=item["metadata"]["name"], node_labels=dict(spec.get("nodeLabels") or {}),
                                                     taints=taints, tolerations=tolerations_of(spec),
                                                     topology=str(spec.get("topologyName") or ""))

    def cohort(item: dict, path: str) -> None:
        spec = item.get("spec") or {}
        k.cohorts[item["metadata"]["name"]] = Cohort(name=item["metadata"]["name"],
                                                     parent=str(spec.get("parentName") or spec.get("parent") or ""),
                                                     groups=_groups(spec))

    def check(item: dict, path: str) -> None:
        k.admission_checks[item["metadata"]["name"]] = _conditions(item).get("Active")
        controller = (item.get("spec") or {}).get("controllerName")
        if isinstance(controller, str) and controller:
            k.check_controllers[item["metadata"]["name"]] = controller

    def topology(item: dict, path: str) -> None:
        levels = (item.get("spec") or {}).get("levels") or ()
        k.topologies[item["metadata"]["name"]] = tuple(str(level["nodeLabel"]) for level in levels)

    for kind, make in ((WORKLOADS, workload), (LOCAL_QUEUES, local_queue), (CLUSTER_QUEUES, cluster_queue),
                       (FLAVORS, flavor), (COHORTS, cohort), (CHECKS, check), (TOPOLOGIES, topology)):
        _read(loaded, kind, k, make)
    return k
