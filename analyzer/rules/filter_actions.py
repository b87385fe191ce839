"""The next action for the funnel's filter words, with this pod's objects named (causes.md's action column):
the inter-pod rule and the pods it counts (`pod-affinity`); the spread constraint and the domain that lacks capacity
(`topology-spread`); the claim and the volume or class that keeps its data from the candidates
(`volume-node-conflict`). Made once per funnel (rules/funnel_actions.py calls them), from the funnel's last stage
and the same rules its filters judged with.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer import words
from analyzer.model.nodes import NodeView
from analyzer.model.quantity import format_units
from analyzer.model.views import Cluster
from analyzer.rules import interpod, spread, volumes
from analyzer.rules.funnel_result import FunnelResult, StageResult
from analyzer.text import some_names, verb

NAMED = 3  # pods and domains named in an action; the rest are counted (text.some_names)


# -- pod-affinity and topology-spread: the rule named, and the pods or the domain it counts ----------------------

def _first_nodes(stage: StageResult) -> list[NodeView]:
    """The first node of each group the stage removed (a group shares one text, so one rule): every group, so the
    pods and domains the action counts are all of them (once per funnel)."""
    return [stage.nodes[int(group.at[0])] for group in stage.groups]


def _domains(domains: list[str], key: str) -> str:
    """A few key=value domains by name; many (one per node for kubernetes.io/hostname) by their number."""
    return some_names(domains, NAMED) if len(domains) <= NAMED else f"{len(domains)} {key} domains"


def _pod_affinity(funnel: FunnelResult, cluster: Cluster) -> str | None:
    """causes.md: relax the rule (named), or move the pods it counts: the pod's own anti-affinity with the pods
    in the candidates' domains, its own affinity with where no matching pod runs, or the bound pods whose
    anti-affinity forbids it."""
    found: dict[tuple[str, str], list[interpod.Breach]] = {}
    for node in _first_nodes(funnel.last):
        b = interpod.breach(funnel.facts, node, cluster)
        if b is not None:
            found.setdefault((b.rule, b.term), []).append(b)
    parts = []
    for (rule, term), breaches in found.items():
        pods = list(dict.fromkeys(p for b in breaches for p in b.pods))
        domains = list(dict.fromkeys(b.domain for b in breaches if b.domain))
        key = breaches[0].key
        if rule == "anti":
            parts.append(f"relax this pod's required pod anti-affinity ({term}), or move the pods it counts: "
                         f"{some_names(pods)} (in {_domains(domains, key)})")
        elif rule == "existing":
            parts.append(f"relax the required anti-affinity ({term}) of {some_names(pods)}, or move {verb(pods, 'it', 'them')}: "
                         f"{verb(pods, 'it forbids', 'they forbid')} this pod in {_domains(domains, key)}")
        elif domains:
            parts.append(f"relax this pod's required pod affinity ({term}), or run a pod it matches in "
                         f"{_domains(domains, key)}, where the candidates are")
        elif any(b.text.endswith(f"the node has no label {key}") for b in breaches):
            parts.append(f"relax this pod's required pod affinity ({term}), or label the candidates with {key}")
        else:
            parts.append(f"relax this pod's required pod affinity ({term}), or start a pod it matches: none runs "
                         f"anywhere")
    return "; ".join(parts) or None


def _topology_spread(funnel: FunnelResult, cluster: Cluster) -> str | None:
    """causes.md: relax the constraint, or add capacity in the domain that lacks it: the constraint the candidates
    break, and its least loaded domains (or, below minDomains, another domain)."""
    texts = [spread.failure(funnel.facts, node, cluster) for node in _first_nodes(funnel.last)]
    parts = []
    for d in spread.state(funnel.facts, cluster):
        c = d.constraint
        broken = [t for _, t in filter(None, texts) if t.startswith(f"topology spread ({c}): ")]
        if not broken:
            continue
        if all(t.endswith(f"the node has no label {c.topology_key}") for t in broken):
            parts.append(f"relax the topology spread ({c}), or label the candidates with {c.topology_key}")
        elif c.min_domains and len(d.counts) < c.min_domains:
            parts.append(f"relax the topology spread ({c}), or add capacity in another {c.topology_key}: "
                         f"{len(d.counts)} of minDomains {c.min_domains} have a node it may use")
        else:
            low = [f"{c.topology_key}={v}" for v, n in sorted(d.counts.items()) if n == d.minimum]
            parts.append(f"relax the topology spread ({c}), or add capacity in {some_names(low)}, the least loaded "
                         f"({d.minimum} matching pod(s))")
    return "; ".join(parts) or None


# -- volume-node-conflict: the claim, the volume or class that keeps its data away from the candidates ----------

def _volumes(funnel: FunnelResult, cluster: Cluster) -> str | None:
    """causes.md: put the data where the GPU nodes are (or GPU nodes where the data is), with the claim, the
    volume it is bound to or the class that cannot make one, and the candidates named (the first claim that keeps
    every candidate out, by the same rules the stage judged with). The rules are asked of the first node of each
    group the stage removed (a group shares one text, so one failure): a thousand local volumes times five thousand
    nodes would be asked five million times."""
    removed = funnel.last.removed_views()
    if not removed:
        return None
    where = some_names([n.name for n in removed])
    nodes = _first_nodes(funnel.last)
    bound, delayed = volumes.state(funnel.facts, cluster)
    for b in bound:
        if not any(volumes.volume_usable(b.volume, n) for n in nodes):
            return (f"move claim {b.claim.key}'s data to a volume {where} can use (PersistentVolume {b.volume.name} "
                    f"has node affinity {volumes.terms_text(b.volume.terms)}), or add a GPU node it allows")
        zones = [volumes.zone_problem(b.volume, n) for n in nodes]
        if all(zones):
            return (f"move claim {b.claim.key}'s data to a volume in the zone of {where} (PersistentVolume "
                    f"{b.volume.name} is in {min(z for z in zones if z)}), or add a GPU node there")
    for d in delayed:
        if d.claim.selected_node and all(d.claim.selected_node != n.name for n in nodes):
            return (f"wait for claim {d.claim.key}'s volume, being provisioned for node {d.claim.selected_node}, or "
                    f"delete the claim so the scheduler chooses again (annotation volume.kubernetes.io/selected-node)")
        if any(volumes.volume_usable(v, n) for v in d.candidates for n in nodes):
            continue
        more = len(d.candidates) - 1
        pinned = (f" ({d.candidates[0].name} is only for {volumes.terms_text(d.candidates[0].terms)}"
                  + (f", and {more} more {verb(range(more), 'is', 'are')} for other nodes" if more else "") + ")"
                  if d.candidates else "")
        if not d.provisioner:
            return (f"create a PersistentVolume of class {d.class_name} for claim {d.claim.key} that {where} can "
                    f"use{pinned}, or give StorageClass {d.class_name} a provisioner")
        if not any(volumes.allowed(d.allowed, n) for n in nodes):
            return (f"add {where} to StorageClass {d.class_name}'s allowedTopologies, or add a GPU node inside them "
                    f"(claim {d.claim.key})")
        if not any(volumes.capacity_ok(d, n, cluster) for n in nodes):
            return (f"free or add storage of class {d.class_name} that {where} can reach (no CSIStorageCapacity "
                    f"there holds the {format_units('ephemeral-storage', d.claim.request or 0)} claim {d.claim.key} "
                    f"asks), or shrink the claim")
    return None


FILTER_COMPOSERS: dict[str, Callable[[FunnelResult, Cluster], str | None]] = {
    words.POD_AFFINITY: _pod_affinity,
    words.TOPOLOGY_SPREAD: _topology_spread,
    words.VOLUME_NODE_CONFLICT: _volumes,
}
