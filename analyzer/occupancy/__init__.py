"""GPU occupancy per node and accelerator resource: the data behind `gpu-triage nodes`
and the report's occupancy picture.

Public API (each from its module; this package imports nothing, so the command line's help reads
order.ORDER_HELP without loading the rest):
    from_analysis.occupancy_of(analysis) -> Occupancy     what an analysis already read and modelled
    compute.compute(nodes: Iterable[NodeView], pods: Iterable[PodUse], config=None) -> Occupancy
    records: Occupancy.rows: tuple[ResourceRow, ...] (display order), .pools: tuple[PoolTotal, ...],
    .pending: {resource: (ns/name, ...)}, .problems, .only(resource_or_pattern)
    order.sort_rows, order.ORDER_HELP; compute.POOL_LABELS, compute.pool_of
"""
