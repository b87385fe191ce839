"""The funnel's stages as vector operations over the node columns (model/columns.py), one pod shape at a time.

A stage's vector form takes the positions of the nodes that reach it and returns a Judged: the positions kept
and the removed ones in groups, one per distinct Reason, groups in the order of their first node. Each is the
same answer, node for node, as the stage's scalar check in rules/checks.py (the reference; tests/test_columns.py
compares them on random clusters). A vector form answers None when it cannot be exact for this pod (claims or
DeviceClass-served resources, whose checks read each node's own devices; amounts beyond int64): the stage then
runs its scalar check node by node, as it does for a handful of nodes, where arrays cost more than they save.

Three ways to write a stage's vector form:
- judge_by_kind(check, kind column): the check reads only what a kind of node shares (taints and cordon:
  `taint_kind`; capacity: `capacity_kind`; capacity, allocatable, taints and cordon: `kind`): it runs once per
  kind present;
- codes over the positions (0: kept, k: removed for reason k) and group(): amounts compared per resource;
- judge_scalar: node by node, the fallback every stage has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from analyzer.model.columns import INT64_MAX, NodeColumns, distinct
from analyzer.model.gpu_labels import vendor
from analyzer.model.nodes import NodeView
from analyzer.model.quantity import format_units
from analyzer.model.views import Cluster
from analyzer.rules.checks import PodFacts, _fit_order, check_advertised, check_policy, insufficient, used_column
from analyzer.rules.reason import Check, Groups, Reason, Removed

SMALL = 8  # at most this many nodes: judged one by one (array set-up costs more than it saves)

CheckFn = Callable[[PodFacts, NodeView, Cluster], Reason | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    kept: np.ndarray  # positions (int64, ascending)
    removed: list[Removed] | Groups  # one group per distinct Reason, in the order of their first node


def columns_of(cluster: Cluster) -> NodeColumns | None:
    cols = cluster.columns
    return cols if cols is not None and cols.exact else None


def node_blind(pod: PodFacts, cluster: Cluster) -> bool:
    """Do the checks read nothing of a node but its columns? Not with claims, nor when a DeviceClass may serve a
    requested extended resource: those read the node's own devices."""
    if pod.claims is not None:
        return False
    dra = cluster.dra
    return dra is None or all(dra.extended_class(r) is None for r in pod.extended)


def other_names_possible(pod: PodFacts, cluster: Cluster) -> bool:
    """Might some node advertise a requested accelerator's devices under another name of its vendor
    (resource-name-mismatch: check_advertised then names them, per node)? Then the advertised stage is judged once
    per capacity kind."""
    cols = columns_of(cluster)
    if cols is None or not pod.extended:
        return cols is None
    key = ("other-names", pod.extended)
    found = cols.memo.get(key)
    if found is None:
        config = cluster.config
        found = cols.memo[key] = any(
            name != r and vendor(name) == vendor(r) and config.is_accelerator(name) and bool((cols.amounts(name).capacity > 0).any())
            for r in pod.extended if vendor(r) and config.is_accelerator(r) for name in cols.resources)
    return bool(found)


def group(at: np.ndarray, codes: np.ndarray, reason_of: Callable[[int], Reason], *, lazy: bool = False) -> Judged:
    """Positions with code 0 kept; the others grouped by code (one code, one Reason), groups in the order of
    their first node. `lazy`: Reasons made only when asked for (codes then have distinct texts)."""
    keep = codes == 0
    removed_at, removed_codes = at[~keep], codes[~keep]
    if not len(removed_at):
        return Judged(kept=at[keep], removed=[])
    order = np.argsort(removed_codes, kind="stable")
    sorted_codes, sorted_at = removed_codes[order], removed_at[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(sorted_codes)) + 1))
    by_first = np.argsort(sorted_at[starts], kind="stable")  # groups in the order of their first node
    sizes = np.diff(np.append(starts, len(sorted_at)))[by_first]
    new_starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    take = np.arange(len(sorted_at)) + np.repeat(starts[by_first] - new_starts, sizes)
    groups = Groups(sorted_at[take], new_starts, sorted_codes[starts][by_first], reason_of)
    if lazy:
        return Judged(kept=at[keep], removed=groups)
    return Judged(kept=at[keep], removed=[Removed(g.at, g.reason) for g in groups])


