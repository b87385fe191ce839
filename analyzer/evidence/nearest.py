"""Nearest nodes (causes.md, Evidence): the nodes a pod fails on for exactly one reason, with that reason in
words a person acts on. Whatever the word, that is the change that would let the pod run soonest.

Every check runs on every node, not only the first failing one, but not for every pod shape: the checks that do
not depend on the selector (advertised, device selectors, cordon/taints, allocatable, fit) are counted once per
(tolerations, requests, claims) and node, and stop at two failures (only "none" and "exactly one" matter). Per
pod shape only the nodes the node index cannot rule out are looked at again. A node that lacks the resource is
one failure (restore the plugin), not three (advertised, allocatable and fit on the same resource).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyzer import prose
from analyzer.model.gpu_labels import cpu_node
from analyzer.model.nodes import NodeView
from analyzer.model.quantity import format_units
from analyzer.model.views import Cluster
from analyzer.evidence.filters import STAGE_CHECKS, nearest_failures
from analyzer.rules import columnar, dra_devices
from analyzer.rules.checks import (PodFacts, check_advertised, check_allocatable, check_device_selectors, check_policy,
                                   holders_on, shortages)
from analyzer.rules.filter_columns import codes_of
from analyzer.rules.funnel import selected
from analyzer.rules.node_health import condition_taints
from analyzer.rules.reason import Check, Reason, removed_positions

SHOWN = 5  # nearest nodes listed per pod; the rest are counted
# Which one change is nearest to running: load first, then policy, health and neighbours, what a node has, and
# selection.
_ORDER = {Check.FIT: 0, Check.DEVICES: 0, Check.HOST_PORT: 0, Check.RWOP: 0, Check.VOLUME_LIMIT: 0,
          Check.TAINT: 1, Check.CORDON: 1, Check.CONDITION: 1, Check.DEVICE_TAINT: 1,
          Check.ZERO_ALLOCATABLE: 2, Check.POD_AFFINITY: 2, Check.TOPOLOGY_SPREAD: 2,
          Check.NOT_ADVERTISED: 3, Check.OTHER_NAME: 3, Check.NO_DEVICES: 3,
          Check.DEVICE_SELECTORS: 4, Check.DEVICE_CONSTRAINTS: 4, Check.VOLUME_TOPOLOGY: 4, Check.VOLUME_ZONE: 4,
          Check.VOLUME_BINDING: 4,
          Check.SELECTOR: 5, Check.NODE_NAME: 5, Check.CLAIM_PINNED: 5}


# The filter stages after the checks before fit, each with the _ORDER of what it fails on.
FILTER_RANKS = tuple((check, rank) for check, rank in zip(STAGE_CHECKS, (_ORDER[Check.VOLUME_TOPOLOGY], _ORDER[Check.POD_AFFINITY],
                                                                        _ORDER[Check.TOPOLOGY_SPREAD], _ORDER[Check.HOST_PORT])))

FIT_LATER = ""  # the fit text names who holds the units: built only for the nodes that are shown
# A second failure for a node no single change makes a place for the pod: a CPU node (no plugin to restore), or a
# node too small for the request even empty (no pod to move). Such a node is never "one change away".
_NO_ONE_CHANGE = Reason(check=Check.NOT_ADVERTISED, text="no single change lets the pod run here")


def _fit_reason(pod: PodFacts, node: NodeView, cluster: Cluster, skip: set[str]) -> Reason | None:
    """Fit, leaving out the resources an earlier failure already explains (absent or allocatable 0)."""
    short = [s for s in shortages(pod, node, cluster) if s.resource not in skip]
    if any(s.allocatable < s.requested for s in short):
        return _NO_ONE_CHANGE
    if short:
        return Reason(check=Check.FIT, text=FIT_LATER)
    devices = dra_devices.devices_free(pod.claims, node, cluster)
    return Reason(check=Check.DEVICES, text="only " + devices.text) if devices else None


def _fit_text(pod: PodFacts, node: NodeView, cluster: Cluster) -> str:
    """For a node whose one failure is fit (nothing else explains a shortage there)."""
    short = shortages(pod, node, cluster)
    if short:
        s = short[0]
        holders = sorted(((h.requests.get(s.resource, 0), h.key) for h in holders_on(pod, node, cluster)
                          if h.requests.get(s.resource)), reverse=True)
        held = ", ".join(f"{key} holds {format_units(s.resource, units)}" for units, key in holders[:3])
        more = f" and {len(holders) - 3} more" if len(holders) > 3 else ""
        text = (f"only {format_units(s.resource, max(s.free, 0))} of {format_units(s.resource, s.allocatable)} "
                f"{s.resource} free, {format_units(s.resource, s.requested)} asked"
                + (f": {held}{more}" if held else "")
                + (f" (and short of {', '.join(x.resource for x in short[1:])})" if len(short) > 1 else ""))
        return text
    return "only room: it does not fit"


def failures(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Reason]:
    """The checks other than the selector that fail on this node (at most two: enough to tell 0, 1, more)."""
    found, explained = _before_fit(pod, node, cluster)
    if len(found) > 1:
        return found
    found = _with_fit(found, explained, pod, node, cluster)
    return found + [_NO_ONE_CHANGE] if found and found[-1] is _NO_ONE_CHANGE else found


def _before_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> tuple[list[Reason], set[str]]:
    """The failures before the fit check, and the resources they already explain. Without claims or
    DeviceClass-served resources these read only the node's capacity, allocatable, taints and cordon."""
    found: list[Reason] = []
    explained: set[str] = set()
    advertised = check_advertised(pod, node, cluster)
    if advertised is not None and advertised.check is Check.NOT_ADVERTISED and pod.extended and \
            cpu_node(node.capacity, node.labels, pod.extended):
        return [Reason(check=advertised.check, text=f"a CPU node: {advertised.text} and no GPU label"),
                _NO_ONE_CHANGE], set(pod.extended)
    if advertised is not None:
        advice = ("ask for the name it advertises, or change the device plugin's sharing or MIG configuration"
                  if advertised.check is Check.OTHER_NAME else "restore the device plugin or driver")
        found.append(Reason(check=advertised.check, text=f"only {advertised.text} ({advice})"))
        explained.update(pod.extended)
    for check in (check_device_selectors, check_policy):
        reason = check(pod, node, cluster)
        if reason is not None and reason.check is Check.CONDITION:  # node-unhealthy: name the condition
            found.append(Reason(check=reason.check, text="only the node's condition: "
                                + ", ".join(condition_taints(pod, node)) + " (repair the node; a toleration is not the fix)"))
        elif reason is not None:
            text = reason.text.removeprefix("untolerated ")  # "only the taint k=v:NoSchedule"
            found.append(Reason(check=reason.check, text=f"only the {text}" if reason.check in (Check.TAINT, Check.CORDON)
                                else f"only: {text}"))
        if len(found) > 1:
            return found, explained
    if advertised is None:
        zero = check_allocatable(pod, node, cluster)
        if zero is not None:
            found.append(Reason(check=zero.check, text=f"only allocatable 0 ({zero.text}; repair the node)"))
            explained.update(r for r in pod.extended if node.allocatable.get(r, 0) == 0)
    return found, explained


