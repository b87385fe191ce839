"""The inter-pod, spread and host-port filters over the node columns: per pod shape a code per node, not a check.

A codes function answers, for every node of the bundle, 0 where the check passes and otherwise a code such that
nodes with the same code get the same Reason (the same text, the same scheduler strings) from the stage's rule
(rules/interpod.py, spread.py, in_use.py, volumes.py), and nodes with different codes different texts (but in the
volume stage: `_SHARED_TEXTS`). The Reason of a code is then the rule on one of its nodes, made only when the
evidence names it. The codes are made once per pod shape over every node and kept (the funnel, the nearest nodes
and the rebuilt message each ask, for different nodes), and stay what the rules say node by node
(tests/test_filter_columns.py compares them on random clusters).

What the codes encode, per check, is exactly what its text reads of a node:
- inter-pod (rules/interpod.py): the first rule broken (an affinity term's key missing, no matching pod in the
  domain, an anti-affinity term's domain taken, an existing pod's anti-affinity), which term or key, and the
  node's values on the keys the text names;
- spread (rules/spread.py): the first constraint broken, missing key or skew, and the node's domain;
- host ports (rules/in_use.py): the node itself (the text names the pod holding the port there).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyzer.model.columns import LabelColumn, NodeColumns, distinct
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules import interpod, spread, volume_columns
from analyzer.rules.checks import PodFacts
from analyzer.rules.columnar import SMALL, Judged, _key_codes, columns_of, group
from analyzer.rules.in_use import (
    check_in_use,
    check_ports,
    check_rwop,
    check_volume_limits,
    in_use_applies,
    port_conflict,
)
from analyzer.rules.interpod import check_interpod, interpod_applies
from analyzer.rules.reason import Reason
from analyzer.rules.spread import check_spread, spread_applies
from analyzer.rules.volumes import check_volume_binding, check_volume_topology, check_volume_zone, volumes_apply

CheckFn = Callable[[PodFacts, NodeView, Cluster], Reason | None]


def _present(column: LabelColumn, values: dict[str, int]) -> np.ndarray:
    """Per code of the column (0: the key is absent): does the domain hold a matching pod?"""
    table = np.zeros(len(column.values) + 1, dtype=bool)
    for value, n in values.items():
        code = column.code.get(value)
        if n and code is not None:
            table[code] = True
    return table


class _FirstFailure:
    """Per node the first rule it breaks, which term or constraint, and the node's value on its key; nodes are
    decided once, in the check's own order."""

    def __init__(self, n: int) -> None:
        self.undecided = np.ones(n, dtype=bool)
        self.rule, self.which, self.value = (np.zeros(n, dtype=np.int64) for _ in range(3))

    def decide(self, hit: np.ndarray, rule: int, which: int, value: np.ndarray | None = None) -> None:
        hit = hit & self.undecided
        self.rule[hit], self.which[hit] = rule, which
        if value is not None:
            self.value[hit] = value[hit]
        self.undecided &= ~hit

    def codes(self, extra: list[np.ndarray]) -> np.ndarray:
        if self.undecided.all():
            return np.zeros(len(self.rule), dtype=np.int64)  # every node passes (most shapes, most terms)
        return _key_codes(np.stack([self.rule, self.which, self.value, *extra], axis=1))[0]




def interpod_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """interpod.failure for every node, as codes (module docstring); None without columns."""
    cols = cluster.columns
    if cols is None:
        return None
    if pod.state.interpod_codes is None:
        pod.state.interpod_codes = _interpod(pod, cluster, cols)
    return pod.state.interpod_codes


def _interpod(pod: PodFacts, cluster: Cluster, cols: NodeColumns) -> np.ndarray:
    s = interpod.state(pod, cluster)
    first = _FirstFailure(cols.n)
    extra: list[np.ndarray] = []
    if s.affinity:
        columns = [cols.domains(t.topology_key) for t, _, _ in s.affinity]
        for j, col in enumerate(columns):
            first.decide(col.codes == 0, 1, j)
        empty = [~_present(col, counts)[col.codes] for col, (_, counts, _) in zip(columns, s.affinity)]
        missing = first.undecided & np.logical_or.reduce(empty)
        if not (not s.affinity_anywhere and s.self_match):
            if s.affinity_anywhere:  # the text names the node's value of every term whose domain is empty
                extra = [np.where(missing & e, col.codes, 0) for e, col in zip(empty, columns)]
            first.decide(missing, 2, 0)
    for j, (t, counts, _) in enumerate(s.anti):
        col = cols.domains(t.topology_key)
        first.decide(_present(col, counts)[col.codes], 3, j, col.codes)
    for j, key in enumerate(s.forbidden_keys):
        col = cols.domains(key)
        first.decide(_present(col, {v: 1 for k, v in s.forbidden if k == key})[col.codes], 4, j, col.codes)
    return first.codes(extra)


def spread_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """spread.failure for every node, as codes (module docstring); None without columns."""
    cols = cluster.columns
    if cols is None:
        return None
    if pod.state.spread_codes is None:
        pod.state.spread_codes = _spread(pod, cluster, cols)
    return pod.state.spread_codes


def _spread(pod: PodFacts, cluster: Cluster, cols: NodeColumns) -> np.ndarray:
    first = _FirstFailure(cols.n)
    for j, d in enumerate(spread.state(pod, cluster)):
        c = d.constraint
        col = cols.domains(c.topology_key)
        first.decide(col.codes == 0, 1, j)
        if d.minimum is None:
            continue
        here = np.zeros(len(col.values) + 1, dtype=np.int64)
        for v, k in d.counts.items():
            here[col.code[v]] = k
        first.decide(here[col.codes] + (1 if c.self_match else 0) - d.minimum > c.max_skew, 2, j, col.codes)
    return first.codes([])


