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
    resource and its nodeSelector labels are all on the node. Required node affinity and taints are
    not judged here: that is the funnel's work (`gpu-triage why`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.gpu_labels import mig_unsettled, sharing_of
from analyzer.occupancy.order import sort_rows
from analyzer.occupancy.records import (ALLOCATABLE_ZERO, CORDONED, FREE, FULL, NO_PLUGIN, NO_POOL, NOT_READY, OVERCOMMITTED,
                                        TAINTED, USAGE_UNKNOWN, Holder, NodeFacts, Occupancy, PodUse, PoolTotal,
                                        ResourceRow)

TERMINATED = ("Succeeded", "Failed")
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
CORDON_TAINT_KEY = "node.kubernetes.io/unschedulable"  # the node controller's taint for spec.unschedulable

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


def compute(nodes: Iterable[NodeFacts], pods: Iterable[PodUse], config: AcceleratorConfig | None = None, *,
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
    rows: list[ResourceRow] = []
    for node in node_list:
        resources = {r for r in (*node.capacity, *node.allocatable) if config.is_accelerator(r)}
        resources |= held_here.get(node.name, set())  # a pod may use what the node does not report: overcommitted
        gpu_looking = looks_like_gpu_node(node.labels, config)
        if not resources and not gpu_looking:
            continue  # not an accelerator node
        if not resources:
            resources = {expected_resource(node.labels)}
        pool = pool_of(node.labels, pool_labels)
        blocking = tuple(str(t) for t in node.taints if t.effect in BLOCKING_EFFECTS)
        own_taint = any(t.effect in BLOCKING_EFFECTS and t.key != CORDON_TAINT_KEY for t in node.taints)
        for resource in sorted(resources):
            held = sorted(holders.get((node.name, resource), ()), key=lambda h: (-h.units, h.namespace, h.name))
            used = sum(h.units for h in held)
            capacity = node.capacity.get(resource)
            allocatable = node.allocatable.get(resource)
            free = max(0, (allocatable or 0) - used)
            states: list[str] = []
            if node.ready is False:
                states.append(NOT_READY)
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
            rows.append(ResourceRow(node=node.name, pool=pool, resource=resource, capacity=capacity,
                                    allocatable=allocatable, used=used, free=free, holders=tuple(held),
                                    states=tuple(states), taints=blocking,
                                    wanting=wanting.get((node.name, resource), ()),
                                    sharing=sharing_of(resource, node.labels).detail, mig_state=mig_unsettled(node.labels)))
    placed: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        placed[row.resource].update(row.wanting)
    unmatched = {r: tuple(k for k in keys if k not in placed[r]) for r, keys in pending_by_resource.items()}
    return Occupancy(rows=tuple(sort_rows(rows)), pools=_pools(rows), pending=pending_by_resource,
                     problems=tuple(problems), unmatched={r: keys for r, keys in unmatched.items() if keys})


def _wanting(nodes: list[NodeFacts], pending: list[PodUse], config: AcceleratorConfig
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
    label_index: dict[tuple[str, str], list[NodeFacts]] = defaultdict(list)
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


def _pools(rows: list[ResourceRow]) -> tuple[PoolTotal, ...]:
    totals: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        t = totals.setdefault((r.pool, r.resource), [0, 0, 0, 0])
        t[0] += 1
        t[1] += r.allocatable or 0
        t[2] += r.used
        t[3] += r.free
    return tuple(PoolTotal(pool=p, resource=res, nodes=n, allocatable=a, used=u, free=f)
                 for (p, res), (n, a, u, f) in sorted(totals.items(), key=lambda kv: (kv[0][1], kv[0][0])))
