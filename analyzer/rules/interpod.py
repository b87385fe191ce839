"""Inter-pod affinity (causes.md `pod-affinity`; filters.md): the pod's required podAffinity and
podAntiAffinity, and every existing pod's required anti-affinity against this pod (symmetry).

Source: kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go. PreFilter counts, per topology
pair, the existing pods that match ALL the pod's affinity terms, those that match each anti-affinity term, and
the existing pods whose anti-affinity terms match the pod; Filter checks affinity (every term's key on the node
and a matching pod in its domain; the first pod of a group passes when no pod anywhere matches and the pod matches
its own terms), then anti-affinity, then the existing pods' anti-affinity. Here the counts are made once per pod
shape from the placement groups (model/placement.py), and each node looks its domains up.
"""

from __future__ import annotations

from dataclasses import dataclass, field


from analyzer.model.nodes import NodeView
from analyzer.model.pod_filters import AffinityTerm, PodFilters, existing_anti_terms
from analyzer.model.views import Cluster
from analyzer.rules.checks import PodFacts
from analyzer.rules.reason import Check, Reason

AFFINITY_RULES = "node(s) didn't match pod affinity rules"  # interpodaffinity.ErrReasonAffinityRulesNotMatch
ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
AFFINITY_OLD = "node(s) didn't match pod affinity/anti-affinity"  # written before these, by servers before v1.22


@dataclass(kw_only=True)
class InterPodState:
    """Per pod shape: pods per topology domain for each term, and the domains existing pods forbid."""

    affinity: list[tuple[AffinityTerm, dict[str, int], dict[str, list[str]]]] = field(default_factory=list)
    affinity_anywhere: bool = False  # some existing pod matches all the affinity terms
    self_match: bool = False  # the pod matches its own affinity terms
    anti: list[tuple[AffinityTerm, dict[str, int], dict[str, list[str]]]] = field(default_factory=list)
    # (topology key, value) -> the existing pods whose anti-affinity forbids this pod there, and the term
    forbidden: dict[tuple[str, str], tuple[list[str], str]] = field(default_factory=dict)
    forbidden_keys: tuple[str, ...] = ()  # the topology keys of `forbidden`, sorted: the order nodes are judged in
    unknown: str = ""


