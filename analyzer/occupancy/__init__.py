"""GPU occupancy per node and accelerator resource (issue 12): the data behind `gpu-triage nodes`
and the report's occupancy picture.

Public API:
    from_items(nodes, pods, config=None) -> Occupancy     kubectl List items (raw JSON) in
    load(path, config=None) -> Occupancy                  a bundle directory or .tar.gz in
    compute(nodes: Iterable[NodeFacts], pods: Iterable[PodUse], config=None) -> Occupancy   slim records in
    Occupancy.rows: tuple[ResourceRow, ...] (display order), .pools: tuple[PoolTotal, ...],
    .pending: {resource: (ns/name, ...)}, .problems, .only(resource_or_pattern)
"""

from analyzer.occupancy.adapter import from_items, load, node_facts, pod_use
from analyzer.occupancy.compute import POOL_LABELS, compute, pool_of
from analyzer.occupancy.order import ORDER_HELP, sort_rows
from analyzer.occupancy.records import (BROKEN, STATES, Holder, NodeFacts, Occupancy, PodUse, PoolTotal, ResourceRow,
                                        Taint)

__all__ = ["BROKEN", "ORDER_HELP", "POOL_LABELS", "STATES", "Holder", "NodeFacts", "Occupancy", "PodUse", "PoolTotal",
           "ResourceRow", "Taint", "compute", "from_items", "load", "node_facts", "pod_use", "pool_of", "sort_rows"]
