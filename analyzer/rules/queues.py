"""The queue rows of causes.md for what a queue holds (queues.md): Kueue and Volcano.

queue-misconfigured: the queue can never admit it (LocalQueue / ClusterQueue / Volcano Queue missing,
  stopped, Closed, inactive (a missing flavor or Topology), a cohort cycle, a resource no group covers);
queue-quota: the flavor assigner finds no flavor with room now (too-large: not even with the queue empty);
  every flavor ruled out by the pod's selector or tolerations answers selector-mismatch / untolerated-taint;
  under StrictFIFO, a workload that would fit behind a head that does not (queue_head.py);
queue-topology: quota would admit it, no domain of the required topology level holds the pod set (queue_topology.py);
scheduling-gated: quota reserved and admission checks pending, or a Kueue gate without Kueue's files.
An admitted workload passes on: its pods meet the scheduler's rows. After the funnel, `gang` answers
`exhausted` for a Volcano PodGroup whose minMember pods do not fit at once.
Kueue's texts: pkg/controller/core/workload_controller.go (getQueueBlocker), pkg/cache/scheduler/clusterqueue.go
(inactiveReason); Volcano's: pkg/scheduler/plugins/capacity/capacity.go, plugins/gang/gang.go (v1.15).
"""

from __future__ import annotations

from analyzer import words
from analyzer import prose
from analyzer.model.matching import toleration_text
from analyzer.model.quantity import format_units
from analyzer.model.queue_quota import admitted
from analyzer.model.queue_world import QueueWorld
from analyzer.model.queues import (
    ADMISSION_GATE,
    STOPPED,
    CHECKS,
    COHORTS,
    KUEUE_GROUP_PREFIX,
    TOPOLOGIES,
    ClusterQueue,
    Workload,
)
from analyzer.bundle import catalog
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Family, Answered, Plain, Rule
from analyzer.rules.queue_flavors import PodSetOutcome, assign
from analyzer.rules.queue_prose import collect_action  # (importing it also registers how the queue evidence reads)
from analyzer.rules.queue_head import head_of_line
from analyzer.rules.queue_topology import missing_topologies, topology_refusal
from analyzer.rules.queue_volcano import gang, volcano_decide

MAX_HOLDERS = 20
__all__ = ["decide", "gang", "FAMILY"]


def _gated(spec: dict | None) -> bool:
    return any(str(g.get("name", "")).startswith(KUEUE_GROUP_PREFIX) for g in (spec or {}).get("schedulingGates") or ())


def _workload(case: Case, world: QueueWorld) -> Workload | None:
    t = case.target
    if t.workload:
        ns, _, name = t.workload.partition("/")
        return world.kueue.by_key.get((ns, name))
    if t.kind == "Pod":
        return world.kueue.workload_of(t.namespace, "Pod", t.name)
    return None