def _domains(cluster: Cluster, key: str, counts: dict[str, int], names: dict[str, list[str]]
             ) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Per node counts -> per value of `key` (nodes without the key count nowhere, as in the scheduler)."""
    per: dict[str, int] = {}
    shown: dict[str, list[str]] = {}
    for node, n in counts.items():
        view = cluster.nodes_by_name.get(node)
        value = view.labels.get(key) if view is not None else None
        if value is None:
            continue
        per[value] = per.get(value, 0) + n
        got = shown.setdefault(value, [])
        got.extend(names.get(node, [])[: 3 - len(got)])
    return per, shown


def _matches_pod(term: AffinityTerm, f: PodFilters) -> bool:
    return (term.namespaces is None or f.namespace in term.namespaces) and term.selector.matches(f.labels)


def state(pod: PodFacts, cluster: Cluster) -> InterPodState:
    cached = pod.state.interpod
    if cached is not None:
        return cached
    s = InterPodState()
    f, placement = pod.filters, cluster.placement
    if f is not None and placement is not None:
        if f.affinity:
            every = placement.match(tuple((t.selector, t.namespaces) for t in f.affinity))
            s.self_match = all(_matches_pod(t, f) for t in f.affinity)
            for t in f.affinity:
                s.affinity.append((t, *_domains(cluster, t.topology_key, every.counts, every.names)))
            # topologyToMatchedAffinityTerms is empty: no matching pod on a node that has the term's key
            s.affinity_anywhere = any(any(counts.values()) for _, counts, _ in s.affinity)
        for t in f.anti:
            m = placement.match(((t.selector, t.namespaces),))
            s.anti.append((t, *_domains(cluster, t.topology_key, m.counts, m.names)))
        s.unknown = next((t.unknown for t in f.affinity + f.anti if t.unknown), "")
        _existing(s, f, cluster)
    pod.state.interpod = s
    return s


def _existing(s: InterPodState, f: PodFilters, cluster: Cluster) -> None:
    """Symmetry: each bound pod's required anti-affinity term that matches this pod forbids its domains.
    It depends only on which terms match (PodFilters.anti_matched): made once per such set and shared."""
    placement = cluster.placement
    assert placement is not None  # inter-pod rules apply only where bound pods were placed (interpod_applies)
    memo: dict = placement.memo.setdefault("forbidden", {})
    found = memo.get(f.anti_matched)
    if found is None:
        found = memo[f.anti_matched] = _forbidden(f.anti_matched, cluster)
    s.forbidden = found
    s.forbidden_keys = tuple(sorted({k for k, _ in found}))


def _anti_domains(cluster: Cluster, i: int) -> dict[tuple[str, str], list[str]]:
    """The domains the pods carrying the bound pods' anti-affinity term i (existing_anti_terms' order) are in
    ((key, value) -> the first few of them): made for a term when a pod it matches first asks, then kept. Most
    terms match no pending pod (a workload's own spread group), so most are never made."""
    placement = cluster.placement
    assert placement is not None
    memo: dict[int, dict[tuple[str, str], list[str]]] = placement.memo.setdefault("anti_domains", {})
    found = memo.get(i)
    if found is None:
        term, carriers = existing_anti_terms(placement)[i]
        found = {}
        for ns, per_node in carriers:
            for node, names in per_node.items():
                view = cluster.nodes_by_name.get(node)
                value = view.labels.get(term.topology_key) if view is not None else None
                if value is not None:
                    shown = found.setdefault((term.topology_key, value), [])
                    shown.extend(f"{ns}/{n}" for n in names[: 3 - len(shown)])
        memo[i] = found
    return found


def _forbidden(matched: tuple[int, ...], cluster: Cluster) -> dict[tuple[str, str], tuple[list[str], str]]:
    forbidden: dict[tuple[str, str], tuple[list[str], str]] = {}
    assert cluster.placement is not None  # as in _existing, its only caller
    terms = existing_anti_terms(cluster.placement)
    for i in matched:
        term = terms[i][0]
        for domain, names in _anti_domains(cluster, i).items():
            pods, _ = forbidden.setdefault(domain, ([], str(term)))
            pods.extend(names[: 3 - len(pods)])
    return forbidden


@dataclass(frozen=True, kw_only=True)
class Breach:
    """The first inter-pod rule a node breaks: the scheduler's reason, the text, and what the next action names."""

    scheduler: str
    text: str
    rule: str  # "affinity" (the pod's own), "anti" (the pod's own), "existing" (a bound pod's, against it)
    term: str
    pods: tuple[str, ...] = ()  # the pods it counts there (the first few)
    domain: str = ""  # key=value of the node ("" when it lacks the key, or no pod anywhere matches the affinity)
    key: str = ""  # the term's topology key


def breach(pod: PodFacts, node: NodeView, cluster: Cluster) -> Breach | None:
    """The first inter-pod rule the node breaks, in the scheduler's order."""
    s = state(pod, cluster)
    labels = node.labels
    missing = False
    for term, counts, _names in s.affinity:
        value = labels.get(term.topology_key)
        if value is None:
            return Breach(scheduler=AFFINITY_RULES, rule="affinity", term=str(term), key=term.topology_key,
                          text=f"required pod affinity ({term}): the node has no label {term.topology_key}")
        if not counts.get(value):
            missing = True
    if missing and not (not s.affinity_anywhere and s.self_match):
        term = s.affinity[0][0]
        where = ("no pod anywhere matches" if not s.affinity_anywhere
                 else "no matching pod in the node's " + ", ".join(f"{t.topology_key}={labels.get(t.topology_key)}"
                                                                    for t, c, _ in s.affinity
                                                                    if not c.get(labels.get(t.topology_key, ""))))
        return Breach(scheduler=AFFINITY_RULES, rule="affinity", term=str(term), key=term.topology_key,
                      domain=f"{term.topology_key}={labels.get(term.topology_key)}" if s.affinity_anywhere else "",
                      text=f"required pod affinity ({term}): {where}")
    for term, counts, names in s.anti:
        value = labels.get(term.topology_key)
        if value is not None and counts.get(value):
            more = counts[value] - len(names[value])
            return Breach(scheduler=ANTI_AFFINITY_RULES, rule="anti", term=str(term), pods=tuple(names[value]),
                          domain=f"{term.topology_key}={value}", key=term.topology_key,
                          text=(f"required pod anti-affinity ({term}): {', '.join(names[value])}"
                                + (f" and {more} more" if more > 0 else "") + f" in {term.topology_key}={value}"))
    for key in s.forbidden_keys:
        value = labels.get(key)
        hit = s.forbidden.get((key, value)) if value is not None else None
        if hit is not None:
            pods, term = hit
            return Breach(scheduler=EXISTING_ANTI_AFFINITY, rule="existing", term=term, pods=tuple(pods),
                          domain=f"{key}={value}", key=key,
                          text=f"{', '.join(pods)} in {key}={value} has required anti-affinity ({term}) against it")
    return None


def interpod_applies(pod: PodFacts, cluster: Cluster) -> bool:
    f = pod.filters
    return (f is not None and not pod.pin
            and bool(f.affinity or f.anti or (cluster.placement is not None and cluster.placement.anti)))


def check_interpod(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """`pod-affinity`, and the scheduler's InterPodAffinity filter (its fixed reason strings)."""
    if not interpod_applies(pod, cluster):
        return None
    found = breach(pod, node, cluster)
    if found is None:
        return None
    old = cluster.server_minor is not None and cluster.server_minor < 22
    return Reason(check=Check.POD_AFFINITY, text=found.text,
                  scheduler=((AFFINITY_OLD, found.scheduler) if old else (found.scheduler,)))
