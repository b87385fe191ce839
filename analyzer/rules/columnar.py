"""The funnel's stages as vector operations over the node columns (model/columns.py), one pod shape at a time:
the one production form of each stage.

A stage's vector form takes the positions of the nodes that reach it and returns a Judged: the positions kept
and the removed ones in groups, one per distinct Reason, groups in the order of their first node. It answers for
every pod and any number of nodes. Its rule is the stage's per-node rule in rules/checks.py: a group's Reason is
that rule's text (written once there: `missing_text`, `zero_text`, `fit_reason`), and what depends on a kind of
node (its taints, its capacity) is that rule asked once per kind. The per-node rules run over every node only in
the tests, as the reference the vector forms are compared with (tests/reference_funnel.py, on random clusters).

Two parts of a node no column holds are read per node, by their only rule: the devices of a pod's resource claims
(the DRA family's rules in rules/dra_devices.py, asked of the nodes the columns keep: `then_devices`), and what a
DeviceClass offers for an extended resource a node does not advertise (`served`, once per resource and bundle).

Ways a stage's vector form is written:
- judge_by_key(rule, key codes): the rule reads only what nodes of equal key share (taints and cordon:
  `taint_kind`; capacity: `capacity_kind`): it runs once per key present;
- codes over the positions (0: kept, k: removed for reason k) and group(): amounts compared per resource.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from analyzer.model.columns import INT64_MAX, NodeColumns, distinct
from analyzer.model.gpu_labels import vendor
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules import dra_devices
from analyzer.rules.checks import (PodFacts, _fit_order, fit_reason, missing_text, node_advertised, node_policy,
                                   used_column, zero_text)
from analyzer.rules.reason import Check, Groups, Reason, Removed

CheckFn = Callable[[PodFacts, NodeView, Cluster], Reason | None]
SMALL = 8  # at most this many rows or nodes are grouped with plain dicts rather than sorts (the same groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    kept: np.ndarray  # positions (int64, ascending)
    removed: list[Removed] | Groups  # one group per distinct Reason, in the order of their first node


def columns_of(cluster: Cluster) -> NodeColumns:
    """The node columns: every bundle with nodes has them (model/build.py), and the funnel runs only then."""
    cols = cluster.columns
    if cols is None:
        raise ValueError("the node columns exist only where nodes.json was read")
    return cols


def node_blind(pod: PodFacts, cluster: Cluster) -> bool:
    """Do the checks read nothing of a node but its columns? Not with claims, nor when a DeviceClass may serve a
    requested extended resource: those read the node's own devices."""
    if pod.claims is not None:
        return False
    dra = cluster.dra
    return dra is None or all(dra.extended_class(r) is None for r in pod.extended)


class Served(NamedTuple):
    """What a DeviceClass offers for one extended resource on the nodes that do not advertise it (dra.md):
    per node whether it serves (an offer at all), its devices and how many are in use (checks.available)."""

    offer: np.ndarray  # bool: allocatable 0 there and a DeviceClass serves the name
    offered: np.ndarray
    in_use: np.ndarray


def served(cluster: Cluster, resource: str) -> Served | None:
    """checks.available's DeviceClass offer for every node, once per resource and bundle; None when no
    DeviceClass serves the name (then only the node's own amounts count)."""
    dra = cluster.dra
    if dra is None or dra.extended_class(resource) is None:
        return None
    cols = columns_of(cluster)
    key = ("served", resource)
    found = cols.memo.get(key)
    if not isinstance(found, Served):
        offer = np.zeros(cols.n, dtype=bool)
        offered, in_use = np.zeros(cols.n, dtype=np.int64), np.zeros(cols.n, dtype=np.int64)
        for i, node in enumerate(cols.nodes):
            got = dra_devices.extended_offer(resource, node, cluster) if node.allocatable.get(resource, 0) == 0 else None
            if got is not None:
                offer[i], offered[i], in_use[i] = True, got.offered, got.offered - got.free
        found = cols.memo[key] = Served(offer=offer, offered=offered, in_use=in_use)
    return found


def _serving(cluster: Cluster, resource: str, at: np.ndarray) -> np.ndarray:
    """checks._served_by_dra over `at`: a DeviceClass offers at least one device of the name there."""
    s = served(cluster, resource)
    return np.zeros(len(at), dtype=bool) if s is None else s.offer[at] & (s.offered[at] > 0)


def other_names_possible(pod: PodFacts, cluster: Cluster) -> bool:
    """Might some node advertise a requested accelerator's devices under another name of its vendor
    (resource-name-mismatch: the advertised rule then names them, per node)? Then the advertised stage is judged
    once per capacity kind."""
    cols = columns_of(cluster)
    if not pod.extended:
        return False
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
    if len(at) <= SMALL:  # a handful of nodes: plain lists cost less than the sorts
        return _group_small(at, codes, reason_of, lazy)
    if not codes.any():
        return Judged(kept=at, removed=[])
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


