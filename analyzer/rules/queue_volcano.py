"""Volcano's part of `queue-misconfigured`, `queue-quota` and the gang's `exhausted` (queues.md): a PodGroup's Queue, its capability, and the gang.

Enqueue (volcano v1.15 pkg/scheduler/plugins/capacity/capacity.go jobEnqueueable): minResources + what the
queue has allocated must stay within its capability, else `queue resource quota insufficient: insufficient
<resource>`; a Closed (or missing) Queue takes nothing. The gang (plugins/gang/gang.go): minMember pods are
placed at once or not at all (`%v/%v tasks in gang unschedulable: %v`); members already placed count toward
minMember (job_info.go ReadyTaskNum: Bound, Binding, Running, Allocated and Succeeded tasks), so only the rest
must fit together.
"""

from __future__ import annotations

from analyzer import words
from analyzer.model.quantity import format_units
from analyzer.model.queue_world import QueueWorld
from analyzer.model.views import Cluster
from analyzer.model.volcano import PodGroup
from analyzer.rules.case import Case, Decision
from analyzer.rules.queue_prose import collect_action


def _group(case: Case, world: QueueWorld) -> PodGroup | None:
    t = case.target
    if t.workload:
        ns, _, name = t.workload.partition("/")
        return world.volcano.podgroups.get((ns, name))
    return world.volcano.podgroups.get((t.namespace, t.queue_hints.get("group-name", "")))


def volcano_decide(case: Case, world: QueueWorld) -> Decision | None:
    v = world.volcano
    pg = _group(case, world)
    if pg is None:
        if v.missing:
            case.evidence["missing"] = sorted(f"{k}.json" for k in v.missing)
            return Decision(word=words.SCHEDULING_GATED, reason="held by Volcano, but the bundle lacks its objects: "
                                                                + "; ".join(v.missing.values()),
                            action=collect_action(sorted(v.missing), "kubectl get podgroups.scheduling.volcano.sh -n "
                                                   f"{case.target.namespace}", "why Volcano holds it"))
        return None
    ev: dict = {"system": "Volcano", "podGroup": f"{pg.namespace}/{pg.name}", "queue": pg.queue, "phase": pg.phase,
                "minMember": pg.min_member}
    if pg.message:
        ev["volcano_said"] = pg.message
    case.evidence["queue"] = ev
    if pg.phase not in ("Pending", ""):
        return None  # Inqueue or Running: the queue let it in; the funnel and the gang judge its pods
    q = v.queues.get(pg.queue)
    if q is None:
        ev["rebuilt"] = f"queue {pg.queue} does not exist"
        return Decision(word=words.QUEUE_MISCONFIGURED, reason=f"PodGroup {pg.name} names Volcano Queue {pg.queue}, "
                                                               f"which is not in the bundle")
    if q.state != "Open":
        ev["rebuilt"] = f"queue {q.name} is {q.state}"
        return Decision(word=words.QUEUE_MISCONFIGURED, reason=f"Volcano Queue {q.name} is {q.state}: it takes no PodGroup")
    short, never = [], []
    for r, want in sorted(pg.min_resources.items()):
        if r not in q.capability or not want:
            continue  # Volcano checks only the dimensions the capability names
        cap, used = q.capability[r], q.allocated.get(r, 0)
        if want > cap:
            never.append(r)
        if want + used > cap:
            short.append(f"{r}: minResources {format_units(r, want)} > capability {format_units(r, cap)} "
                         f"- allocated {format_units(r, used)}")
    ev["capability"] = {r: format_units(r, u) for r, u in q.capability.items()}
    ev["allocated"] = {r: format_units(r, u) for r, u in q.allocated.items()}
    ev["minResources"] = {r: format_units(r, u) for r, u in pg.min_resources.items()}
    if short:
        names = [s.split(":", 1)[0] for s in short]
        ev["rebuilt"] = "queue resource quota insufficient: " + ", ".join(f"insufficient {n}" for n in names)
        ev["too_large"] = bool(never)
        head = "more than the Volcano Queue can ever give (too-large): " if never else "the Volcano Queue is full now: "
        return Decision(word=words.QUEUE_QUOTA, reason=head + "; ".join(short))
    return None


def _members_fit(case: Case, cluster: Cluster) -> int:
    """How many pods of this shape fit at once on the nodes the funnel left (each node by its free units)."""
    funnel = case.funnel
    if funnel is None:
        return 0
    wants = {r: v for r, v in funnel.facts.wants.items() if v}
    wants["pods"] = 1
    total = 0
    for node in funnel.fits:
        used = cluster.usage.get(node.name) or {}
        total += min((node.allocatable.get(r, 0) - used.get(r, 0)) // v for r, v in wants.items())
    return total


def _placed(pg: PodGroup, cluster: Cluster) -> int:
    """Members Volcano counts as ready: Running and Succeeded (the PodGroup's status) plus members bound to a
    node that have not started yet (targets with a node, which status.running does not count)."""
    v = cluster.queues.volcano if cluster.queues is not None else None
    if v is None:
        return pg.placed
    if v.bound_waiting is None:  # once per bundle, not per member
        v.bound_waiting = {}
        for t in cluster.pod_targets:
            group = t.queue_hints.get("group-name")
            if group and t.node_name and t.phase not in ("Running", "Succeeded", "Failed"):
                v.bound_waiting[(t.namespace, group)] = v.bound_waiting.get((t.namespace, group), 0) + 1
    return pg.placed + v.bound_waiting.get((pg.namespace, pg.name), 0)


def gang(case: Case) -> Decision | None:
    """After the funnel left nodes for one member: do the members still needed fit at once?"""
    world, t = case.cluster.queues, case.target
    if world is None or t.kind != "Pod" or not t.queue_hints.get("group-name"):
        return None
    pg = _group(case, world)
    if pg is None or pg.min_member <= 1 or pg.phase == "Completed":
        return None
    placed = _placed(pg, case.cluster)
    needed = pg.min_member - placed
    if needed <= 0:
        return None  # the gang is whole: each further member is judged alone
    fit = _members_fit(case, case.cluster)
    if fit >= needed:
        return None
    case.evidence["gang"] = {"podGroup": f"{pg.namespace}/{pg.name}", "minMember": pg.min_member, "placed": placed,
                             "needed_now": needed, "fit_now": fit}
    held = (f"{placed} of minMember {pg.min_member} already placed" if placed
            else f"minMember {pg.min_member}; placed all at once or not at all")
    return Decision(word=words.EXHAUSTED, reason=f"gang {pg.name}: {fit} of {needed} members fit now ({held})")