def judge_scalar(check: CheckFn, pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """Node by node (the reference, and a handful of nodes): plain lists, no array work per reason."""
    nodes = cluster.nodes or []
    kept: list[int] = []
    removed: dict[Reason, list[int]] = {}
    for i in at.tolist():
        reason = check(pod, nodes[i], cluster)
        if reason is None:
            kept.append(i)
        else:
            removed.setdefault(reason, []).append(i)
    return Judged(kept=np.array(kept, dtype=np.int64),
                  removed=[Removed(np.array(where, dtype=np.int64), reason) for reason, where in removed.items()])


def judge_by_kind(check: CheckFn, kind: np.ndarray, first: list[int], pod: PodFacts, cluster: Cluster,
                  at: np.ndarray) -> Judged:
    """The check once per kind of node present (on the kind's first node), the answer spread over its nodes."""
    nodes = cluster.nodes or []
    kinds = kind[at]
    reasons: dict[Reason, int] = {}
    per_kind = np.zeros(len(first), dtype=np.int64)
    for k in distinct(kinds)[0].tolist():
        reason = check(pod, nodes[first[k]], cluster)
        if reason is not None:
            per_kind[k] = reasons.setdefault(reason, len(reasons) + 1)
    table = list(reasons)
    return group(at, per_kind[kinds], lambda k: table[k - 1])


def below(values: np.ndarray, want: int) -> np.ndarray:
    """values < want, exact for any Python int `want` (a request may be beyond int64)."""
    if want > INT64_MAX:
        return np.ones(len(values), dtype=bool)
    return values < want


def _key_codes(matrix: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Rows of equal values share a code (1…); all-zero rows (kept nodes) get 0. Returns (codes, per code its
    row). One lexicographic sort of the removed rows on the columns that vary among them."""
    codes = np.zeros(len(matrix), dtype=np.int64)
    idx = np.flatnonzero(matrix.any(axis=1))
    if not len(idx):
        return codes, [[]]
    rows = matrix[idx]
    varying = [j for j in range(rows.shape[1]) if rows[:, j].min() != rows[:, j].max()]
    order = np.lexsort(tuple(rows[:, j] for j in reversed(varying))) if varying else np.arange(len(idx))
    ordered = rows[order]
    change = np.ones(len(ordered), dtype=bool)
    if varying:
        change[1:] = (ordered[1:][:, varying] != ordered[:-1][:, varying]).any(axis=1)
    else:
        change[1:] = False
    codes[idx[order]] = np.cumsum(change)
    return codes, [[]] + ordered[change].tolist()  # rows[code] is that code's row


# -- the stages' vector forms ----------------------------------------------------------------------------

def advertised(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged | None:
    """check_advertised: a requested extended resource absent from status.capacity, or with capacity 0 (the
    vendor's devices under another name, resource-name-mismatch, node by node)."""
    cols = columns_of(cluster)
    if cols is None or not node_blind(pod, cluster):
        return None
    if not pod.extended:
        return Judged(kept=at, removed=[])
    if other_names_possible(pod, cluster):  # the text names the siblings: the same for the same capacity
        return judge_by_kind(check_advertised, cols.capacity_kind, cols.capacity_kinds, pod, cluster, at)
    states = []
    for r in pod.extended:
        a = cols.amounts(r)
        missing = a.capacity[at] <= 0
        states.append(np.where(missing, np.where(a.has_capacity[at], 1, 2), 0))
    codes, distinct = _key_codes(np.stack(states, axis=1))

    def reason(code: int) -> Reason:
        row = distinct[code]
        return Reason(check=Check.NOT_ADVERTISED, text=", ".join(
            f"{r} capacity 0 (device plugin gone)" if s == 1 else f"no {r} in status.capacity"
            for r, s in zip(pod.extended, row) if s))
    return group(at, codes, reason, lazy=True)


def missing_mask(pod: PodFacts, cols: NodeColumns, at: np.ndarray) -> np.ndarray:
    """advertised() as a mask: some requested extended resource has no capacity (node-blind pods)."""
    out = np.zeros(len(at), dtype=bool)
    for r in pod.extended:
        out |= cols.amounts(r).capacity[at] <= 0
    return out


def zero_mask(pod: PodFacts, cols: NodeColumns, at: np.ndarray) -> np.ndarray:
    """allocatable() as a mask: some requested extended resource has allocatable 0 (node-blind pods)."""
    out = np.zeros(len(at), dtype=bool)
    for r in pod.extended:
        out |= cols.amounts(r).allocatable[at] == 0
    return out


def device_selectors(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged | None:
    """check_device_selectors: only claims have device selectors."""
    return Judged(kept=at, removed=[]) if pod.claims is None else None


class _TaintKinds(NamedTuple):
    """Per kind of taints, for one set of tolerations: 0 (tolerated) or 1 + the Reason's place in `reasons`."""

    codes: np.ndarray
    reasons: list[Reason]


def policy(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged | None:
    """check_policy (cordon and taints) once per set of taints and cordon; device taints need claims."""
    cols = columns_of(cluster)
    if cols is None or pod.claims is not None:
        return None
    # What the check reads of the pod: its tolerations, and whether spec.nodeName bypasses the scheduler.
    key = ("policy", pod.tolerations, bool(pod.pin))
    found = cols.memo.get(key)
    if not isinstance(found, _TaintKinds):
        nodes = cluster.nodes or []
        reasons: dict[Reason, int] = {}
        per_kind = np.zeros(len(cols.taint_kinds), dtype=np.int64)
        for k, first in enumerate(cols.taint_kinds):
            reason = check_policy(pod, nodes[first], cluster)
            if reason is not None:
                per_kind[k] = reasons.setdefault(reason, len(reasons) + 1)
        found = cols.memo[key] = _TaintKinds(codes=per_kind, reasons=list(reasons))
    per_kind, table = found.codes, found.reasons
    return group(at, per_kind[cols.taint_kind[at]], lambda k: table[k - 1])


def allocatable(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged | None:
    """check_allocatable: a requested extended resource with allocatable 0."""
    cols = columns_of(cluster)
    if cols is None or not node_blind(pod, cluster):
        return None
    if not pod.extended:
        return Judged(kept=at, removed=[])
    parts = []
    for r in pod.extended:
        a = cols.amounts(r)
        zero = a.allocatable[at] == 0
        parts += [zero, np.where(zero, a.capacity[at], 0)]
    codes, distinct = _key_codes(np.stack(parts, axis=1))

    def reason(code: int) -> Reason:
        row = distinct[code]
        return Reason(check=Check.ZERO_ALLOCATABLE, text=", ".join(
            f"{r}: capacity {row[2 * j + 1]}, allocatable 0" for j, r in enumerate(pod.extended) if row[2 * j]))
    return group(at, codes, reason, lazy=True)


def shortfalls(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> list[tuple[str, int, np.ndarray, np.ndarray, np.ndarray]] | None:
    """Per resource the pod asks for (accelerators first, then a pod slot): (resource, wanted, allocatable, free,
    short) over `at`, as checks.shortages compares them; None when not node-blind or not exact."""
    cols = columns_of(cluster)
    if cols is None or not node_blind(pod, cluster):
        return None
    out = []
    for r, want, _ in _fit_order(pod, cluster):
        a = cols.amounts(r)
        alloc = a.allocatable[at]
        free = alloc - used_column(pod, cluster, r, a)[at]  # pods nominated by preemption count as used
        out.append((r, want, alloc, free, below(free, want)))
    return out


def fit(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged | None:
    """check_fit: every resource short once what is in use is counted (NodeResourcesFit)."""
    rows = shortfalls(pod, cluster, at)
    if rows is None:
        return None
    if not rows:
        return Judged(kept=at, removed=[])
    parts = []
    for _, _, alloc, free, short in rows:
        parts += [short, np.where(short, free, 0), np.where(short, alloc, 0)]
    codes, distinct = _key_codes(np.stack(parts, axis=1))

    def reason(code: int) -> Reason:
        row = distinct[code]
        short = [(r, want, row[3 * j + 1], row[3 * j + 2]) for j, (r, want, _, _, _) in enumerate(rows) if row[3 * j]]
        return Reason(check=Check.FIT, text="; ".join(
            f"{r}: {format_units(r, free)} free of {format_units(r, alloc)} allocatable, {format_units(r, want)} requested"
            for r, want, free, alloc in short), scheduler=tuple(insufficient(r) for r, _, _, _ in short))
    return group(at, codes, reason, lazy=True)
