"""Topology spread (causes.md `topology-spread`; filters.md): every DoNotSchedule constraint.

Source: kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering.go (calPreFilterState, Filter) and
common.go. The pods matching the constraint's selector in the pod's namespace are counted per domain of the
topology key, over the nodes that carry every constraint's key and pass the node inclusion policies
(nodeAffinityPolicy Honor: the pod's nodeSelector and required node affinity; nodeTaintsPolicy Honor: its
tolerations); a domain with eligible nodes and no pod counts 0. A node fails when it lacks the key (`missing
required label`) or when its domain's count + 1 (if the pod matches its own selector) - the minimum over the
domains > maxSkew; with minDomains above the number of domains the minimum is 0. The cluster's default
constraints are ScheduleAnyway unless configured otherwise: they never block, and are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from analyzer.model.columns import NodeColumns, distinct
from analyzer.model.matching import untolerated
from analyzer.model.nodes import NodeView
from analyzer.model.placement import Matched
from analyzer.model.pod_filters import SpreadConstraint
from analyzer.model.selector_columns import selector_mask
from analyzer.model.views import Cluster
from analyzer.rules.checks import PodFacts
from analyzer.rules.reason import Check, Reason

SPREAD = "node(s) didn't match pod topology spread constraints"  # podtopologyspread.ErrReasonConstraintsNotMatch
SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"


@dataclass(frozen=True, kw_only=True)
class Domains:
    constraint: SpreadConstraint
    counts: dict[str, int]  # domain value -> matching pods (every eligible domain, 0 included)
    minimum: int | None  # None: no eligible domain (the constraint cannot fail on skew)
    names: dict[str, list[str]]  # domain value -> the first few matching pods


def state(pod: PodFacts, cluster: Cluster) -> list[Domains]:
    """PreFilter: per constraint the matching pods per eligible domain, once per pod shape, from the node columns
    (tests/reference_funnel.py counts them node by node, the reference)."""
    cached = pod.state.spread
    if cached is None:
        cached = pod.state.spread = by_columns(pod, cluster)
    return cached


class _MatchedCounts(NamedTuple):
    matched: Matched  # held with its counts: the memo's key is its id
    per_node: np.ndarray


def _per_node(cols: NodeColumns, matched: Matched) -> np.ndarray:
    """A Matched's counts per node as an array over the nodes (kept while the Matched is: placement keeps it)."""
    key = ("matched", id(matched))
    found = cols.memo.get(key)
    if not isinstance(found, _MatchedCounts):
        found = cols.memo[key] = _MatchedCounts(
            matched=matched, per_node=np.array([matched.counts.get(name, 0) for name in cols.names], dtype=np.int64))
    return found.per_node


def by_columns(pod: PodFacts, cluster: Cluster) -> list[Domains]:
    """Eligibility and the counts per domain as vector operations over the node columns."""
    cols, f, placement = cluster.columns, pod.filters, cluster.placement
    if cols is None or f is None or not f.spread or placement is None:
        return []
    selected = selector_mask(cols, pod.node_selector, pod.terms, "", cols.everything)
    nodes = cluster.nodes or []
    per_kind = np.array([bool(untolerated(nodes[i].taints, pod.tolerations)) for i in cols.taint_kinds], dtype=bool)
    tainted = per_kind[cols.taint_kind]
    keyed = np.logical_and.reduce([cols.domains(c.topology_key).codes > 0 for c in f.spread])
    out = []
    for c in f.spread:
        m = placement.match(((c.selector, frozenset((f.namespace,))),))
        eligible = keyed & selected if c.honor_affinity else keyed.copy()
        if c.honor_taints:
            eligible &= ~tainted
        col = cols.domains(c.topology_key)
        codes = col.codes[eligible]
        sums = np.bincount(codes, weights=_per_node(cols, m)[eligible], minlength=len(col.values) + 1)
        counts = {col.values[k - 1]: int(sums[k]) for k in distinct(codes)[0].tolist()}
        names: dict[str, list[str]] = {v: [] for v in counts}
        for i in sorted(cols.position[name] for name in m.names if name in cols.position):
            if eligible[i]:
                shown = names[col.values[col.codes[i] - 1]]
                shown.extend(m.names[cols.names[i]][: 3 - len(shown)])
        minimum = min(counts.values()) if counts else None
        if minimum is not None and c.min_domains and len(counts) < c.min_domains:
            minimum = 0
        out.append(Domains(constraint=c, counts=counts, minimum=minimum, names=names))
    return out


def failure(pod: PodFacts, node: NodeView, cluster: Cluster) -> tuple[str, str] | None:
    for d in state(pod, cluster):
        c = d.constraint
        value = node.labels.get(c.topology_key)
        if value is None:
            return SPREAD_MISSING_LABEL, f"topology spread ({c}): the node has no label {c.topology_key}"
        if d.minimum is None:
            continue
        here = d.counts.get(value, 0)
        skew = here + (1 if c.self_match else 0) - d.minimum
        if skew > c.max_skew:
            low = "minDomains not reached, so the minimum is 0" if (c.min_domains and len(d.counts) < c.min_domains) \
                else f"the least loaded domain has {d.minimum}"
            return SPREAD, (f"topology spread ({c}): {c.topology_key}={value} has {here} matching pod(s), {low}: "
                            f"skew {skew} > maxSkew {c.max_skew}")
    return None


def spread_applies(pod: PodFacts, cluster: Cluster) -> bool:
    return pod.filters is not None and bool(pod.filters.spread) and not pod.pin


def check_spread(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """`topology-spread`, and the scheduler's PodTopologySpread filter."""
    if not spread_applies(pod, cluster):
        return None
    found = failure(pod, node, cluster)
    return Reason(check=Check.TOPOLOGY_SPREAD, text=found[1], scheduler=(found[0],)) if found else None


def evidence(pod: PodFacts, cluster: Cluster) -> list[dict]:
    """Per constraint: the count per domain and the skew the pod would make there."""
    out = []
    for d in state(pod, cluster):
        c = d.constraint
        self_n = 1 if c.self_match else 0
        out.append({"constraint": str(c), "minimum": d.minimum, "domains": [
            {"domain": f"{c.topology_key}={v}", "pods": n, "skew_with_pod": None if d.minimum is None else n + self_n - d.minimum,
             "some": d.names.get(v, [])} for v, n in sorted(d.counts.items())[:50]]})
    return out
