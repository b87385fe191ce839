"""KAI-Scheduler's queues (schedulers.md): a pod of a running KAI scheduler is held by its PodGroup's Queue.

queue-misconfigured: the PodGroup's Queue is not in the bundle (KAI: pkg/scheduler/cache/cluster_info/
  cluster_info.go "Queue '%s' does not exist"), or the Queue's parent chain loops or names a missing parent, or
  a quota or limit on the way is below zero but not -1 (KAI compares it as it stands: no job ever fits);
queue-quota: the job over the `limit` of its queue or an ancestor once what they have allocated is counted
  (pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go isOverLimit: `limit < allocated +
  requested`, -1 unlimited), or a non-preemptible job beyond `quota` (quota_check.go): quota is a guarantee,
  limit the cap (schedulers.md's corrections).
The PodGroup's own condition message is quoted as the cross-check. Without KAI's files the rule cannot check
the queue: insufficient-evidence naming them. A KAI that does not run is left to no-scheduler.
"""

from __future__ import annotations

from fractions import Fraction

from analyzer import prose, words
from analyzer.model.kai import (GROUP_ANNOTATION, PODGROUPS, QUEUES, RESOURCES, UNLIMITED, KaiPodGroup, KaiQueue,
                                negative)
from analyzer.model.podspec import effective_requests, priority_of
from analyzer.model.queue_world import QueueWorld
from analyzer.model.gpu_sharing import KAI_ANNOTATIONS
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule
from analyzer.rules.schedulers import running

NON_PREEMPTIBLE = "non-preemptible"
PREEMPTIBLE_BELOW = 100  # podgroup_types.go: with no preemptibility, a priority below 100 is preemptible
UNITS = {"gpu": "GPU", "cpu": "millicpu", "memory": "MB"}


def _wants(case: Case) -> dict[str, float]:
    """One pod's request in a Queue's units (GPUs with fractions, millicpus, megabytes)."""
    spec = case.spec or {}
    units = effective_requests(spec)
    gpu = float(units.get("nvidia.com/gpu", 0))
    fraction = case.target.annotations.get(KAI_ANNOTATIONS[0]) if isinstance(case.target.annotations, dict) else None
    if fraction:
        try:
            gpu += float(Fraction(str(fraction)))
        except (ValueError, ZeroDivisionError):
            pass  # an unreadable fraction asks nothing we can count
    return {"gpu": gpu, "cpu": float(units.get("cpu", 0)), "memory": units.get("memory", 0) / 1_000_000}


def _chain(world: QueueWorld, name: str) -> tuple[list[KaiQueue], str, str]:
    """The queue and its ancestors, leaf first, what is wrong with the chain ("" when nothing), and the bundle
    path of a queue on it that could not be read ("" when none)."""
    out: list[KaiQueue] = []
    seen: set[str] = set()
    while name:
        if name in seen:
            if out[-1].name == name:
                return out, f"Queue {name} names itself as its parent (spec.parentQueue)", ""
            loop = " -> ".join(q.name for q in out[[q.name for q in out].index(name):])
            return out, (f"the parent chain of Queue {out[0].name} loops back to Queue {name} "
                         f"({loop} -> {name})"), ""
        unreadable = world.kai.unreadable.get((QUEUES, "", name))
        if unreadable:
            return out, f"Queue {name} is in the bundle but unreadable ({unreadable})", unreadable
        q = world.kai.queues.get(name)
        if q is None:
            return out, (f"Queue {name} does not exist" if not out else
                         f"Queue {out[-1].name} names parent Queue {name}, which does not exist"), ""
        seen.add(name)
        out.append(q)
        name = q.parent
    return out, "", ""


def _number(resource: str, value: float) -> str:
    shown = f"{value:g}"
    return f"{shown} {UNITS[resource]}" if resource != "gpu" else f"{shown} GPU"


def _over(chain: list[KaiQueue], wants: dict[str, float],
          non_preemptible: bool) -> tuple[KaiQueue, str, str, bool] | None:
    """The first queue up the chain that refuses the job: (queue, resource, how, whether it can never admit it)."""
    for q in chain:  # max_allowed_check.go walks from the job's queue up its parents
        for r in RESOURCES:
            share, want = q.shares.get(r), wants.get(r, 0.0)
            if share is None or not want:
                continue
            for what, bound in (("limit", share.limit), ("quota", share.quota if non_preemptible else UNLIMITED)):
                if negative(bound):
                    return q, r, (f"its {r} {what} is {_number(r, bound)}: below zero and not -1 (unlimited), so no "
                                  "job fits under it"), True
            used = q.allocated.get(r, 0.0)
            if share.limit != UNLIMITED and share.limit < used + want:
                return q, r, (f"limit {_number(r, share.limit)} < allocated {_number(r, used)} + "
                              f"requested {_number(r, want)}"), False
            used_np = q.allocated_non_preemptible.get(r, 0.0)
            if non_preemptible and share.quota != UNLIMITED and share.quota < used_np + want:
                return q, r, (f"quota {_number(r, share.quota)} < non-preemptible allocated {_number(r, used_np)} + "
                              f"requested {_number(r, want)} (a non-preemptible job may not go over quota)"), False
    return None