def decide(case: Case) -> Decision | None:
    t, world = case.target, case.cluster.queues
    if world is None:
        return None
    if t.kind == "Pod" and t.queue_hints.get("group-name") or t.kind.endswith(".batch.volcano.sh"):
        return volcano_decide(case, world)
    held = _gated(case.spec) or bool(t.queue_hints.get("queue-name")) or bool(t.workload)
    if not held:
        return None
    k = world.kueue
    needed = [kind for kind in k.missing if kind not in (COHORTS, CHECKS, TOPOLOGIES)]
    if needed:
        if not _gated(case.spec) and t.kind == "Pod":
            return None  # a queue-name label without the gate: Kueue does not hold it
        case.evidence["missing"] = [f"{kind}.json" for kind in needed]
        broken = [kind for kind in needed if kind in k.unreadable]
        if broken:  # present but unreadable: the bundle cannot decide (causes.md, "When the bundle cannot decide")
            return Decision(word=words.INSUFFICIENT_EVIDENCE,
                            reason=f"held by Kueue ({ADMISSION_GATE}), but Kueue's objects cannot be read: "
                                   + "; ".join(k.missing[kind] for kind in broken))
        return Decision(word=words.SCHEDULING_GATED,
                        reason=f"held by Kueue ({ADMISSION_GATE}), but the bundle lacks Kueue's objects: "
                               + "; ".join(k.missing[kind] for kind in needed),
                        action=collect_action(needed, f"kubectl get workloads.kueue.x-k8s.io -n {t.namespace}",
                                               "why Kueue holds it"))
    w = _workload(case, world)
    queue_name = w.queue if w is not None else t.queue_hints.get("queue-name", "")
    ev: dict = {"system": "Kueue", "workload": w.key if w else None, "localQueue": f"{t.namespace}/{queue_name}"}
    case.evidence["queue"] = ev
    if w is not None:
        said = w.conditions.get("QuotaReserved")
        if said is not None and said.status != "True":
            ev["kueue_said"] = {"condition": "QuotaReserved", "reason": said.reason, "message": said.message}
    lq = k.local_queues.get((t.namespace, queue_name))
    if lq is None:
        return _misconfigured(ev, f"LocalQueue {queue_name} doesn't exist",
                              f"create LocalQueue {t.namespace}/{queue_name}, or fix the queue name the workload uses")
    if lq.stop_policy in STOPPED:
        return _misconfigured(ev, f"LocalQueue {queue_name} is stopped (stopPolicy {lq.stop_policy})",
                              f"resume LocalQueue {t.namespace}/{queue_name} (set spec.stopPolicy to None)")
    ev["clusterQueue"] = lq.cluster_queue
    cq = k.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return _misconfigured(ev, f"ClusterQueue {lq.cluster_queue} doesn't exist",
                              f"create ClusterQueue {lq.cluster_queue} (LocalQueue {t.namespace}/{queue_name} points "
                              "to it), or point the LocalQueue at one that exists")
    problems = []
    if cq.stop_policy in STOPPED:
        problems.append("is stopped")
    missing_flavors = [f for f in cq.flavor_names() if f not in k.flavors]
    if missing_flavors:
        problems.append("references missing ResourceFlavor(s): " + ",".join(missing_flavors))
    missing_checks = [c for c, _ in cq.checks if c not in k.admission_checks]
    if missing_checks and CHECKS not in k.missing:
        problems.append("references missing AdmissionCheck(s): " + ",".join(missing_checks))
    places_by_topology = any(f in k.flavors and k.flavors[f].topology for f in cq.flavor_names())
    if places_by_topology and TOPOLOGIES in k.missing and not problems:
        case.evidence["missing"] = [f"{TOPOLOGIES}.json"]
        return Decision(word=words.SCHEDULING_GATED,
                        reason=f"held by Kueue, and ClusterQueue {cq.name} places by topology, but the bundle lacks "
                               f"Kueue's Topologies: {k.missing[TOPOLOGIES]}",
                        action=collect_action([TOPOLOGIES], f"kubectl get workloads.kueue.x-k8s.io -n {t.namespace}",
                                               "where Kueue's topology assignment stops"))
    if TOPOLOGIES not in k.missing:
        problems.extend(missing_topologies(cq, world))
    if problems:
        ev["clusterQueue_said"] = cq.active.message if cq.active else None
        return _misconfigured(ev, f"ClusterQueue {cq.name} is inactive: Can't admit new workloads: {', '.join(problems)}.",
                              f"fix ClusterQueue {cq.name}: it {'; it '.join(problems)}")
    cycle = world.tree.cycles.get(cq.cohort)
    if cycle:
        ev["cohort"] = cycle
        return _misconfigured(ev, f"ClusterQueue {cq.name}'s cohort {cq.cohort} has a cycle of parents "
                                  f"({' -> '.join(cycle)}): Kueue admits nothing in it")
    ev["cohort"] = world.tree.chain(cq)
    if w is None:
        return Decision(word=words.SCHEDULING_GATED, reason=f"Kueue has made no Workload for it yet (queue {queue_name})")
    if not w.active:
        return Decision(word=words.SCHEDULING_GATED, reason=f"Workload {w.key} is deactivated (spec.active false)")
    if w.holds("QuotaReserved"):
        if admitted(w):
            return None  # admitted: the scheduler's rows judge its pods
        pending = [c for c in w.checks if c[1] != "Ready"]
        ev["admissionChecks"] = [{"name": n, "state": s, "message": m} for n, s, m in w.checks]
        return Decision(word=words.SCHEDULING_GATED,
                        reason=f"quota reserved in ClusterQueue {w.cluster_queue or cq.name}; waiting for admission "
                               f"check(s) " + ", ".join(f"{n} ({s or 'Pending'})" for n, s, _ in pending or w.checks),
                        action=_checks_action(w, pending or w.checks, k.check_controllers))
    outcomes = _assigned(w, cq, world)
    failed = next((o for o in outcomes if o.failed), None)
    if failed is not None:
        return _quota_decision(ev, failed, world)

    def fails(other: Workload) -> str | None:
        theirs = _assigned(other, cq, world)
        short = next((o for o in theirs if o.failed), None)
        if short is not None:
            return short.message()
        said: dict = {}
        refused = topology_refusal(other, theirs, world, case.cluster, cq.name, said, {})
        return None if refused is None else said["rebuilt"]

    decision = (head_of_line(w, cq, world, fails, case.evidence)
                or topology_refusal(w, outcomes, world, case.cluster, cq.name, ev, case.evidence))
    if decision is not None:
        return decision
    ev["rebuilt"] = None
    return None  # by the bundle the queue would admit it now: Kueue has not yet; later rows judge it


