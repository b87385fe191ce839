"""queue-topology (causes.md, queues.md): the quota would admit the workload, but Kueue's topology-aware
placement finds no domain of the required level where the whole pod set fits.

Kueue v0.19: pkg/scheduler/flavorassigner/tas_flavorassigner.go (a pod set asking a topology takes a flavor with
`topologyName`; `Flavor %q does not contain the requested level`), pkg/cache/scheduler/tas_flavor_snapshot.go
(the domains and the failure texts, model/queue_topology.py), flavorassigner.go (the failure becomes the pod set's
reason: `couldn't assign flavors to pod set %s: <reason>`, the Workload's QuotaReserved message). A preferred or
unconstrained request never refuses: Kueue falls back to a higher level, then to several domains.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from analyzer import words
from analyzer import prose
from analyzer.model.quantity import format_units
from analyzer.model.queue_topology import Domain, FlavorTopology, Placement, Ranking, rank, snapshot
from analyzer.model.queue_world import QueueWorld
from analyzer.model.queues import ClusterQueue, Workload
from analyzer.model.views import Cluster
from analyzer.rules.case import Decision
from analyzer.rules.queue_flavors import PodSetOutcome

__all__ = ["missing_topologies", "topology_refusal"]


def missing_topologies(cq: ClusterQueue, world: QueueWorld) -> list[str]:
    """Kueue's ClusterQueue is inactive (TopologyNotFound) while a TAS flavor of it names no Topology there:
    `there is no Topology %q for TAS flavor %q` (pkg/cache/scheduler/clusterqueue.go; the real text in
    test/integration/singlecluster/tas/tas_test.go)."""
    k = world.kueue
    out = []
    for name in cq.flavor_names():
        flavor = k.flavors.get(name)
        if flavor is not None and flavor.topology and flavor.topology not in k.topologies:
            out.append(f'there is no Topology "{flavor.topology}" for TAS flavor "{name}"')
    return out


def _snapshot(flavor_name: str, world: QueueWorld, cluster: Cluster) -> FlavorTopology:
    key = ("topology", flavor_name)
    if key not in world.memo:  # once per flavor: the nodes, their level values and free capacity
        flavor = world.kueue.flavors[flavor_name]
        world.memo[key] = snapshot(flavor, world.kueue.topologies[flavor.topology], cluster)
    return world.memo[key]


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """What the topology check decides for one workload: every pod of it shares it."""

    decision: Decision
    rebuilt: str  # Kueue's QuotaReserved message, rebuilt
    placement: dict | None = None  # the case's `topology` evidence


def topology_refusal(w: Workload, outcomes: list[PodSetOutcome], world: QueueWorld, cluster: Cluster, cq: str,
                     ev: dict, evidence: dict) -> Decision | None:
    """The first pod set with a required topology that no domain takes whole (Kueue stops there too). `ev` is
    the queue's evidence (Kueue's message rebuilt), `evidence` the case's (the placement, under `topology`)."""
    key = ("topology-refusal", w.key, cq)
    if key not in world.memo:
        world.memo[key] = _refusal(w, outcomes, world, cluster, cq)
    refusal: Refusal | None = world.memo[key]
    if refusal is None:
        return None
    ev["rebuilt"] = refusal.rebuilt
    said = (ev.get("kueue_said") or {}).get("message")
    if said is not None:
        ev["agrees"] = said == refusal.rebuilt
    if refusal.placement is not None:
        evidence["topology"] = refusal.placement
    return refusal.decision


def _refusal(w: Workload, outcomes: list[PodSetOutcome], world: QueueWorld, cluster: Cluster,
             cq: str) -> Refusal | None:
    k = world.kueue
    for ps, outcome in zip(w.pod_sets, outcomes):
        if ps.topology is None or ps.count == 0:
            continue
        mode, level = ps.topology
        head = f"couldn't assign flavors to pod set {ps.name}: "
        assigned = list(dict.fromkeys(outcome.assigned.values()))
        tas = [f for f in assigned if f in k.flavors and k.flavors[f].topology]
        if not tas and assigned:  # checkPodSetAndFlavorMatchForTAS: a pod set asking a topology takes no other flavor
            return Refusal(rebuilt=head + ", ".join(f'Flavor "{f}" does not support TopologyAwareScheduling'
                                                    for f in assigned),
                           decision=Decision(word=words.QUEUE_MISCONFIGURED,
                                             reason=f"pod set {ps.name} asks for topology-aware placement ({mode}"
                                                    f"{' ' + level if level else ''}), but no ResourceFlavor of "
                                                    f"ClusterQueue {cq} names a Topology (spec.topologyName): Kueue "
                                                    f"never admits it there"))
        if mode != "required" or len(tas) != 1 or k.flavors[tas[0]].topology not in k.topologies:
            continue  # preferred / unconstrained fall back; a flavor without a topology is not placed by one
        flavor = k.flavors[tas[0]]
        snap = _snapshot(flavor.name, world, cluster)
        if not snap.levels:
            return Refusal(rebuilt=f"Topology {flavor.topology} has no levels",
                           decision=Decision(word=words.QUEUE_MISCONFIGURED,
                                             reason=f"ResourceFlavor {flavor.name} names Topology {flavor.topology}, "
                                                    f"which has no levels (spec.levels is empty): Kueue cannot place "
                                                    f"pod set {ps.name} by it"))
        if level not in snap.levels:
            return Refusal(rebuilt=head + f'Flavor "{flavor.name}" does not contain the requested level',
                           decision=Decision(word=words.QUEUE_MISCONFIGURED,
                                             reason=f"pod set {ps.name} requires topology level {level}, which "
                                                    f"Topology {flavor.topology} (of ResourceFlavor {flavor.name}) "
                                                    f"does not have: its levels are {', '.join(snap.levels)}"))
        placed = Placement(ranking=_ranking(snap, flavor.name, ps.spec, ps.requests, level, world), count=ps.count)
        if placed.fits:
            continue
        lacks = placed.lacks(ps.requests)
        placement = {"topology": flavor.topology, "levels": list(snap.levels), "flavor": flavor.name, "level": level,
                     "podSet": ps.name, "pods": ps.count, "domains": len(placed.ranking.domains),
                     "nodes": placed.ranking.total_nodes, "left_out": snap.left_out,
                     "excluded": placed.ranking.excluded or None,
                     "best": None if placed.best is None else _domain(snap, placed.best),
                     "next": [_domain(snap, d) for d in placed.runners_up],
                     "lacks": {r: format_units(r, v) for r, v in sorted(lacks.items())}}
        return Refusal(rebuilt=head + placed.failure, placement=placement,
                       decision=Decision(word=words.QUEUE_TOPOLOGY, reason=_reason(placement, flavor.topology)))
    return None