def _group_small(at: np.ndarray, codes: np.ndarray, reason_of: Callable[[int], Reason], lazy: bool) -> Judged:
    kept: list[int] = []
    by_code: dict[int, list[int]] = {}
    for i, code in zip(at.tolist(), codes.tolist()):
        if code == 0:
            kept.append(i)
        else:
            by_code.setdefault(code, []).append(i)
    if not by_code:
        return Judged(kept=at, removed=[])

    def made(code: int) -> Callable[[], Reason]:
        return lambda: reason_of(code)
    removed = [Removed(np.array(where, dtype=np.int64), make=made(code), distinct_text=lazy)
               for code, where in by_code.items()]  # in the order of their first node, as `at` is ascending
    return Judged(kept=np.array(kept, dtype=np.int64), removed=removed)


def then_devices(first: Judged, rule: Callable, pod: PodFacts, cluster: Cluster) -> Judged:
    """The stage's device rule (rules/dra_devices.py) on the nodes the columns kept, for a pod with claims: a
    claim's devices are read per node, in the node's own ResourceSlices. The removed groups of both, in the
    order of their first node; without claims, `first` as it is."""
    if pod.claims is None or not len(first.kept):
        return first
    nodes = columns_of(cluster).nodes
    kept: list[int] = []
    removed: dict[Reason, list[int]] = {}
    for i in first.kept.tolist():
        reason = rule(pod.claims, nodes[i], cluster)
        if reason is None:
            kept.append(i)
        else:
            removed.setdefault(reason, []).append(i)
    if not removed:
        return first
    groups = [*first.removed, *(Removed(np.array(where, dtype=np.int64), reason) for reason, where in removed.items())]
    return Judged(kept=np.array(kept, dtype=np.int64), removed=sorted(groups, key=lambda g: int(g.at[0])))


