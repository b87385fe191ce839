"""The funnel's checks (kube-scheduler filter plugins in spirit): each looks at one node for one pod shape and
says pass (None) or fail with a Reason that carries the scheduler's own fixed sentence(s) for that failure, so the
scheduler's message is rebuilt from the same checks (evidence/scheduler_message.py) in the scheduler's order
(SCHEDULER_FILTERS), while the funnel (rules/funnel.py) runs them in causes.md's order. PodFacts is the pod shape:
its equality is the funnel cache's key.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING
from dataclasses import dataclass, field

import numpy as np
import orjson

from analyzer.kube import NO_EXECUTE
from analyzer.model.matching import (CORDON_TAINT, Taint, Toleration, is_cordon_taint, names_required, selector_matches,
                                     tolerated, tolerations_of, untolerated)
from analyzer.model.gpu_labels import siblings
from analyzer.model.node_conditions import is_condition_taint
from analyzer.model.gpu_sharing import unadvertised
from analyzer.model.podspec import effective_requests, extended_requested, required_terms
from analyzer.model.quantity import format_units
from analyzer.model.nodes import NodeView
from analyzer.model.columns import Amounts
from analyzer.text import some_names
from analyzer.model.nominated import NominatedPod
from analyzer.model.views import BoundPod, Cluster
from analyzer.model.pod_filters import PodFilters
from analyzer.rules import dra_devices
from analyzer.rules.reason import Check, Reason
from analyzer.rules.shape_state import ShapeState

if TYPE_CHECKING:  # the DRA model is imported only where a pod has claims (rules/dra.py)
    from analyzer.model.dra.outcomes import Resolution

# The scheduler's fixed reason strings (pkg/scheduler/framework/plugins/*: ErrReason…).
UNSCHEDULABLE = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
NODE_NAME = "node(s) didn't match the requested node name"  # nodename.ErrReason
AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
TAINTS_NEW = "node(s) had untolerated taint(s)"  # tainttoleration, since v1.34 (kubernetes#134740)
TOO_MANY_PODS = "Too many pods"  # noderesources: the pods count


def insufficient(resource: str) -> str:
    return TOO_MANY_PODS if resource == "pods" else f"Insufficient {resource}"


def taint_reason(taint: Taint, new_style: bool) -> str:
    return TAINTS_NEW if new_style else f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


class UnreadableSpec(ValueError):
    """A spec that passed the schema but whose selector, affinity or tolerations have no usable form."""


@dataclass(frozen=True, kw_only=True)
class PodFacts:
    """The scheduling-relevant part of one pod spec, parsed once. Its equality is the funnel cache's key:
    every field that a check reads is part of it, so adding a fact cannot silently share a funnel between
    different pods. Derived fields (compare=False) are computed from the identity fields."""

    node_selector: tuple[tuple[str, str], ...]
    affinity: bytes  # canonical JSON of the required node-affinity terms ("null" when there are none)
    tolerations: tuple[Toleration, ...]
    requests: tuple[tuple[str, int], ...]
    pin: str = ""  # spec.nodeName of an attempt: the scheduler is bypassed, only that node counts
    claims_shape: int = -1  # pods whose resource claims have the same shape share a funnel (model/dra)
    filters_key: bytes = b""  # volumes, inter-pod terms, spread, host ports (model/pod_filters.py): alike, shared
    nominated: tuple[str, ...] = ()  # the pods nominated by preemption that count against it (model/nominated.py)
    terms: list[dict] | None = field(default=None, compare=False)
    claims: Resolution | None = field(default=None, compare=False)
    wants: dict[str, int] = field(default_factory=dict, compare=False)
    extended: tuple[str, ...] = field(default=(), compare=False)
    filters: PodFilters | None = field(default=None, compare=False)
    state: ShapeState = field(default_factory=ShapeState, compare=False, repr=False)  # PreFilter state

    @classmethod
    def of(cls, spec: dict, pin: str = "", claims: Resolution | None = None,
           filters: PodFilters | None = None, nominated: tuple[str, ...] = ()) -> "PodFacts":
        has_required = bool(((spec.get("affinity") or {}).get("nodeAffinity") or {})
                            .get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms = required_terms(spec) if has_required else None
        try:
            affinity = orjson.dumps(terms, option=orjson.OPT_SORT_KEYS)
            selector = tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items()))
        except (orjson.JSONEncodeError, TypeError) as exc:  # nesting beyond any real spec, or no JSON form
            raise UnreadableSpec(f"the spec's selector or affinity cannot be read ({exc})") from None
        # HAMi's memory and cores are the extender's to count: no node advertises them (schedulers.md).
        requests = {k: v for k, v in effective_requests(spec).items() if not unadvertised(k)}
        return cls(node_selector=selector, affinity=affinity, tolerations=tolerations_of(spec),
                   requests=tuple(sorted(requests.items())), pin=pin, terms=terms, wants=requests,
                   extended=tuple(extended_requested(requests)), claims=claims,
                   claims_shape=claims.shape_id if claims is not None else -1,
                   filters=filters if filters is not None and filters.key else None,
                   filters_key=filters.key if filters is not None else b"", nominated=nominated)


    @staticmethod
    def of_shape(pod: "PodFacts") -> "PodFacts":
        """The same pod without its volume, inter-pod, spread and port needs (the checks before those)."""
        return dataclasses.replace(pod, filters=None, filters_key=b"")


@dataclass(frozen=True, slots=True, kw_only=True)
class Shortage:
    resource: str
    allocatable: int
    used: int
    free: int
    requested: int


# -- the checks ------------------------------------------------------------------

def check_node_name(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.pin and node.name != pod.pin:
        return Reason(check=Check.NODE_NAME, text=f"spec.nodeName is {pod.pin!r}", scheduler=(NODE_NAME,))
    return None


SELECTOR_TEXT = "labels do not satisfy nodeSelector / required node affinity"


def named_text(names: frozenset[str]) -> str:
    """A node its pod's required node affinity does not name (a DaemonSet's pod: every node but its own). No name
    at all: each term's matchFields metadata.name requirements (ANDed) name no one node, as `In [a]` with `In [b]`."""
    if not names:
        return "required node affinity names no node (its matchFields metadata.name requirements exclude every name)"
    return f"required node affinity names only {some_names(sorted(names))} (matchFields metadata.name)"