def _assigned(w: Workload, cq: ClusterQueue, world: QueueWorld) -> list[PodSetOutcome]:
    key = (w.key, cq.name)
    if key not in world.memo:  # every pod of a group asks the same of the same queue
        world.memo[key] = assign(w, cq, world.kueue.flavors, world.tree)
    return world.memo[key]


def _misconfigured(ev: dict, rebuilt: str, action: str | None = None) -> Decision:
    ev["rebuilt"] = rebuilt
    _compare(ev)
    return Decision(word=words.QUEUE_MISCONFIGURED, reason=rebuilt, action=action)


def _compare(ev: dict) -> None:
    said = (ev.get("kueue_said") or {}).get("message")
    if said is not None:
        ev["agrees"] = said == ev["rebuilt"] or said in ev["rebuilt"] or ev["rebuilt"].startswith(said)


def _quota_decision(ev: dict, ps: PodSetOutcome, world: QueueWorld) -> Decision:
    ev["asked"] = {r: format_units(r, v) for r, v in ps.asked.items()}
    ev["podSet"] = ps.name
    ev["rebuilt"] = ps.message()
    _compare(ev)
    if ps.uncovered:
        return Decision(word=words.QUEUE_MISCONFIGURED, reason=ev["rebuilt"])
    key = ("flavors", id(ps))
    if key not in world.memo:
        world.memo[key] = [_flavor_evidence(t, ev.get("clusterQueue", ""), world) for t in ps.tries]
    ev["flavors"] = world.memo[key]
    if ps.tries and all(t.ruled_out for t in ps.tries):
        names = ", ".join(t.flavor for t in ps.tries)
        cq = ev.get("clusterQueue", "")
        if not any(t.selector_ok for t in ps.tries):
            return Decision(word=words.SELECTOR_MISMATCH,
                            reason=f"no ResourceFlavor of the queue matches the pod's nodeSelector/affinity "
                                   f"(flavor {names}): fix the selector or the flavor's nodeLabels",
                            action=_flavor_labels_action(ps, cq, world))
        taints = "; ".join(f"{t.flavor}: {t.taint}" for t in ps.tries if t.taint)
        return Decision(word=words.UNTOLERATED_TAINT,
                        reason=f"every ResourceFlavor of the queue has a nodeTaint the pod does not tolerate ({taints})",
                        action=_flavor_taints_action(ps))
    tried = [t for t in ps.tries if not t.ruled_out]
    too_large = all(any(r.problem == "too-large" for r in t.resources) for t in tried)
    ev["too_large"] = too_large
    head = "more than the queue can ever give (too-large): " if too_large else "the queue's free quota is short now: "
    return Decision(word=words.QUEUE_QUOTA, reason=head + ev["rebuilt"], action=_quota_action(ev, tried, too_large))


def _quota_action(ev: dict, tried: list, too_large: bool) -> str:
    """queue-quota's action with the ClusterQueue and the short resource named; too large waits for nothing."""
    cq = ev.get("clusterQueue") or "the ClusterQueue"
    short = next((r for t in tried for r in t.resources if r.problem), None)
    if short is None:
        return f"wait for ClusterQueue {cq} to have room, or raise its quota"
    asked, most = format_units(short.resource, short.asked), format_units(short.resource, short.most)
    if too_large:
        return (f"ClusterQueue {cq} can never give {asked} {short.resource} (at most {most}, even with the queue "
                f"empty): shrink the workload, or raise the queue's nominal quota or borrowing limit")
    free = format_units(short.resource, max(short.free, 0))
    return (f"wait for workloads in ClusterQueue {cq} to finish ({free} {short.resource} free now, {asked} "
            f"asked), or raise the queue's quota")


def _checks_action(w: Workload, waiting: list[tuple[str, str, str]], controllers: dict[str, str]) -> str:
    """Quota reserved, admission checks not Ready: Kueue admits (and ungates the pods) once every check of the
    Workload is Ready; each check is its controller's to decide (e.g. a ProvisioningRequest's autoscaler)."""
    name, state, message = waiting[0]
    owner = controllers.get(name)
    who = f"{owner}, the controller of AdmissionCheck {name}" if owner else f"the controller of AdmissionCheck {name}"
    said = f": \"{message}\"" if message else ""
    more = f" (and {len(waiting) - 1} more check(s))" if len(waiting) > 1 else ""
    return (f"look at {who}: it has not set the check Ready for Workload {w.key} ({state or 'Pending'}{said}){more}; "
            f"Kueue removes the gate once every check is Ready")


