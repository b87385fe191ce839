"""The occupancy picture from slim records: per node and accelerator resource, what is there,
what is held (and by whom), what is free, what state the node is in, and who waits for it.

Rules (each as Kubernetes has it):
  - used = the sum of effective requests of pods bound to the node (spec.nodeName) whose phase is
    not Succeeded/Failed: kubectl describe node (staging/src/k8s.io/kubectl/pkg/describe/describe.go)
    lists the node's pods with the field selector
    `spec.nodeName=<node>,status.phase!=Succeeded,status.phase!=Failed` and sums them in
    getPodsTotalRequestsAndLimits (resourcehelper.PodRequestsAndLimits per pod). A bound pod still
    Pending (image pull) holds its units.
  - free = allocatable - used, never below 0 (more used than allocatable is shown as overcommitted).
  - blocking taints are those with effect NoSchedule or NoExecute (PreferNoSchedule never blocks):
    pkg/scheduler/framework/plugins/tainttoleration Filter passes helper.DoNotScheduleTaintsFilterFunc()
    to FindMatchingUntoleratedTaint.
  - a pending pod "wants" a node's resource when it is unbound, not terminated, asks for > 0 of the
    resource and its nodeSelector labels are all on the node. Required node affinity is not judged here:
    that is the funnel's work (`gpu-triage why`).
  - free units of a node with a blocking taint of its own are "behind the taint" unless some pod wanting
    them tolerates it (TaintToleration's rule, model/matching.untolerated): a tainted node's free GPUs
    are not free for the pods that wait.
  - a resource pending pods ask for that no node offers (no device plugin, no DRA driver publishing a
    ResourceSlice) is shown on the nodes their selectors match, as "no plugin", at most 20 of them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from analyzer.kube import BLOCKING_EFFECTS, TERMINATED, UNSCHEDULABLE_TAINT_KEY
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.nodes import NodeView
from analyzer.model.matching import untolerated
from analyzer.model.gpu_labels import mig_unsettled, sharing_of, siblings
from analyzer.occupancy.order import sort_rows
from analyzer.occupancy.records import (ALLOCATABLE_ZERO, CORDONED, FREE, FULL, NO_PLUGIN, NO_POOL, NOT_READY, OVERCOMMITTED, UNHEALTHY,
                                        TAINTED, USAGE_UNKNOWN, Holder, Occupancy, PodUse, PoolTotal,
                                        ResourceRow)


# The label that names a node's pool: the first of these present (GPU product first, then instance
# type, then the cloud's node-group labels).
POOL_LABELS: tuple[str, ...] = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "agentpool",
    "karpenter.sh/nodepool",
)

# A hostname says nothing about a node's hardware ("gpu-ok" is just a name).
_NAME_LABELS = ("kubernetes.io/hostname",)


def pool_of(labels: dict[str, str], pool_labels: tuple[str, ...] = POOL_LABELS) -> str:
    for key in pool_labels:
        value = labels.get(key)
        if value:
            return value
    return NO_POOL


def looks_like_gpu_node(labels: dict[str, str], config: AcceleratorConfig) -> bool:
    """A label key or value mentions an accelerator (nvidia.com/gpu.present, gke-accelerator, ...)."""
    for key, value in labels.items():
        if config.mentions_accelerator(key):
            return True
        if key not in _NAME_LABELS and config.mentions_accelerator(value):
            return True
    return False


def expected_resource(labels: dict[str, str]) -> str:
    """The resource a GPU-looking node without any accelerator resource should offer."""
    text = " ".join(f"{k}={v}" for k, v in labels.items() if k not in _NAME_LABELS).lower()
    if "amd.com/" in text:
        return "amd.com/gpu"
    if "tpu" in text:
        return "google.com/tpu"
    return "nvidia.com/gpu"


def compute(nodes: Iterable[NodeView], pods: Iterable[PodUse], config: AcceleratorConfig | None = None, *,
            pool_labels: tuple[str, ...] = POOL_LABELS, problems: Iterable[str] = ()) -> Occupancy:
    config = config or AcceleratorConfig()
    node_list = list(nodes)
    holders: dict[tuple[str, str], list[Holder]] = defaultdict(list)  # (node, resource) -> holders
    unknown_on: set[str] = set()
    pending: list[PodUse] = []
    for pod in pods:
        if pod.phase in TERMINATED:
            continue
        if not pod.node:
            if pod.readable:
                pending.append(pod)
            continue
        if not pod.readable:
            unknown_on.add(pod.node)
            continue
        for resource, units in pod.requests.items():
            if units > 0 and config.is_accelerator(resource):
                holders[(pod.node, resource)].append(Holder(namespace=pod.namespace, name=pod.name, units=units))

    held_here: dict[str, set[str]] = defaultdict(set)
    for node_name, resource in holders:
        held_here[node_name].add(resource)
    wanting, pending_by_resource = _wanting(node_list, pending, config)
    tolerations = {p.key: p.tolerations for p in pending}
    unoffered = _unoffered(node_list, pending_by_resource, wanting, config)
    rows: list[ResourceRow] = []
    for node in node_list:
        resources = {r for r in (*node.capacity, *node.allocatable) if config.is_accelerator(r)}
        resources |= held_here.get(node.name, set())  # a pod may use what the node does not report: overcommitted
        resources |= unoffered.get(node.name, set())
        gpu_looking = looks_like_gpu_node(node.labels, config)
        if not resources and not gpu_looking:
            continue  # not an accelerator node
        if not resources:
            resources = {expected_resource(node.labels)}
        pool = pool_of(node.labels, pool_labels)
        blocking = tuple(str(t) for t in node.taints if t.effect in BLOCKING_EFFECTS)
        own_taints = tuple(t for t in node.taints if t.effect in BLOCKING_EFFECTS and t.key != UNSCHEDULABLE_TAINT_KEY)
        own_taint = bool(own_taints)
        for resource in sorted(resources):
            held = sorted(holders.get((node.name, resource), ()), key=lambda h: (-h.units, h.namespace, h.name))
            used = sum(h.units for h in held)
            capacity = node.capacity.get(resource)
            allocatable = node.allocatable.get(resource)
            free = max(0, (allocatable or 0) - used)
            states: list[str] = []
            if node.ready is False:
                states.append(NOT_READY)
            if node.conditions:
                states.append(UNHEALTHY)
            if not capacity:
                states.append(NO_PLUGIN)
            elif not allocatable:
                states.append(ALLOCATABLE_ZERO)
            if node.unschedulable:
                states.append(CORDONED)
            if own_taint:
                states.append(TAINTED)
            if used > (allocatable or 0):
                states.append(OVERCOMMITTED)
            if node.name in unknown_on:
                states.append(USAGE_UNKNOWN)
            if not {NO_PLUGIN, ALLOCATABLE_ZERO, OVERCOMMITTED} & set(states):
                states.append(FREE if free > 0 else FULL)
            waiting = wanting.get((node.name, resource), ())
            tolerating = tuple(k for k in waiting if not untolerated(own_taints, tolerations.get(k, ()))) if own_taint else ()
            behind = free if own_taint and not tolerating else 0
            rows.append(ResourceRow(node=node.name, pool=pool, resource=resource, capacity=capacity,
                                    allocatable=allocatable, used=used, free=free, holders=tuple(held),
                                    states=tuple(states), taints=blocking, wanting=waiting,
                                    behind_taint=behind, tolerating=tolerating,
                                    sharing=sharing_of(resource, node.labels).detail, mig_state=mig_unsettled(node.labels),
                                    conditions=tuple(c.says() for c in node.conditions)))
    placed: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        placed[row.resource].update(row.wanting)
    unmatched = {r: tuple(k for k in keys if k not in placed[r]) for r, keys in pending_by_resource.items()}
    return Occupancy(rows=tuple(sort_rows(rows)), pools=_pools(rows), pending=pending_by_resource,
                     problems=tuple(problems), unmatched={r: keys for r, keys in unmatched.items() if keys})


def _wanting(nodes: list[NodeView], pending: list[PodUse], config: AcceleratorConfig
             ) -> tuple[dict[tuple[str, str], tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(node, resource) -> pending pods that want it; resource -> every pending pod asking for it.

    Pods are grouped by (resource, nodeSelector) and each group is checked only against the nodes that
    carry its rarest selector label, so 5,000 pods pinned each to its own hostname cost 5,000 lookups,
    not 5,000 x 5,000 comparisons."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[str]] = defaultdict(list)
    by_resource: dict[str, list[str]] = defaultdict(list)
    for pod in pending:
        selector = tuple(sorted(pod.node_selector.items()))
        for resource, units in pod.requests.items():
            if units > 0 and config.is_accelerator(resource):
                groups[(resource, selector)].append(pod.key)
                by_resource[resource].append(pod.key)
    label_index: dict[tuple[str, str], list[NodeView]] = defaultdict(list)
    for node in nodes:
        for pair in node.labels.items():
            label_index[pair].append(node)
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (resource, selector), keys in groups.items():
        if selector:
            rarest = min(selector, key=lambda pair: len(label_index.get(pair, ())))
            candidates = label_index.get(rarest, [])
        else:
            candidates = nodes
        for node in candidates:
            if all(node.labels.get(k) == v for k, v in selector):
                found[(node.name, resource)].extend(keys)
    wanting = {k: tuple(sorted(v)) for k, v in found.items()}
    return wanting, {r: tuple(sorted(v)) for r, v in sorted(by_resource.items())}


MAX_UNOFFERED_NODES = 20  # nodes listed for a resource no node offers (a CPU cluster must not list 5,000)


def _unoffered(nodes: list[NodeView], pending: dict[str, tuple[str, ...]],
               wanting: dict[tuple[str, str], tuple[str, ...]], config: AcceleratorConfig) -> dict[str, set[str]]:
    """node -> resources pending pods ask for that NO node offers, on the nodes their selectors match (at most
    MAX_UNOFFERED_NODES per resource): those nodes are where the device plugin or DRA driver is missing, so
    they are listed as 'no plugin' rather than left out of the picture."""
    offered = {r for n in nodes for r in (*n.capacity, *n.allocatable) if config.is_accelerator(r)}
    by_name = {n.name: n for n in nodes}
    out: dict[str, set[str]] = defaultdict(set)
    for resource in pending:
        if resource in offered:
            continue
        matched = sorted(node for (node, r) in wanting if r == resource)
        # Offered under another name (time-slicing's gpu.shared, MIG profiles): those rows show it already, and
        # the pod's word (resource-name-mismatch) says which name to ask for.
        if any(siblings(resource, by_name[node].capacity, config) for node in matched if node in by_name):
            continue
        if len(matched) <= MAX_UNOFFERED_NODES:
            for node in matched:
                out[node].add(resource)
    return out


def _pools(rows: list[ResourceRow]) -> tuple[PoolTotal, ...]:
    totals: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        t = totals.setdefault((r.pool, r.resource), [0, 0, 0, 0, 0])
        t[0] += 1
        t[1] += r.allocatable or 0
        t[2] += r.used
        t[3] += r.free
        t[4] += r.behind_taint
    return tuple(PoolTotal(pool=p, resource=res, nodes=n, allocatable=a, used=u, free=f, behind_taint=b)
                 for (p, res), (n, a, u, f, b) in sorted(totals.items(), key=lambda kv: (kv[0][1], kv[0][0])))
