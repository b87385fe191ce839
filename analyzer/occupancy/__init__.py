"""GPU occupancy per node and accelerator resource (issue 12): the data behind `gpu-triage nodes`
and the report's occupancy picture.

Public API:
    from_analysis.occupancy_of(analysis) -> Occupancy     what an analysis already read and modelled
    compute(nodes: Iterable[NodeView], pods: Iterable[PodUse], config=None) -> Occupancy   model records in
    Occupancy.rows: tuple[ResourceRow, ...] (display order), .pools: tuple[PoolTotal, ...],
    .pending: {resource: (ns/name, ...)}, .problems, .only(resource_or_pattern)
"""

from analyzer.occupancy.compute import POOL_LABELS, compute, pool_of
from analyzer.occupancy.order import ORDER_HELP, sort_rows
from analyzer.occupancy.records import (BROKEN, STATES, Holder, Occupancy, PodUse, PoolTotal, ResourceRow)

__all__ = ["BROKEN", "ORDER_HELP", "POOL_LABELS", "STATES", "Holder", "Occupancy", "PodUse", "PoolTotal", "ResourceRow",
           "compute", "pool_of", "sort_rows"]
