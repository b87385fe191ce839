"""Workloads a queue holds before any pod exists (causes.md targets; queues.md), answered per owner:
- a Job with `spec.suspend: true` and Kueue's queue-name label (or a Workload Kueue made for it);
- any other kind whose Kueue Workload is not admitted (JobSet, RayJob, ...): its kind qualified by its group;
- a Volcano Job whose PodGroup (`<job>-<uid>`) is Pending."""

from __future__ import annotations

from analyzer.bundle.catalog import JOBS
from analyzer.bundle.validation import Loaded
from analyzer.model.queue_quota import admitted
from analyzer.kube import QUEUE_LABEL
from analyzer.model.queue_world import QueueWorld
from analyzer.model.target import Target

BUILTIN_GROUPS = ("", "v1", "apps", "batch")


def _qualified(api_version: str, kind: str) -> str:
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return kind if group in BUILTIN_GROUPS else f"{kind}.{group}"


def held_job(job: object) -> bool:
    """A Job queued_owners may answer: suspended (a queue holds it). Asked of every Job as jobs.json is read, so
    only these are kept."""
    spec = job.get("spec") if isinstance(job, dict) else None
    return isinstance(spec, dict) and bool(spec.get("suspend"))


def queued_owners(loaded: Loaded, world: QueueWorld | None) -> list[Target]:
    if world is None:
        return []
    k, out, seen = world.kueue, [], set()
    doc = loaded.documents.get(JOBS.name)
    if doc is None:
        return out
    for i, job in doc.valid_items():
        meta, spec = job["metadata"], job.get("spec") or {}
        ns, name = meta["namespace"], meta["name"]
        label = (meta.get("labels") or {}).get(QUEUE_LABEL)
        w = k.workload_of(ns, "Job", name)
        if not held_job(job) or not (label or w is not None) or (w is not None and admitted(w)):
            continue
        parallelism = spec.get("parallelism")
        seen.add((ns, "Job", name))
        out.append(Target(kind="Job", namespace=ns, name=name, spec=(spec.get("template") or {}).get("spec"),
                          created=False, source=f"{doc.file} {doc.item_path(i)}",
                          owner={"desired": 1 if parallelism is None else parallelism, "existing": 0, "suspended": True},
                          queue_hints={"queue-name": label} if isinstance(label, str) else {},
                          workload=w.key if w is not None else ""))
    for w in k.workloads:
        if admitted(w) or w.finished or not w.pod_sets:
            continue
        for api_version, kind, name, _ in w.owners:
            if kind == "Pod" or (kind == "Job" and api_version.startswith("batch/")) or (w.namespace, kind, name) in seen:
                continue
            seen.add((w.namespace, kind, name))
            out.append(Target(kind=_qualified(api_version, kind), namespace=w.namespace, name=name,
                              spec=w.pod_sets[0].spec, created=False, source=w.source,
                              owner={"desired": sum(p.count for p in w.pod_sets), "existing": 0}, workload=w.key))
    for job in world.volcano.jobs:
        pg = world.volcano.podgroups.get((job.namespace, f"{job.name}-{job.uid}"))
        if pg is None or pg.phase not in ("Pending", ""):
            continue
        out.append(Target(kind="Job.batch.volcano.sh", namespace=job.namespace, name=job.name, spec=job.spec,
                          created=False, source=job.source, owner={"desired": job.min_available, "existing": 0},
                          workload=f"{pg.namespace}/{pg.name}"))
    return out