def _with_fit(found: list[Reason], explained: set[str], pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Reason]:
    fit = _fit_reason(pod, node, cluster, explained)
    return found + [fit] if fit is not None else found


def _selector_text(pod: PodFacts, node: NodeView) -> str:
    if pod.pin and node.name != pod.pin:
        return f"only spec.nodeName ({pod.pin})"
    lacking = [f"{k}={v}" for k, v in pod.node_selector if node.labels.get(k) != v]
    if lacking:
        return "only the label " + ", ".join(lacking) + (" and the required node affinity" if pod.terms is not None else "")
    return "only the required node affinity (its labels or name do not match)"


def _vector_counts(pod: PodFacts, cluster: Cluster,
                   cpu_mask: Callable[[tuple[str, ...]], np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """failures() for every node at once, as (how many checks fail, capped at 2; the _ORDER of the failing check
    where exactly one does). Node-blind pods only: advertised, allocatable and fit from the amounts, cordon and
    taints once per set of taints (a node offering the vendor's devices under another name (resource-name-mismatch) fails the
    same one check: only its text differs, made for the nodes shown). The filters after fit: Nearest._filters."""
    cols = columnar.columns_of(cluster)
    if cols is None or pod.filters is not None or not columnar.node_blind(pod, cluster):
        return None
    at = cols.everything
    policy = columnar.policy(pod, cluster, at)
    if policy is None:
        return None
    pol = np.zeros(cols.n, dtype=bool)
    pol[removed_positions(policy.removed)] = True
    adv = columnar.missing_mask(pod, cols, at)
    zero = columnar.zero_mask(pod, cols, at) & ~adv  # allocatable is asked only where the resource is advertised
    rows = columnar.shortfalls(pod, cluster, at) or []
    fit = np.zeros(cols.n, dtype=bool)
    never = np.zeros(cols.n, dtype=bool)  # _NO_ONE_CHANGE: too small even empty, or a CPU node
    for r, want, alloc, _, short in rows:
        if r in pod.extended:  # a shortage an earlier failure explains (absent, or allocatable 0) is not another
            short = short & ~adv & (cols.amounts(r).allocatable != 0)
        fit |= short
        never |= short & (alloc < want)
    if pod.extended and adv.any():
        never |= adv & cpu_mask(pod.extended)
    count = adv.astype(np.int64) + pol + zero + fit + never
    order = np.full(cols.n, _ORDER[Check.FIT])
    order[zero] = _ORDER[Check.ZERO_ALLOCATABLE]
    order[adv] = _ORDER[Check.NOT_ADVERTISED]
    # The cordon and taint checks share one rank: which of them fails does not change the order.
    order[pol] = _ORDER[Check.TAINT]
    return np.minimum(count, 2), order


def _counted(per_node: list[list[Reason]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Node by node failures as (count capped at 2, the _ORDER of the one failing check, the nodes with none)."""
    count = np.array([min(len(f), 2) for f in per_node], dtype=np.int64)
    order = np.array([_ORDER.get(f[0].check, 9) if f else 0 for f in per_node], dtype=np.int64)
    return count, order, np.flatnonzero(count == 0)


class Nearest:
    """Per cluster: caches the selector-independent failures per (tolerations, requests, claims, pinned) key."""

    def __init__(self, cluster: Cluster, *, scalar: bool = False) -> None:
        self.cluster = cluster
        self.scalar = scalar  # every node through the scalar checks (the reference the tests compare)
        self._failures: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray, list[list[Reason]] | None]] = {}
        self._lists: dict[tuple, list[list[Reason]]] = {}
        self._cpu_masks: dict[tuple[str, ...], np.ndarray] = {}  # per set of extended resources: the CPU nodes

    def _cpu_mask(self, resources: tuple[str, ...]) -> np.ndarray:
        """The nodes that are CPU nodes for these resources (gpu_labels.cpu_node), over the node columns: once per
        set of resources, not once per pod shape and node."""
        found = self._cpu_masks.get(resources)
        if found is None:
            cols = columnar.columns_of(self.cluster)
            nodes = cols.nodes if cols is not None else []
            found = self._cpu_masks[resources] = np.array([cpu_node(n.capacity, n.labels, resources) for n in nodes],
                                                          dtype=bool)
        return found

    def _all(self, pod: PodFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list[Reason]] | None]:
        """Per node: how many checks other than the selector fail (0, 1, or 2 for more), and the rank of the
        failing one where one does; the nodes where none does; and, when judged node by node for the filters
        after fit, each node's failures (else None: the shown nodes' reasons are made when shown)."""
        key = (pod.tolerations, pod.requests, pod.claims_shape, bool(pod.pin),  # a pinned pod meets only NoExecute
               pod.nominated)  # the pods nominated by preemption that count as used
        if pod.filters is not None:  # the volume, inter-pod, spread and port checks on top, per their own shape
            # Spread counts only the nodes the pod's selector matches: then the selector is part of the shape.
            full = key + (pod.filters_key,) + ((pod.node_selector, pod.affinity) if pod.filters.spread else ())
            found = self._failures.get(full)
            if found is None:
                by_node = self.scalar or self.cluster.columns is None
                found = self._failures[full] = self._scalar_filters(pod, key) if by_node else self._filters(pod)
            return found
        found = self._failures.get(key)
        if found is None:
            c = self.cluster
            vector = None if self.scalar else _vector_counts(pod, c, self._cpu_mask)
            if vector is None:
                found = self._failures[key] = (*_counted([failures(pod, n, c) for n in c.nodes or []]), None)
            else:
                found = self._failures[key] = (*vector, np.flatnonzero(vector[0] == 0), None)
        return found

    def _scalar_filters(self, pod: PodFacts, key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list[Reason]]]:
        """Node by node: the checks before fit once per selector-independent key, the filters after it per shape."""
        c = self.cluster
        base = self._lists.get(key)
        if base is None:
            shape = PodFacts.of_shape(pod)
            base = self._lists[key] = [failures(shape, n, c) for n in c.nodes or []]
        per_node = [f + nearest_failures(pod, n, c, 2 - len(f)) if len(f) < 2 else f for f, n in zip(base, c.nodes or [])]
        return (*_counted(per_node), per_node)

    def _filters(self, pod: PodFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray, None]:
        """The checks before fit as for any pod of the shape, plus one failure per filter stage that fails, from
        the filters' codes over every node."""
        count, order, _, _ = self._all(PodFacts.of_shape(pod))
        extra = np.zeros(len(count), dtype=np.int64)
        rank = np.zeros(len(count), dtype=np.int64)
        for check, check_rank in FILTER_RANKS:
            codes = codes_of(check, pod, self.cluster)
            assert codes is not None  # _all asks only when the bundle has node columns
            failing = codes != 0
            extra += failing
            rank[failing] = check_rank
        total = np.minimum(count + extra, 2)
        one = np.where(count == 1, order, rank)
        return total, np.where(total == 1, one, 0), np.flatnonzero(total == 0), None

    def of(self, pod: PodFacts) -> dict:
        """{"nearest": [{"node", "reason"}…] (at most SHOWN), "nearest_more": n}, or none and a sentence."""
        c = self.cluster
        nodes = c.nodes or []
        if not nodes or c.node_index is None:
            return {}
        count, order, none, per_node = self._all(pod)
        matching = selected(pod, c, scalar=self.scalar)
        one = matching[count[matching] == 1]
        near_at = one[np.lexsort((one, order[one]))]
        # Nodes failing only the selector: every node with no other failure that the selector does not match.
        selector_only = none[~np.isin(none, matching)] if len(none) else none
        room = max(SHOWN - len(near_at), 0)
        shown = [(int(i), None) for i in near_at[:SHOWN].tolist()] + [
            (int(i), Reason(check=Check.SELECTOR, text=_selector_text(pod, nodes[int(i)]))) for i in selector_only[:room].tolist()]
        if not shown:
            return {"nearest": [], "nearest_none": "no node is one change away: on every node two or more checks "
                                                   "fail, or it is a CPU node, or too small for the request even empty"}
        total = len(near_at) + len(selector_only)
        out: dict = {"nearest": []}
        for i, reason in shown[:SHOWN]:
            node = nodes[i]
            if reason is None:
                reason = ((failures(pod, node, c) or nearest_failures(pod, node, c, 1)) if per_node is None
                          else per_node[i])[0]
            out["nearest"].append({"node": node.name, "reason": _fit_text(pod, node, c) if reason.check is Check.FIT else reason.text})
        if total > SHOWN:
            out["nearest_more"] = total - SHOWN
        return out


@prose.says("nearest")
def _nearest_says(value: object) -> list[str]:
    return [f"Node {n.get('node')} is one change away: {n.get('reason')}." for n in value if isinstance(n, dict)] \
        if isinstance(value, list) else []


@prose.says("nearest_more")
def _nearest_more_says(value: object) -> list[str]:
    return [f"… and {value} more nodes one change away (every one in -o json)."]


@prose.says("nearest_none")
def _nearest_none_says(value: object) -> list[str]:
    return [f"{str(value)[:1].upper()}{str(value)[1:]}."] if value else []
