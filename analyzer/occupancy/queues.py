"""Kueue's ClusterQueues as rows for `nodes` and the report, beside the GPU occupancy picture (queues.md): per ClusterQueue, flavor and
accelerator resource, the nominal quota, what admitted workloads reserve (and by which), what that borrows beyond the
nominal, and how many workloads wait for the queue. Built from the model (model/queues.py); nothing is judged here."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.queue_world import QueueWorld
from analyzer.text import WORKLOADS_NAMED_PER_QUEUE_ROW, named_few


@dataclass(frozen=True, kw_only=True)
class QueueRow:
    """One Kueue ClusterQueue, flavor and accelerator resource: its quota and who holds it (queues.md)."""

    cluster_queue: str
    cohort: str  # "" when in none
    flavor: str
    resource: str
    nominal: int
    reserved: int  # what admitted workloads reserve there
    borrowed: int  # reserved beyond the nominal quota (lent by the cohort)
    held_by: str  # the workloads holding it, largest first, a few named
    waiting: int  # workloads of the ClusterQueue with no quota reserved yet
    alert: bool = False  # nothing left while workloads wait


def queue_rows(world: QueueWorld | None, config: AcceleratorConfig) -> list[QueueRow]:
    if world is None or not world.kueue.cluster_queues:
        return []
    k = world.kueue
    local_to_cq = {(lq.namespace, lq.name): lq.cluster_queue for lq in k.local_queues.values()}
    waiting: dict[str, int] = {}
    for w in k.workloads:
        if w.finished or w.holds("QuotaReserved"):
            continue
        cq_name = local_to_cq.get((w.namespace, w.queue), "")
        waiting[cq_name] = waiting.get(cq_name, 0) + 1
    rows = []
    for name, cq in sorted(k.cluster_queues.items()):
        reserved = world.tree.reserved.get(name, {})
        for group in cq.groups:
            for fq in group.flavors:
                for resource in config.resource_order([r for r in group.covered if config.is_accelerator(r)]):
                    nominal = fq.nominal.get(resource, 0)
                    held = reserved.get((fq.flavor, resource))
                    units = held.units if held is not None else 0
                    names = [f"{key} ({n})" for key, n in (held.workloads if held is not None else ())]
                    rows.append(QueueRow(cluster_queue=name, cohort=cq.cohort, flavor=fq.flavor, resource=resource,
                                         nominal=nominal, reserved=units, borrowed=max(0, units - nominal),
                                         held_by=named_few(names, WORKLOADS_NAMED_PER_QUEUE_ROW), waiting=waiting.get(name, 0),
                                         alert=units >= nominal and waiting.get(name, 0) > 0))
    return rows