def judge_by_key(rule: CheckFn, key: np.ndarray, pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """The rule once per distinct key among `at` (on the key's first node there), the answer spread over its
    nodes."""
    nodes = columns_of(cluster).nodes
    keys = key[at]
    values, first, _ = distinct(keys)
    reasons: dict[Reason, int] = {}
    code_of = np.zeros(len(values), dtype=np.int64)
    for j, i in enumerate(first.tolist()):
        reason = rule(pod, nodes[int(at[i])], cluster)
        if reason is not None:
            code_of[j] = reasons.setdefault(reason, len(reasons) + 1)
    table = list(reasons)
    return group(at, code_of[np.searchsorted(values, keys)], lambda k: table[k - 1])


def below(values: np.ndarray, want: int) -> np.ndarray:
    """values < want, exact for any Python int `want` (a request may be beyond int64)."""
    if want > INT64_MAX and values.dtype != object:
        return np.ones(len(values), dtype=bool)
    return values < want


def _key_codes(matrix: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """Rows of equal values share a code (1…); all-zero rows (kept nodes) get 0. Returns (codes, per code its
    row). One lexicographic sort of the removed rows on the columns that vary among them."""
    if len(matrix) <= SMALL:  # a handful of rows: a dict of tuples costs less than the sorts
        table: dict[tuple, int] = {}
        small = [0 if not any(row) else table.setdefault(tuple(row), len(table) + 1) for row in matrix.tolist()]
        return np.array(small, dtype=np.int64), [[]] + [list(row) for row in table]
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

def advertised(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_advertised: a requested extended resource absent from status.capacity, or with capacity 0, that no
    DeviceClass serves there (the vendor's devices under another name: resource-name-mismatch, its text per
    capacity); then, with claims, no device of the class at all."""
    cols = columns_of(cluster)
    if not pod.extended:
        judged = Judged(kept=at, removed=[])
    elif other_names_possible(pod, cluster):  # the text names the siblings: the same for the same capacity
        kind = cols.capacity_kind.astype(np.int64)
        if not node_blind(pod, cluster):  # and whether a DeviceClass serves each name there
            bits = [_serving(cluster, r, cols.everything) for r in pod.extended]
            kind = _key_codes(np.stack([kind + 1, *bits], axis=1))[0]
        judged = judge_by_key(node_advertised, kind, pod, cluster, at)
    else:
        states = []
        for r in pod.extended:
            a = cols.amounts(r)
            missing = (a.capacity[at] <= 0) & ~_serving(cluster, r, at)
            states.append(np.where(missing, np.where(a.has_capacity[at], 1, 2), 0))
        codes, rows = _key_codes(np.stack(states, axis=1))

        def reason(code: int) -> Reason:
            return Reason(check=Check.NOT_ADVERTISED, text=", ".join(
                missing_text(r, s == 1) for r, s in zip(pod.extended, rows[code]) if s))
        judged = group(at, codes, reason, lazy=True)
    return then_devices(judged, dra_devices.no_devices, pod, cluster)


def missing_mask(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> np.ndarray:
    """advertised()'s columns as a mask: some requested extended resource has no capacity and no DeviceClass
    serves it."""
    cols = columns_of(cluster)
    out = np.zeros(len(at), dtype=bool)
    for r in pod.extended:
        out |= (cols.amounts(r).capacity[at] <= 0) & ~_serving(cluster, r, at)
    return out


def zero_mask(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> np.ndarray:
    """allocatable() as a mask: some requested extended resource has allocatable 0 and no DeviceClass serves it."""
    cols = columns_of(cluster)
    out = np.zeros(len(at), dtype=bool)
    for r in pod.extended:
        out |= (cols.amounts(r).allocatable[at] == 0) & ~_serving(cluster, r, at)
    return out


def device_selectors(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_device_selectors: only claims have device selectors."""
    return then_devices(Judged(kept=at, removed=[]), dra_devices.device_selectors, pod, cluster)


class _TaintKinds(NamedTuple):
    """Per kind of taints, for one set of tolerations: 0 (tolerated) or 1 + the Reason's place in `reasons`."""

    codes: np.ndarray
    reasons: list[Reason]


def policy_codes(pod: PodFacts, cluster: Cluster) -> _TaintKinds:
    """node_policy once per set of taints and cordon, for what it reads of the pod: its tolerations, and whether
    spec.nodeName bypasses the scheduler."""
    cols = columns_of(cluster)
    key = ("policy", pod.tolerations, bool(pod.pin))
    found = cols.memo.get(key)
    if not isinstance(found, _TaintKinds):
        reasons: dict[Reason, int] = {}
        per_kind = np.zeros(len(cols.taint_kinds), dtype=np.int64)
        for k, first in enumerate(cols.taint_kinds):
            reason = node_policy(pod, cols.nodes[first], cluster)
            if reason is not None:
                per_kind[k] = reasons.setdefault(reason, len(reasons) + 1)
        found = cols.memo[key] = _TaintKinds(codes=per_kind, reasons=list(reasons))
    return found


def policy(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_policy: cordon and taints once per set of taints and cordon; then the claims' device taints."""
    found = policy_codes(pod, cluster)
    per_kind, table = found.codes, found.reasons
    judged = group(at, per_kind[columns_of(cluster).taint_kind[at]], lambda k: table[k - 1])
    return judged if pod.pin else then_devices(judged, dra_devices.device_taints, pod, cluster)


def allocatable(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_allocatable: a requested extended resource with allocatable 0 that no DeviceClass serves there."""
    cols = columns_of(cluster)
    if not pod.extended:
        return Judged(kept=at, removed=[])
    parts = []
    for r in pod.extended:
        a = cols.amounts(r)
        zero = (a.allocatable[at] == 0) & ~_serving(cluster, r, at)
        parts += [zero, np.where(zero, a.capacity[at], 0)]
    codes, rows = _key_codes(np.stack(parts, axis=1))

    def reason(code: int) -> Reason:
        row = rows[code]
        return Reason(check=Check.ZERO_ALLOCATABLE, text=", ".join(
            zero_text(r, row[2 * j + 1]) for j, r in enumerate(pod.extended) if row[2 * j]))
    return group(at, codes, reason, lazy=True)


def shortfalls(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> list[tuple[str, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per resource the pod asks for (accelerators first, then a pod slot): (resource, wanted, allocatable, free,
    short) over `at`, as checks.shortages compares them (a DeviceClass's devices where it serves the name). The
    rows of the fit stage's candidates are kept with the shape: its fit evidence reads the same."""
    kept = pod.state.fit_rows
    if kept is not None and kept[0] is at:
        return kept[1]
    cols = columns_of(cluster)
    out = []
    for r, want, extended in _fit_order(pod, cluster):
        a = cols.amounts(r)
        alloc = a.allocatable[at]
        used = used_column(pod, cluster, r, a)[at]  # pods nominated by preemption count as used
        s = served(cluster, r) if extended else None
        if s is not None:
            offer = s.offer[at] & (alloc == 0)
            alloc, used = np.where(offer, s.offered[at], alloc), np.where(offer, s.in_use[at], used)
        free = alloc - used
        out.append((r, want, alloc, free, below(free, want)))
    pod.state.fit_rows = (at, out)
    return out


def fit(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_fit: every resource short once what is in use is counted (NodeResourcesFit); then, with claims, too
    few free devices."""
    rows = shortfalls(pod, cluster, at)
    if not rows:
        return then_devices(Judged(kept=at, removed=[]), dra_devices.devices_free, pod, cluster)
    parts = []
    for _, _, alloc, free, short in rows:
        parts += [short, np.where(short, free, 0), np.where(short, alloc, 0)]
    codes, distinct_rows = _key_codes(np.stack(parts, axis=1))

    def reason(code: int) -> Reason:
        row = distinct_rows[code]
        return fit_reason([(r, row[3 * j + 1], row[3 * j + 2], want)
                           for j, (r, want, _, _, _) in enumerate(rows) if row[3 * j]])
    return then_devices(group(at, codes, reason, lazy=True), dra_devices.devices_free, pod, cluster)