def ports_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """port_conflict for every node: 1 + the node's position where a pod there holds a port this pod asks for
    (the text names that pod). Only the nodes where some pod holds a host port are looked at."""
    cols, f, placement = cluster.columns, pod.filters, cluster.placement
    if cols is None:
        return None
    codes = np.zeros(cols.n, dtype=np.int64)
    if f is None or not f.ports or placement is None:
        return codes
    key = ("ports", f.ports, pod.nominated)
    found = cols.memo.get(key)
    if not isinstance(found, np.ndarray):
        nodes = cluster.nodes or []
        holding = set(placement.ports_on)
        if pod.nominated and cluster.nominated is not None:  # pods nominated by preemption hold their ports too
            holding.update(cluster.nominated.overlay(pod.nominated, cluster.usage).on)
        for name in holding:
            i = cols.position.get(name)
            if i is not None and port_conflict(pod, nodes[i], cluster) is not None:
                codes[i] = i + 1
        found = cols.memo[key] = codes
    return found


# Stages whose codes may differ where the texts do not: the volume stage's text is the first failure's alone, while
# a WaitForFirstConsumer claim failing after a bound claim's volume adds a scheduler string, or another claim the
# same string; its groups are merged by text where they are shown (funnel_text.text_groups), as node by node.
_SHARED_TEXTS = frozenset({check_volume_topology})


def judged(check: CheckFn, codes: np.ndarray | None, pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """A stage's Judged from codes over every node: the nodes of `at` grouped by code, each group's Reason
    the stage's rule on its first node (equal codes, equal Reason), made when asked for where codes and texts
    are one to one."""
    if codes is None:
        raise ValueError(f"no codes for {check.__name__}: the node columns exist wherever the funnel runs")
    nodes = columns_of(cluster).nodes
    mine = codes[at]
    if not mine.any():  # every node passes (most shapes, most filters)
        return Judged(kept=at, removed=[])
    first: dict[int, int] = {}
    if len(at) <= SMALL:
        for i, code in zip(at.tolist(), mine.tolist()):
            first.setdefault(code, i)
    else:
        seen, where, _ = distinct(mine)
        for code, i in zip(seen.tolist(), where.tolist()):
            first[code] = int(at[i])

    def reason(code: int) -> Reason:
        found = check(pod, nodes[first[code]], cluster)
        assert found is not None
        return found
    return group(at, mine, reason, lazy=check not in _SHARED_TEXTS)


def _rwop(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """check_rwop: a ReadWriteOncePod claim in use fails every node alike (the count is cluster-wide)."""
    cols, nodes = cluster.columns, cluster.nodes or []
    if cols is None:
        return None
    return np.full(cols.n, 1 if nodes and check_rwop(pod, nodes[0], cluster) is not None else 0, dtype=np.int64)


def _in_use(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """check_in_use: the port's codes (positive), then one code for a ReadWriteOncePod claim in use (it fails
    every node), then the CSI limit's (negative, node by node)."""
    ports = ports_codes(pod, cluster)
    if ports is None:
        return None
    nodes = cluster.nodes or []
    codes = ports.copy()
    if len(nodes) and check_rwop(pod, nodes[0], cluster) is not None:
        codes[codes == 0] = -1
    elif pod.filters is not None and pod.filters.claims:
        limits = volume_columns.limit_codes(pod, cluster)
        if limits is not None:
            codes = np.where((codes == 0) & (limits > 0), -1 - limits, codes)
    return codes


def _has_claims(pod: PodFacts, cluster: Cluster) -> bool:
    return pod.filters is not None and bool(pod.filters.claims)


_APPLIES: dict[CheckFn, Callable[[PodFacts, Cluster], bool]] = {
    check_interpod: interpod_applies,
    check_spread: spread_applies,
    check_in_use: in_use_applies,
    check_volume_topology: volumes_apply,
    check_volume_binding: _has_claims,
    check_volume_zone: _has_claims,
    check_volume_limits: _has_claims,
    check_rwop: _has_claims,
}
_VECTOR: dict[CheckFn, Callable[[PodFacts, Cluster], np.ndarray | None]] = {
    check_interpod: interpod_codes,
    check_spread: spread_codes,
    check_ports: ports_codes,
    check_in_use: _in_use,
    check_volume_topology: volume_columns.topology_codes,
    check_volume_binding: volume_columns.binding_codes,
    check_volume_zone: volume_columns.zone_codes,
    check_volume_limits: volume_columns.limit_codes,
    check_rwop: _rwop,
}


def codes_of(check: CheckFn, pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """The codes of one of the filters after fit (and of host ports) over every node; None when the bundle has
    no columns or the check is not one of these. Made once per what the check reads of the pod: its filters
    (PodFilters.key), whether it is pinned, the pods nominated for it, and for spread the selector and the
    tolerations that decide which nodes count (5,000 DaemonSet pods alike but for their node share one)."""
    cols = cluster.columns
    if cols is None or check not in _VECTOR:
        return None
    key = ("filter-codes", check, pod.filters_key, bool(pod.pin), pod.nominated,
           (pod.node_selector, pod.affinity, pod.tolerations) if check is check_spread else ())
    found = cols.memo.get(key)
    if not isinstance(found, np.ndarray):
        applies = _APPLIES.get(check)
        if applies is not None and not applies(pod, cluster):
            found = np.zeros(cols.n, dtype=np.int64)
        else:
            found = _VECTOR[check](pod, cluster)
        cols.memo[key] = found
    return found


def vector_stage(check: CheckFn) -> Callable[[PodFacts, Cluster, np.ndarray], Judged]:
    """A funnel stage's vector form from its check's codes."""
    return lambda pod, cluster, at: judged(check, codes_of(check, pod, cluster), pod, cluster, at)
