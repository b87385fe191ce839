"""`generate_bundle.py --kai`: KAI-Scheduler's Queues and PodGroups, written once the pods are (bundlegen/kai.py makes
KAI's share of the pods and the lab's targets, and counts what each group holds and asks).

Shapes from NVIDIA/KAI-Scheduler: a Queue (scheduling.run.ai/v2, cluster-scoped; pkg/apis/scheduling/v2/queue_types.go)
sets `parentQueue` and `resources.{cpu,gpu,memory}.{quota,limit,overQuotaWeight}` (GPUs, millicpus, megabytes; -1
unlimited), its status the ResourceLists `allocated`, `allocatedNonPreemptible`, `requested` and `childQueues`; the
top of the tree is docs/quickstart/default-queues.yaml's `default-parent-queue` with `default-queue`. A PodGroup
(v2alpha2, pkg/apis/scheduling/v2alpha2/podgroup_types.go) sets `minMember`, `queue`, `preemptibility`, and in its
status `schedulingConditions` (type UnschedulableOnNodePool, node pool `default`, reasons) and `resourcesStatus`.

The tree: per team a department Queue (`dept-<team>`) over a leaf Queue per namespace. A leaf's GPU quota is what its
non-preemptible groups hold and ask plus two, a department's the sum of its leaves', limits unlimited: no generated
pending pod is refused by its queue (pkg/scheduler/plugins/proportion/capacity_policy). The lab's Queue
`llm-research` (GPU quota 1) sits under the department holding the most GPUs whose groups all run, its limit set to
exactly what it holds: the lab's preemptible job is over that limit (max_allowed_check.go) and its non-preemptible one
over the leaf's quota (quota_check.go), each with KAI's own message (pkg/scheduler/api/unschedule_info.go).
"""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.bundle.catalog import KAI
from bundlegen.common import GPU, ts
from bundlegen.kai import DEFAULT_QUEUE, LAB_NS, LAB_QUEUE, LAB_QUOTA, Group, KaiWorld, department, number
from generate_kueue import _write as write_list

QUEUES, PODGROUPS = KAI
UNLIMITED = {"limit": -1, "overQuotaWeight": 1, "quota": -1}
DEFAULT_PARENT = "default-parent-queue"


def _whole(value: float) -> float | int:
    """A number as kubectl prints the Queue's: 4, not 4.0."""
    return int(value) if float(value).is_integer() else value


def _queue(world: KaiWorld, name: str, *, parent: str = "", gpu_quota: float = -1, gpu_limit: float = -1,
           allocated: dict[str, str] | None = None, non_preemptible: dict[str, str] | None = None,
           requested: dict[str, str] | None = None, children: list[str] | None = None) -> dict:
    spec: dict = {"resources": {"cpu": dict(UNLIMITED), "gpu": {"limit": _whole(gpu_limit), "overQuotaWeight": 1,
                                                               "quota": _whole(gpu_quota)}, "memory": dict(UNLIMITED)}}
    if parent:
        spec["parentQueue"] = parent
    status: dict = {}
    for key, value in (("allocated", allocated), ("allocatedNonPreemptible", non_preemptible),
                       ("requested", requested), ("childQueues", children)):
        if value:
            status[key] = value
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"creationTimestamp": ts(200 * 86400), "generation": 1, "name": name,
                         "resourceVersion": world.gen.rv("kai-queue", name), "uid": world.gen.uid("kai-queue", name)},
            "spec": spec, "status": status}


def _held(groups: list[Group], *, non_preemptible: bool = False) -> dict[str, str]:
    chosen = [g for g in groups if not (non_preemptible and g.preemptible)]
    gpus = sum(g.gpus for g in chosen)
    if not gpus:
        return {}
    return {"cpu": f"{sum(g.cpu for g in chosen)}m", "memory": str(sum(g.memory for g in chosen)),
            GPU: number(gpus)}


def queues(world: KaiWorld) -> list[dict]:
    by_leaf: dict[str, list[Group]] = {}
    for g in world.groups.values():
        if g.namespace != LAB_NS:
            by_leaf.setdefault(g.queue, []).append(g)
    by_department: dict[str, list[Group]] = {}
    for leaf, groups in by_leaf.items():
        by_department.setdefault(department(leaf), []).extend(groups)
    lab = world.lab_department()
    lab_parent = lab.department
    by_department.setdefault(lab_parent, [])
    fractions = [g for g in world.groups.values() if g.queue == DEFAULT_QUEUE]
    out = [_queue(world, DEFAULT_PARENT, gpu_quota=0, children=[DEFAULT_QUEUE]),
           _queue(world, DEFAULT_QUEUE, parent=DEFAULT_PARENT, gpu_quota=0,
                  requested={GPU: number(sum(g.asked for g in fractions))} if fractions else None),
           _queue(world, LAB_QUEUE, parent=lab_parent, gpu_quota=LAB_QUOTA,
                  requested={GPU: number(sum(g.asked for g in world.groups.values() if g.queue == LAB_QUEUE))})]
    quotas: dict[str, float] = {}
    for leaf, groups in by_leaf.items():
        quota = sum(g.gpus + g.asked for g in groups if not g.preemptible) + 2
        quotas[department(leaf)] = quotas.get(department(leaf), 0) + quota
        out.append(_queue(world, leaf, parent=department(leaf), gpu_quota=quota, allocated=_held(groups),
                          non_preemptible=_held(groups, non_preemptible=True),
                          requested={GPU: number(sum(g.gpus + g.asked for g in groups))}))
    for name, groups in by_department.items():
        children = sorted({g.queue for g in groups} | ({LAB_QUEUE} if name == lab_parent else set()))
        out.append(_queue(world, name, gpu_quota=quotas.get(name, 0) + (1 if name == lab_parent else 0),
                          gpu_limit=lab.limit if name == lab_parent else -1, allocated=_held(groups),
                          non_preemptible=_held(groups, non_preemptible=True), children=children))
    return sorted(out, key=lambda q: q["metadata"]["name"])


def podgroups(world: KaiWorld) -> list[dict]:
    out = []
    for (ns, name), g in sorted(world.groups.items()):
        meta: dict = {"creationTimestamp": ts(3700), "generation": 1, "labels": {"kai.scheduler/queue": g.queue},
                      "name": name, "namespace": ns, "resourceVersion": world.gen.rv("kai-pg", ns, name),
                      "uid": world.gen.uid("kai-pg", ns, name)}
        if g.owner is not None:
            meta["ownerReferences"] = [{"apiVersion": g.owner.get("apiVersion", "apps/v1"), "kind": g.owner["kind"],
                                        "name": g.owner["name"], "uid": g.owner["uid"]}]
        status: dict = {"pending": g.pending, "running": g.running}
        if g.gpus:
            status["resourcesStatus"] = {"allocated": {GPU: number(g.gpus)}}
        if g.said is not None:
            kind, reason, message = g.said
            status["schedulingConditions"] = [{
                "lastTransitionTime": ts(3000), "message": message, "nodePool": "default",
                "reasons": [{"message": message, "reason": reason}], "status": "True", "transitionID": "0", "type": kind}]
        out.append({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": meta,
                    "spec": {"minMember": 1, "preemptibility": "preemptible" if g.preemptible else "non-preemptible",
                             "queue": g.queue},
                    "status": status})
    return out


def add_kai(root: Path, world: KaiWorld) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    lists = {QUEUES: queues(world), PODGROUPS: podgroups(world)}
    manifest["files"] += [write_list(root, name, items) for name, items in lists.items()]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
