"""KAI-Scheduler's Queues and PodGroups as slim records, built once per bundle (schedulers.md).

Formats from NVIDIA/KAI-Scheduler: a Queue (scheduling.run.ai/v2, cluster-scoped; pkg/apis/scheduling/v2/queue_types.go,
resources.go) has `spec.parentQueue` and `spec.resources.{gpu,cpu,memory}.{quota,limit,overQuotaWeight}` as numbers
(GPUs in fractions, cpu in millicpus, memory in megabytes of 10^6 bytes; -1 is unlimited, pkg/common/constants
UnlimitedResourceQuantity), and `status.allocated` / `status.allocatedNonPreemptible` for the running jobs of the
queue and its children. A PodGroup (v2alpha2, pkg/apis/scheduling/v2alpha2/podgroup_types.go) names its queue in
`spec.queue` and may say `spec.preemptibility`; a pod names its PodGroup in the annotation `pod-group-name`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.catalog import KAI
from analyzer.bundle.validation import Loaded
from analyzer.model import quantity
from analyzer.model.quantity import QuantityError

QUEUES, PODGROUPS = KAI
RESOURCES: tuple[str, ...] = ("gpu", "cpu", "memory")  # KAI's QueueResources, in its order
UNLIMITED = -1.0
GROUP_ANNOTATION = "pod-group-name"


@dataclass(frozen=True, kw_only=True)
class Share:
    quota: float  # a guarantee; non-preemptible workloads are refused beyond it
    limit: float  # the cap for every workload (-1: none)


@dataclass(frozen=True, kw_only=True)
class KaiQueue:
    name: str
    parent: str
    shares: dict[str, Share]  # gpu, cpu, memory: what the spec sets
    allocated: dict[str, float]  # KAI's own count of its running jobs, in the spec's units
    allocated_non_preemptible: dict[str, float]
    source: str


@dataclass(frozen=True, kw_only=True)
class KaiPodGroup:
    namespace: str
    name: str
    queue: str
    preemptibility: str  # preemptible, non-preemptible, or "" (by priority: below 100 preemptible)
    said: str  # KAI's own words: the newest scheduling condition's or condition's message
    source: str


@dataclass(kw_only=True)
class Kai:
    queues: dict[str, KaiQueue] = field(default_factory=dict)
    podgroups: dict[tuple[str, str], KaiPodGroup] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    # Queues and PodGroups the bundle holds but could not read: (kind, namespace, name) -> the file's path
    unreadable: dict[tuple[str, str, str], str] = field(default_factory=dict)
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (file, JSON path, what is wrong)


def _number(value: object, what: str) -> float:
    if value is None:
        return UNLIMITED if what == "limit" else 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} is {value!r}, not a number")
    return float(value)


def _shares(spec: dict) -> dict[str, Share]:
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return {}
    out = {}
    for r in RESOURCES:
        given = resources.get(r)
        if isinstance(given, dict):
            out[r] = Share(quota=_number(given.get("quota"), "quota"), limit=_number(given.get("limit"), "limit"))
    return out


def in_kai_units(resource: str, value: object) -> float:
    """A ResourceList quantity in the units of a Queue's spec: GPUs, millicpus, megabytes."""
    q = quantity.parse(value)
    if resource == "cpu":
        return float(q * 1000)
    if resource == "memory":
        return float(q / 1_000_000)
    return float(q)


def _allocated(status: dict, key: str) -> dict[str, float]:
    given = status.get(key)
    out: dict[str, float] = {}
    for name, value in (given.items() if isinstance(given, dict) else ()):
        # A plain ResourceList (cpu in cores, memory in bytes); its GPUs are the key ending in "gpu"
        # (pkg/queuecontroller/metrics/metrics.go getAllocatedGpus).
        r = "gpu" if str(name).endswith("gpu") else str(name)
        if r in RESOURCES:
            out[r] = in_kai_units(r, value)
    return out


def _said(status: dict) -> str:
    for key in ("schedulingConditions", "conditions"):
        conditions = status.get(key)
        if isinstance(conditions, list) and conditions and isinstance(conditions[-1], dict):
            message = conditions[-1].get("message")
            if isinstance(message, str) and message:
                return message
    return ""


def negative(value: float) -> bool:
    """A quota or limit below zero other than -1: KAI compares it as it stands (max_allowed_check.go isOverLimit,
    quota_check.go), so no job ever fits under it; its Queue webhook does not refuse it (queue_webhook.go)."""
    return value < 0 and value != UNLIMITED


def _negative(file: str, path: str, q: KaiQueue) -> list[tuple[str, str, str]]:
    return [(file, f"{path}.{r}.{what}", f"{value:g}: negative, and not -1 (unlimited)")
            for r, share in q.shares.items() for what, value in (("quota", share.quota), ("limit", share.limit))
            if negative(value)]


def build_kai(loaded: Loaded) -> Kai:
    k = Kai()
    for kind in KAI:
        doc = loaded.documents.get(kind)
        if doc is None:
            k.missing[kind] = loaded.why_missing(kind)
            continue
        for i in doc.invalid:
            item = doc.items[i] if i < len(doc.items) else None
            meta = item.get("metadata") if isinstance(item, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                namespace = meta.get("namespace") if kind == PODGROUPS else ""
                k.unreadable[(kind, str(namespace or ""), meta["name"])] = f"{doc.file} {doc.item_path(i)}"
        for i, item in doc.valid_items():
            path = f"{doc.file} {doc.item_path(i)}"
            meta = item["metadata"]
            spec = item.get("spec") if isinstance(item.get("spec"), dict) else {}
            status = item.get("status") if isinstance(item.get("status"), dict) else {}
            try:
                if kind == QUEUES:
                    k.queues[meta["name"]] = KaiQueue(
                        name=meta["name"], parent=str(spec.get("parentQueue") or ""), shares=_shares(spec),
                        allocated=_allocated(status, "allocated"),
                        allocated_non_preemptible=_allocated(status, "allocatedNonPreemptible"), source=path)
                    k.findings += _negative(doc.file, f"{doc.item_path(i)}.spec.resources", k.queues[meta["name"]])
                else:
                    k.podgroups[(meta["namespace"], meta["name"])] = KaiPodGroup(
                        namespace=meta["namespace"], name=meta["name"], queue=str(spec.get("queue") or ""),
                        preemptibility=str(spec.get("preemptibility") or ""), said=_said(status), source=path)
            except (QuantityError, ValueError, TypeError) as exc:
                k.findings.append((doc.file, doc.item_path(i), str(exc)))
                namespace = meta.get("namespace") if kind == PODGROUPS else ""
                k.unreadable[(kind, str(namespace or ""), str(meta.get("name")))] = path
    return k