def check_affinity(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if selector_matches(dict(pod.node_selector), pod.terms, node.labels, node.name):
        return None
    names = names_required(pod.terms)
    text = named_text(names) if names is not None and node.name not in names else SELECTOR_TEXT
    return Reason(check=Check.SELECTOR, text=text, scheduler=(AFFINITY,))


def check_selector(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return check_node_name(pod, node, cluster) or check_affinity(pod, node, cluster)


def is_cordoned(pod: PodFacts, node: NodeView) -> bool:
    """spec.unschedulable, not tolerated (NodeUnschedulable filter)."""
    return node.unschedulable and not tolerated(CORDON_TAINT, pod.tolerations)


def check_cordon(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if is_cordoned(pod, node):
        return Reason(check=Check.CORDON, text="cordoned (spec.unschedulable)", scheduler=(UNSCHEDULABLE,))
    return None


def check_taint(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The TaintToleration filter alone (the cordon taint counts here, as in the scheduler)."""
    blocking = untolerated(node.taints, pod.tolerations)
    if blocking:
        return Reason(check=Check.TAINT, text="untolerated taint " + ", ".join(map(str, blocking)),
                      scheduler=(taint_reason(blocking[0], cluster.new_taint_wording),))
    return None


def node_policy(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The node's own cordon and taints: what the node's taint kind decides (rules/columnar.py judges it once
    per kind)."""
    if pod.pin:
        # spec.nodeName bypasses the scheduler: the kubelet admits it ignoring the cordon and
        # NoSchedule taints, and rejects only untolerated NoExecute taints (kubelet lifecycle predicate).
        blocking = untolerated(node.taints, pod.tolerations, (NO_EXECUTE,))
        return _taint_reason(blocking, "") if blocking else None
    blocking = untolerated(node.taints, pod.tolerations)
    cordon = is_cordoned(pod, node) or any(map(is_cordon_taint, blocking))
    others = [t for t in blocking if not is_cordon_taint(t)]
    if others:
        return _taint_reason(others, " (and cordoned)" if cordon else "")
    if cordon:
        return Reason(check=Check.CORDON,
                      text="cordoned (spec.unschedulable), no toleration for node.kubernetes.io/unschedulable:NoSchedule")
    return None


def check_policy(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """Cordon and taints as one stage (a node only cordoned counts toward `cordoned`), then the claims' devices'
    taints (not for a pod with spec.nodeName: the kubelet admits it by the node's NoExecute taints alone)."""
    found = node_policy(pod, node, cluster)
    return found if found is not None or pod.pin else dra_devices.device_taints(pod.claims, node, cluster)


def _taint_reason(blocking: list[Taint], tail: str) -> Reason:
    """Only condition taints (node-unhealthy): the node's condition is the fix; any user taint among them keeps
    it untolerated-taint. The text reads the taints alone, so nodes with the same taints share one Reason (the
    vector form judges once per set of taints); the conditions behind them are named where nodes are named."""
    if all(map(is_condition_taint, blocking)):
        return Reason(check=Check.CONDITION, text="untolerated condition taint " + ", ".join(map(str, blocking)) + tail)
    return Reason(check=Check.TAINT, text="untolerated taint " + ", ".join(map(str, blocking)) + tail)


def missing_text(resource: str, in_capacity: bool) -> str:
    """What the advertised stage says of one requested extended resource a node lacks."""
    return f"{resource} capacity 0 (device plugin gone)" if in_capacity else f"no {resource} in status.capacity"


def node_advertised(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The requested extended resources the node does not advertise (and no DeviceClass serves there)."""
    # Capacity 0 counts as not advertised: when a device plugin goes away the kubelet keeps the
    # resource name with capacity 0, and the next action is the same: restore the device plugin.
    missing = [r for r in pod.extended if node.capacity.get(r, 0) <= 0 and not _served_by_dra(r, node, cluster)]
    if not missing:
        return None
    texts, other_names = [], False
    for r in missing:
        offered = siblings(r, node.capacity, cluster.config)
        if offered:  # the vendor's devices are here under another name (resource-name-mismatch)
            other_names = True
            text = (f"no {r} in status.capacity" if r not in node.capacity else f"{r} capacity 0") + \
                "; advertises " + ", ".join(f"{name} ({count})" for name, count in offered)
        else:
            text = missing_text(r, r in node.capacity)
        texts.append(text)
    return Reason(check=Check.OTHER_NAME if other_names else Check.NOT_ADVERTISED, text=", ".join(texts))


def check_advertised(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return node_advertised(pod, node, cluster) or dra_devices.no_devices(pod.claims, node, cluster)


def _served_by_dra(resource: str, node: NodeView, cluster: Cluster) -> bool:
    """An extended resource a DeviceClass serves on a node that does not advertise it (dra_devices.md)."""
    offer = dra_devices.extended_offer(resource, node, cluster) if node.allocatable.get(resource, 0) == 0 else None
    return offer is not None and offer.offered > 0


def check_device_selectors(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return dra_devices.device_selectors(pod.claims, node, cluster)


def check_allocatable(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    zero = [r for r in pod.extended if node.allocatable.get(r, 0) == 0 and not _served_by_dra(r, node, cluster)]
    if zero:
        return Reason(check=Check.ZERO_ALLOCATABLE, text=", ".join(zero_text(r, node.capacity.get(r, 0)) for r in zero))
    return None


def zero_text(resource: str, capacity: int) -> str:
    return f"{resource}: capacity {capacity}, allocatable 0"


def _fit_order(pod: PodFacts, cluster: Cluster) -> tuple[tuple[str, int, bool], ...]:
    """(resource, units wanted, extended?) for what the pod requests, plus one pod slot, accelerators first.
    Made once per pod shape and cluster config (it is asked per node, tens of thousands of times)."""
    config = cluster.config
    cached = pod.state.fit_order
    if cached is not None and cached[0] is config:
        return cached[1]
    order = tuple((r, 1 if r == "pods" else pod.wants.get(r, 0), r in pod.extended)
                  for r in config.resource_order(list(pod.wants) + ["pods"]))
    order = tuple(x for x in order if x[1] > 0)  # the scheduler checks only what the pod requests
    pod.state.fit_order = (config, order)
    return order


_NOTHING: dict[str, int] = {}


def used_on(pod: PodFacts, node: NodeView, cluster: Cluster) -> dict[str, int]:
    """What NodeResourcesFit counts as used on the node for this pod: the bound pods' requests, plus those of the
    pods nominated there that count against it (model/nominated.py)."""
    if pod.nominated and cluster.nominated is not None:
        found = cluster.nominated.overlay(pod.nominated, cluster.usage).used.get(node.name)
        if found is not None:
            return found
    return cluster.usage.get(node.name) or _NOTHING


def used_column(pod: PodFacts, cluster: Cluster, resource: str, amounts: Amounts) -> np.ndarray:
    """used_on over every node, for one resource: the columns' `used`, plus the nominated pods that count."""
    if pod.nominated and cluster.nominated is not None and cluster.columns is not None:
        return cluster.nominated.overlay(pod.nominated, cluster.usage).column(resource, amounts, cluster.columns)
    return amounts.used


def holders_on(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[BoundPod | NominatedPod]:
    """The pods whose requests used_on sums: the bound ones, then the nominated ones that count."""
    bound: list[BoundPod | NominatedPod] = list(cluster.pods_on.get(node.name, ()))
    if pod.nominated and cluster.nominated is not None:
        bound += cluster.nominated.overlay(pod.nominated, cluster.usage).on.get(node.name, ())
    return bound


def shortages(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Shortage]:
    """Every resource the pod is short of on the node (NodeResourcesFit), accelerators first."""
    used = used_on(pod, node, cluster)
    allocatable = node.allocatable
    out = []
    for r, want, extended in _fit_order(pod, cluster):
        alloc = allocatable.get(r, 0)
        if alloc == 0 and extended:
            alloc, held, _ = available(pod, node, cluster, r, used)  # perhaps served by a DeviceClass
        else:
            held = used.get(r, 0)
        if alloc - held < want:
            out.append(Shortage(resource=r, allocatable=alloc, used=held, free=alloc - held, requested=want))
    return out


def available(pod: PodFacts, node: NodeView, cluster: Cluster, resource: str,
              used: dict[str, int]) -> tuple[int, int, str | None]:
    """(allocatable, in use, the DeviceClass serving it or None) of one resource on one node. An extended
    resource the node does not advertise but a DeviceClass serves counts that class's devices (dra_devices.md)."""
    alloc = node.allocatable.get(resource, 0)
    offer = dra_devices.extended_offer(resource, node, cluster) if alloc == 0 and resource in pod.extended else None
    if offer is not None:
        return offer.offered, offer.offered - offer.free, offer.device_class
    return alloc, used.get(resource, 0), None


def fit_reason(short: list[tuple[str, int, int, int]]) -> Reason:
    """NodeResourcesFit's failure on one node from its shortages: (resource, free, allocatable, requested) each."""
    return Reason(check=Check.FIT, text="; ".join(
        f"{r}: {format_units(r, free)} free of {format_units(r, alloc)} allocatable, {format_units(r, want)} requested"
        for r, free, alloc, want in short), scheduler=tuple(insufficient(r) for r, _, _, _ in short))


def node_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    short = shortages(pod, node, cluster)
    return fit_reason([(s.resource, s.free, s.allocatable, s.requested) for s in short]) if short else None


def check_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return node_fit(pod, node, cluster) or dra_devices.devices_free(pod.claims, node, cluster)


# The scheduler's filters in its own order are listed in rules/scheduler_filters.py.
def check_claims(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The scheduler's DynamicResources filter: any device step that fails on this node."""
    for check in (dra_devices.no_devices, dra_devices.device_selectors, dra_devices.device_taints, dra_devices.devices_free):
        reason = check(pod.claims, node, cluster)
        if reason is not None:
            return reason
    return None