def _ranking(snap: FlavorTopology, flavor: str, spec: dict, requests: dict[str, int], level: str,
             world: QueueWorld) -> Ranking:
    """Once per flavor, level and pod shape: the pods of every workload of one shape ask the same."""
    shape = json.dumps([sorted(requests.items()), spec.get("nodeSelector"), spec.get("affinity"),
                        spec.get("tolerations")], sort_keys=True, default=str)
    key = ("ranking", flavor, level, shape)
    if key not in world.memo:
        world.memo[key] = rank(snap, world.kueue.flavors[flavor], spec, requests, level)
    return world.memo[key]


def _domain(snap: FlavorTopology, d: Domain) -> dict:
    """A domain named by its own level's label and value, the levels above it beside."""
    names = [f"{label}={value}" for label, value in zip(snap.levels, d.values)]
    return {"domain": names[-1], "within": names[:-1], "holds": d.holds, "nodes": d.nodes}


def _reason(t: dict, topology: str) -> str:
    where = f"Topology {topology} (ResourceFlavor {t['flavor']}) requires all {t['pods']} pod(s) of pod set " \
            f"{t['podSet']} in one {t['level']} domain"
    best = t["best"]
    if best is None:
        return f"{where}, but no node carries the label {t['level']} with the flavor's labels: no domain at all"
    lacks = ", ".join(f"{v} {r}" for r, v in t["lacks"].items() if r != "pods")
    short = (f"it lacks {lacks}" if lacks else "its free capacity is split across its nodes")
    room = f"has room for only {best['holds']} of them" if best["holds"] else "has room for none of them"
    return (f"{where}; the best, {best['domain']}, {room} now ({short}): "
            "free that domain, shrink the pod set, or relax the topology to preferred")


@prose.says("topology")
def _says_topology(value: object) -> list[str]:
    t = value if isinstance(value, dict) else {}
    out = [f"ResourceFlavor {t.get('flavor')} places pods by Topology {t.get('topology')}; pod set {t.get('podSet')} "
           f"requires its {t.get('pods')} pod(s) in one domain of level {t.get('level')}."]
    levels = t.get("levels") or ()
    if levels:
        out.append(f"Topology {t.get('topology')}'s levels, highest first: {', '.join(str(x) for x in levels)}.")
    out.append(f"That level has {t.get('domains')} domain(s) over {t.get('nodes')} node(s) of the flavor.")
    best = t.get("best")
    if isinstance(best, dict):
        within = f" (in {', '.join(best.get('within') or ())})" if best.get("within") else ""
        out.append(f"The best domain, {best.get('domain')}{within}, has {best.get('nodes')} node(s) and room for "
                   f"{best.get('holds')} of the {t.get('pods')} pod(s) now.")
    others = [d for d in t.get("next") or () if isinstance(d, dict)]
    if others:
        out.append("Next: " + "; ".join(f"{d.get('domain')} has room for {d.get('holds')} pod(s) on "
                                        f"{d.get('nodes')} node(s)" for d in others) + ".")
    lacks = t.get("lacks") or {}
    if lacks:
        out.append("For the whole pod set it lacks " + ", ".join(f"{v} {r}" for r, v in lacks.items()) + ".")
    if t.get("excluded"):
        out.append(f"Nodes Kueue leaves out for this pod set: {t['excluded']}.")
    left = t.get("left_out") or {}
    if left:
        out.append("Nodes with the flavor's labels that Kueue leaves out of the topology: "
                   + "; ".join(f"{why}: {n} node(s)" for why, n in sorted(left.items())) + ".")
    return out