def _non_preemptible(pg: KaiPodGroup, case: Case) -> bool:
    if pg.preemptibility:
        return pg.preemptibility == NON_PREEMPTIBLE
    return priority_of(case.spec or {}) >= PREEMPTIBLE_BELOW


def decide(case: Case) -> Decision | None:
    t, world = case.target, case.cluster.queues
    group = t.queue_hints.get(GROUP_ANNOTATION)
    name = (case.spec or {}).get("schedulerName")
    if world is None or not group or t.kind != "Pod" or t.node_name or not isinstance(name, str):
        return None
    if not running(name, case):
        return None  # no-scheduler's, later in the order
    k = world.kai
    if k.missing:
        case.evidence["missing"] = sorted(f"{kind}.json" for kind in k.missing)
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"pod of {name} in PodGroup {group}: its queue cannot be checked, "
                               + "; ".join(k.missing.values()))
    pg = k.podgroups.get((t.namespace, group))
    unreadable = k.unreadable.get((PODGROUPS, t.namespace, group))
    if pg is None and unreadable:
        case.evidence["missing"] = unreadable
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"KAI PodGroup {group} is in the bundle but unreadable ({unreadable}): its queue "
                               "cannot be checked")
    if pg is None:
        return None  # KAI's podgrouper has not made it yet: the scheduler's own rows judge the pod
    ev: dict = {"podGroup": f"{pg.namespace}/{pg.name}", "queue": pg.queue}
    if pg.said:
        ev["kai_said"] = pg.said
    case.evidence["kai_queue"] = ev
    if not pg.queue:
        ev["problem"] = "the PodGroup names no queue"
        return Decision(word=words.QUEUE_MISCONFIGURED, reason=f"KAI PodGroup {pg.name} names no queue (spec.queue)")
    chain, problem, unreadable = _chain(world, pg.queue)
    if unreadable:
        case.evidence["missing"] = unreadable
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"KAI PodGroup {pg.name}: {problem}; its queue "
                                                                 "cannot be checked")
    if problem:
        if pg.queue == pg.name and not chain:
            problem += " (the PodGroup names itself as its queue)"
        ev["problem"] = problem
        return Decision(word=words.QUEUE_MISCONFIGURED, reason=f"KAI PodGroup {pg.name} in queue {pg.queue}: {problem}")
    over = _over(chain, _wants(case), _non_preemptible(pg, case))
    if over is None:
        return None
    q, r, how, never = over
    if never:  # queue-misconfigured: the queue can never admit it, whatever is freed
        ev["problem"] = f"Queue {q.name}: {how}"
        return Decision(word=words.QUEUE_MISCONFIGURED,
                        reason=f"KAI Queue {q.name} can never admit PodGroup {pg.name}: {how}")
    ev.update({"over": q.name, "resource": r, "how": how})
    return Decision(word=words.QUEUE_QUOTA, reason=f"KAI Queue {q.name} lacks {r} for PodGroup {pg.name}: {how}")


@prose.says("kai_queue")
def _say_queue(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    out = [f"KAI-Scheduler holds the pod in PodGroup {value.get('podGroup')}, whose queue is "
           f"{value.get('queue') or '(none)'}."]
    if value.get("problem"):
        out.append(f"KAI cannot schedule it: {value['problem']}.")
    if value.get("over"):
        out.append(f"Queue {value['over']} has no room for its {value['resource']}: {value['how']}.")
    if value.get("kai_said"):
        out.append(f"KAI says on the PodGroup: {value['kai_said']}")
    return out


# KAI-Scheduler's Queue of a pod's PodGroup (its scheduler running): missing, looping, or over limit / quota.
FAMILY: Family = Plain(name="kai-queues", kinds=(catalog.KAI_QUEUES, catalog.KAI_PODGROUPS), rules=(
    Rule(rows="8-9", words=(words.QUEUE_MISCONFIGURED, words.QUEUE_QUOTA, words.INSUFFICIENT_EVIDENCE), decide=decide),))
