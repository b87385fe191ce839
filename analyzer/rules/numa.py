"""`numa-unaligned` (causes.md; node-start.md): the kubelet's Topology Manager rejected the pod with
`TopologyAffinityError` (pkg/kubelet/cm/topologymanager/topology_manager.go: "Resources cannot be allocated with
Topology locality") because no NUMA node could hold its devices (and, with the static CPU manager, its CPUs) under
the `single-numa-node` or `restricted` policy. The bundle cannot see the kubelet's policy or the machine's NUMA
layout; the evidence says what it can: what the pod asks, what the node has of it, and what its labels say about
NUMA (NFD's `feature.node.kubernetes.io/…numa…`, or a vendor's per-NUMA labels), where they say anything.
"""

from __future__ import annotations

from analyzer import prose
from analyzer.model.podspec import effective_requests, extended_requested
from analyzer.model.quantity import QuantityError, format_units
from analyzer.rules.case import Case


def layout(case: Case) -> dict:
    t, c = case.target, case.cluster
    try:
        requests = effective_requests(t.spec or {})
    except (QuantityError, TypeError, ValueError, AttributeError):
        requests = {}
    devices = extended_requested(requests)
    out: dict = {"node": t.node_name,
                 "asked": {r: format_units(r, requests[r]) for r in devices},
                 "cpu_asked": format_units("cpu", requests["cpu"]) if requests.get("cpu") else None}
    node = c.nodes_by_name.get(t.node_name)
    if node is None:
        out["node_in_bundle"] = False
        return out
    out["on_node"] = {r: format_units(r, node.allocatable.get(r, 0)) for r in devices}
    out["numa_labels"] = {k: v for k, v in sorted(node.labels.items()) if "numa" in k.lower()}
    return out


def sentence(numa: dict) -> str:
    asked = ", ".join(f"{q} {r}" for r, q in (numa.get("asked") or {}).items()) or "no device"
    if numa.get("node_in_bundle") is False:
        return f"it asks for {asked}; node {numa.get('node')} is not in the bundle"
    has = ", ".join(f"{q} {r}" for r, q in (numa.get("on_node") or {}).items()) or "none of them"
    labels = numa.get("numa_labels") or {}
    said = ("its NUMA labels: " + ", ".join(f"{k}={v}" for k, v in labels.items()) if labels else
            "its labels do not say how its devices sit on its NUMA nodes")
    return (f"it asks for {asked}, node {numa.get('node')} has {has} allocatable in all, and {said} "
            "(no single NUMA node could hold them under the node's topology manager policy)")


@prose.says("numa")
def _say_numa(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    out = [sentence(value)[0].upper() + sentence(value)[1:] + "."]
    if value.get("cpu_asked"):
        out.append(f"It also asks for {value['cpu_asked']} cpu, which the static CPU manager aligns with the devices.")
    return out
