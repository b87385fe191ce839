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
from analyzer.model.matching import HOSTNAME_LABEL, hostnames_required, only_name
from analyzer.model.node_index import NodeIndex
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
from analyzer.rules.reason import Check, Reason
from analyzer.text import some_names

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


def _with_filters(pod: PodFacts, cluster: Cluster, count: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts of the checks before fit plus one failure per filter stage that fails on the node."""
    extra = np.zeros(len(count), dtype=np.int64)
    rank = np.zeros(len(count), dtype=np.int64)
    for check, check_rank in FILTER_RANKS:
        codes = codes_of(check, pod, cluster)
        assert codes is not None  # every filter stage has codes over the node columns
        failing = codes != 0
        extra += failing
        rank[failing] = check_rank
    total = np.minimum(count + extra, 2)
    one = np.where(count == 1, order, rank)
    return total, np.where(total == 1, one, 0)


def _device_stages(pod: PodFacts, cluster: Cluster) -> np.ndarray:
    """Per node, the step at which a claim's devices fail there (rules/dra_devices.py: one step per node), as a
    code: 0 none (or no claims), 1 no device of the class, 2 the claim is allocated to another node, 3 selectors
    or constraints, 4 device taints, 5 too few free devices."""
    cols = columnar.columns_of(cluster)
    out = np.zeros(cols.n, dtype=np.int64)
    if pod.claims is None:
        return out
    steps = {"class": 1, "pinned": 2, "selectors": 3, "constraints": 3, "taints": 4, "free": 5, "enough": 5}
    for i, node in enumerate(cols.nodes):
        o = dra_devices.outcome(pod.claims, node, cluster)
        if o is not None:
            out[i] = steps.get(o.stage, 0)
    return out


def _vector_counts(pod: PodFacts, cluster: Cluster,
                   cpu_mask: Callable[[tuple[str, ...]], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """failures() for every node at once, as (how many checks fail, capped at 2; the _ORDER of the failing check
    where exactly one does): advertised, allocatable and fit from the amounts, cordon and taints once per set of
    taints (a node offering the vendor's devices under another name (resource-name-mismatch) fails the same one
    check: only its text differs, made for the nodes shown), a claim's devices at the one step they fail on each
    node; then one failure per filter stage after fit that fails (their codes over every node)."""
    if pod.filters is not None:
        return _with_filters(pod, cluster, *_vector_counts(PodFacts.of_shape(pod), cluster, cpu_mask))
    cols = columnar.columns_of(cluster)
    at = cols.everything
    devices = _device_stages(pod, cluster)
    pol = columnar.policy_codes(pod, cluster).codes[cols.taint_kind] != 0
    if not pod.pin:  # check_policy: the node's cordon and taints, else a claim's device taints
        pol |= devices == 4
    ext = columnar.missing_mask(pod, cluster, at)
    adv = ext | (devices == 1) | (devices == 2)  # the advertised check: the names, else no device of the class
    devsel = devices == 3
    zero = columnar.zero_mask(pod, cluster, at) & ~adv  # allocatable is asked only where nothing is missing
    fit = np.zeros(cols.n, dtype=bool)
    never = np.zeros(cols.n, dtype=bool)  # _NO_ONE_CHANGE: too small even empty, or a CPU node
    for r, want, alloc, _, short in columnar.shortfalls(pod, cluster, at):
        if r in pod.extended:  # a shortage an earlier failure explains (absent, or allocatable 0) is not another
            short = short & ~adv & ~(zero & (cols.amounts(r).allocatable == 0))
        fit |= short
        never |= short & (alloc < want)
    fit |= devices == 5  # too few free devices: the fit check's, where no amount is short
    if pod.extended and ext.any():
        never |= ext & cpu_mask(pod.extended)
    count = adv.astype(np.int64) + devsel + pol + zero + fit + never
    order = np.full(cols.n, _ORDER[Check.FIT])
    order[zero] = _ORDER[Check.ZERO_ALLOCATABLE]
    order[devsel] = _ORDER[Check.DEVICE_SELECTORS]
    order[adv] = _ORDER[Check.NOT_ADVERTISED]
    order[~ext & (devices == 2)] = _ORDER[Check.CLAIM_PINNED]
    # The cordon and taint checks share one rank: which of them fails does not change the order.
    order[pol] = _ORDER[Check.TAINT]
    return np.minimum(count, 2), order


class Nearest:
    """Per cluster: caches the selector-independent failures per (tolerations, requests, claims, pinned) key."""

    def __init__(self, cluster: Cluster, *,
                 counts: Callable[[PodFacts, Cluster, Callable[[tuple[str, ...]], np.ndarray]],
                                  tuple[np.ndarray, np.ndarray]] = _vector_counts) -> None:
        """`counts`: how the checks before fit are counted over every node (the tests' reference counts them node
        by node)."""
        self.cluster = cluster
        self._counts = counts
        self._failures: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._cpu_masks: dict[tuple[str, ...], np.ndarray] = {}  # per set of extended resources: the CPU nodes

    def _cpu_mask(self, resources: tuple[str, ...]) -> np.ndarray:
        """The nodes that are CPU nodes for these resources (gpu_labels.cpu_node), over the node columns: once per
        set of resources, not once per pod shape and node."""
        found = self._cpu_masks.get(resources)
        if found is None:
            nodes = columnar.columns_of(self.cluster).nodes
            found = self._cpu_masks[resources] = np.array([cpu_node(n.capacity, n.labels, resources) for n in nodes],
                                                          dtype=bool)
        return found

    def _all(self, pod: PodFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per node: how many checks other than the selector fail (0, 1, or 2 for more), and the rank of the
        failing one where one does; and the nodes where none does."""
        key = (pod.tolerations, pod.requests, pod.claims_shape, bool(pod.pin),  # a pinned pod meets only NoExecute
               pod.nominated)  # the pods nominated by preemption that count as used
        if pod.filters is not None:  # the volume, inter-pod, spread and port checks on top, per their own shape
            # Spread counts only the nodes the pod's selector matches: then the selector is part of the shape.
            key += (pod.filters_key,) + ((pod.node_selector, pod.affinity) if pod.filters.spread else ())
        found = self._failures.get(key)
        if found is None:
            count, order = self._counts(pod, self.cluster, self._cpu_mask)
            found = self._failures[key] = (count, order, np.flatnonzero(count == 0))
        return found

    def of(self, pod: PodFacts) -> dict:
        """{"nearest": [{"node", "reason"}…] (at most SHOWN), "nearest_more": n}, or none and a sentence."""
        c = self.cluster
        nodes = c.nodes or []
        if not nodes or c.node_index is None:
            return {}
        held = _held_to(pod, c.node_index)
        named = None
        if held is not None:
            # A DaemonSet's pod (the controller names its node, matchFields metadata.name) or a pod held to hosts by
            # the kubelet's hostname label: moving it, or relabelling a node's hostname, is no change a person should
            # make, so other nodes "one change away" would be false leads (and 5,000 such pods would cost 5,000
            # passes). The named nodes themselves are still looked at: a failure there is the change to make.
            named, where, absent = held
            if not len(named):
                return {"nearest": [], "nearest_none": f"{where}, and {absent} is in the bundle"}
        count, order, none = self._all(pod)
        matching = selected(pod, c)
        if named is not None:
            keep = np.zeros(len(nodes), dtype=bool)
            keep[named] = True  # np.isin costs more, 5,000 times over
            matching, none = matching[keep[matching]], none[keep[none]]
        one = matching[count[matching] == 1]
        near_at = one[np.lexsort((one, order[one]))]
        # Nodes failing only the selector: every node with no other failure that the selector does not match.
        selector_only = none[~np.isin(none, matching)] if len(none) else none
        room = max(SHOWN - len(near_at), 0)
        shown = [(int(i), None) for i in near_at[:SHOWN].tolist()] + [
            (int(i), Reason(check=Check.SELECTOR, text=_selector_text(pod, nodes[int(i)]))) for i in selector_only[:room].tolist()]
        if not shown and named is not None:
            who = f"{nodes[int(named[0])].name} is" if len(named) == 1 else "none of them is"
            return {"nearest": [], "nearest_none": f"{held[1]}, and {who} not one change away: two or more checks "
                                                   "fail there, or it is a CPU node, or too small for the request even "
                                                   "empty"}
        if not shown:
            return {"nearest": [], "nearest_none": "no node is one change away: on every node two or more checks "
                                                   "fail, or it is a CPU node, or too small for the request even empty"}
        total = len(near_at) + len(selector_only)
        out: dict = {"nearest": []}
        for i, reason in shown[:SHOWN]:
            node = nodes[i]
            if reason is None:  # the node's one failure, in words: the checks on this node only
                reason = (failures(pod, node, c) or nearest_failures(pod, node, c, 1))[0]
            out["nearest"].append({"node": node.name, "reason": _fit_text(pod, node, c) if reason.check is Check.FIT else reason.text})
        if total > SHOWN:
            out["nearest_more"] = total - SHOWN
        return out


def _held_to(pod: PodFacts, index: NodeIndex) -> tuple[np.ndarray, str, str] | None:
    """The only nodes a pod may run on when it names them (their positions, the sentence that says so, and what
    is absent when none is in the bundle): by name (one node, matchFields metadata.name) or by the kubelet's
    kubernetes.io/hostname label; None otherwise."""
    if pod.pin:
        return None
    alone = only_name(pod.terms)
    if alone is not None:
        return (np.array(sorted(index.possible((), None, alone)), dtype=np.int64),  # by name: no pass
                f"it may run only on {alone} (its required node affinity names that node alone)",
                f"no node named {alone}")
    hosts = hostnames_required(pod.node_selector, pod.terms)
    if not hosts:
        return None
    at: set[int] = set()
    for host in hosts:
        at |= index.possible(((HOSTNAME_LABEL, host),), None, "")
    how = "nodeSelector" if any(k == HOSTNAME_LABEL for k, _ in pod.node_selector) else "required node affinity"
    which = (f"the node labelled {HOSTNAME_LABEL}={next(iter(hosts))}" if len(hosts) == 1 else
             f"the nodes labelled {HOSTNAME_LABEL} in ({some_names(sorted(hosts))})")
    return (np.array(sorted(at), dtype=np.int64), f"it may run only on {which} (its {how} names the host)",
            "no node with that label")


@prose.says("nearest")
def _nearest_says(value: object) -> list[str]:
    return [f"Node {n.get('node')} is one change away: {n.get('reason')}." for n in value if isinstance(n, dict)] \
        if isinstance(value, list) else []


@prose.says("nearest_more")
def _nearest_more_says(value: object) -> list[str]:
    return [f"… and {value} more nodes one change away (counted, not listed)."]


@prose.says("nearest_none")
def _nearest_none_says(value: object) -> list[str]:
    return [f"{str(value)[:1].upper()}{str(value)[1:]}."] if value else []