def _flavor_labels_action(ps: PodSetOutcome, cq: str, world: QueueWorld) -> str:
    """selector-mismatch at the queue: Kueue places the workload only on a flavor whose nodeLabels the pod's
    nodeSelector and required affinity accept (flavorassigner), so the labels of each flavor are named."""
    flavors = world.kueue.flavors
    shown = []
    for t in ps.tries[:3]:
        f = flavors.get(t.flavor)
        if f is None:
            shown.append(f"{t.flavor} (not found)")
            continue
        labels = ", ".join(f"{k}={v}" for k, v in sorted(f.node_labels.items()))
        shown.append(f"{t.flavor} ({labels or 'no nodeLabels'})")
    more = f" and {len(ps.tries) - 3} more" if len(ps.tries) > 3 else ""
    return (f"make the pod's nodeSelector/affinity accept a ResourceFlavor of ClusterQueue {cq}: "
            f"{', '.join(shown)}{more}; or change those flavors' nodeLabels")


def _flavor_taints_action(ps: PodSetOutcome) -> str:
    """untolerated-taint at the queue: a flavor's nodeTaints rule it out unless the pod tolerates them."""
    by_taint: dict[str, list[str]] = {}
    for t in ps.tries:
        if t.taint is not None:
            by_taint.setdefault(toleration_text(t.taint), []).append(t.flavor)
    toleration, flavors = next(iter(by_taint.items()))
    return (f"add the toleration {toleration} to the pod (ResourceFlavor {', '.join(flavors)} "
            f"{'carries' if len(flavors) == 1 else 'carry'} it as a nodeTaint), or remove the nodeTaint from the flavor")


def _flavor_evidence(t, cq: str, world: QueueWorld) -> dict:
    out: dict = {"flavor": t.flavor}
    if t.ruled_out:
        out["ruled_out"] = t.reasons[0] if t.reasons else ""
        return out
    reserved = world.tree.reserved.get(cq, {})
    rows = []
    for r in t.resources:
        holders = reserved[(t.flavor, r.resource)].workloads if (t.flavor, r.resource) in reserved else ()
        # The workloads are named for what is short (who to ask to give it back); for the rest, how many hold
        # some: 15,000 waiting workloads each naming 20 holders of cpu and memory were 60 MB of -o json.
        named = holders[:MAX_HOLDERS] if r.problem else ()
        rows.append({"resource": r.resource, "asked": format_units(r.resource, r.asked),
                     "nominal": format_units(r.resource, r.nominal),
                     "borrowing_limit": None if r.borrowing_limit is None else format_units(r.resource, r.borrowing_limit),
                     "reserved": format_units(r.resource, r.reserved), "free": format_units(r.resource, r.free),
                     "most": format_units(r.resource, r.most), "short": r.problem or None,
                     "reserved_by": [f"{name} ({format_units(r.resource, u)})" for name, u in named],
                     "reserved_by_more": len(holders) - len(named)})
    out["resources"] = rows
    return out


@prose.says("gang")
def _gang_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [f"Gang {value.get('podGroup')}: minMember {value.get('minMember')}, {value.get('placed')} placed, "
            f"{value.get('needed_now')} needed now, {value.get('fit_now')} fit now."]


# A queue's words: the queue held the pod, no node was asked, so no scheduler message is rebuilt for it.
HELD = frozenset((words.SCHEDULING_GATED, words.QUEUE_MISCONFIGURED, words.QUEUE_QUOTA, words.QUEUE_TOPOLOGY))


class QueuesFamily(Plain):
    def asks_nodes(self, answered: Answered) -> bool:
        # Also a queue that answered with the funnel's words (every flavor ruled out): it rebuilt its own message.
        return answered.word not in HELD and not (answered.case.evidence.get("queue") or {}).get("rebuilt")


# A queue holds it (Kueue, Volcano). Every flavor ruled out by the pod's selector or tolerations gives the funnel's
# own words (selector-mismatch, untolerated-taint, listed at their rows), the flavor named.
FAMILY: Family = QueuesFamily(name="queues", kinds=(
    catalog.WORKLOADS, catalog.LOCALQUEUES, catalog.CLUSTERQUEUES, catalog.RESOURCEFLAVORS, catalog.COHORTS,
    catalog.ADMISSIONCHECKS, catalog.TOPOLOGIES, catalog.PODGROUPS, catalog.VOLCANO_QUEUES, catalog.VOLCANO_JOBS),
    rules=(Rule(rows="8-11", words=(words.QUEUE_MISCONFIGURED, words.QUEUE_QUOTA, words.QUEUE_TOPOLOGY,
                                    words.SCHEDULING_GATED), decide=decide),
           Rule(rows="33", words=(words.EXHAUSTED,), decide=gang)))  # a Volcano gang: minMember pods at once

