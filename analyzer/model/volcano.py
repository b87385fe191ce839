"""Volcano's objects as slim records, built once per bundle (queues.md): Queues, PodGroups and Volcano Jobs.

A Volcano Job's PodGroup is `<job>-<uid>` (volcano v1.15 pkg/controllers/job/job_controller_util.go); a pod names
its PodGroup in the annotation `scheduling.k8s.io/group-name` (or `scheduling.volcano.sh/group-name`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.catalog import VOLCANO
from analyzer.bundle.validation import Loaded
from analyzer.model import quantity
from analyzer.model.podspec import effective_requests
from analyzer.model.quantity import QuantityError

PODGROUPS, QUEUES, JOBS = VOLCANO
DEFAULT_QUEUE = "default"


@dataclass(frozen=True, kw_only=True)
class VolcanoQueue:
    name: str
    state: str  # Open, Closed, Closing, Unknown
    capability: dict[str, int]
    allocated: dict[str, int]
    source: str


@dataclass(frozen=True, kw_only=True)
class PodGroup:
    namespace: str
    name: str
    queue: str
    min_member: int
    min_resources: dict[str, int]
    phase: str
    message: str  # the newest condition's message (Volcano's own words)
    placed: int  # status.running + status.succeeded: members Volcano counts toward minMember
    source: str


@dataclass(frozen=True, kw_only=True)
class VolcanoJob:
    namespace: str
    name: str
    uid: str
    queue: str
    min_available: int
    spec: dict | None  # the first task's pod template spec
    requests: dict[str, int]  # one pod of that task
    source: str


@dataclass(kw_only=True)
class Volcano:
    queues: dict[str, VolcanoQueue] = field(default_factory=dict)
    podgroups: dict[tuple[str, str], PodGroup] = field(default_factory=dict)
    jobs: list[VolcanoJob] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (file, JSON path, what is wrong)
    bound_waiting: dict[tuple[str, str], int] | None = None  # (ns, PodGroup) -> members bound, not started (lazy)


def _units(resources: dict | None) -> dict[str, int]:
    return {str(k): quantity.scheduler_units(str(k), v) for k, v in (resources or {}).items()}


def build_volcano(loaded: Loaded) -> Volcano:
    v = Volcano()
    for kind in VOLCANO:
        doc = loaded.documents.get(kind)
        if doc is None:
            v.missing[kind] = loaded.why_missing(kind)
            continue
        for i, item in doc.valid_items():
            path = f"{doc.file} {doc.item_path(i)}"
            meta, spec, status = item["metadata"], item.get("spec") or {}, item.get("status") or {}
            try:
                if kind == QUEUES:
                    v.queues[meta["name"]] = VolcanoQueue(
                        name=meta["name"], state=str(status.get("state") or "Open"),
                        capability=_units(spec.get("capability")), allocated=_units(status.get("allocated")), source=path)
                elif kind == PODGROUPS:
                    conditions = status.get("conditions") or []
                    v.podgroups[(meta["namespace"], meta["name"])] = PodGroup(
                        namespace=meta["namespace"], name=meta["name"], queue=str(spec.get("queue") or DEFAULT_QUEUE),
                        min_member=int(spec.get("minMember") or 0), min_resources=_units(spec.get("minResources")),
                        phase=str(status.get("phase") or "Pending"),
                        placed=int(status.get("running") or 0) + int(status.get("succeeded") or 0),
                        message=str(conditions[-1].get("message") or "") if conditions else "", source=path)
                else:
                    tasks = spec.get("tasks") or []
                    first = ((tasks[0].get("template") or {}).get("spec") if tasks else None) or None
                    v.jobs.append(VolcanoJob(
                        namespace=meta["namespace"], name=meta["name"], uid=str(meta.get("uid") or ""),
                        queue=str(spec.get("queue") or DEFAULT_QUEUE), min_available=int(spec.get("minAvailable") or 0),
                        spec=first, requests=effective_requests(first or {}), source=path))
            except (QuantityError, ValueError, TypeError) as exc:
                v.findings.append((doc.file, doc.item_path(i), str(exc)))
    return v
