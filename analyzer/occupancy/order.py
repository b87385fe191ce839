"""Display order of occupancy rows: what a person looks for first.

Per resource (nvidia.com/gpu first, then the others by name):
  1. nodes with free units and nothing broken, most free first (where a waiting pod can go; a
     tainted node is here too, its taint shown);
  2. broken nodes (not ready, no plugin, allocatable 0, cordoned, overcommitted, usage unknown);
  3. healthy full nodes.
Ties by pool, then node name.
"""

from __future__ import annotations

from typing import Iterable

from analyzer.occupancy.records import ResourceRow

ORDER_HELP = ("per resource: nodes with free units first (most free first), then broken nodes (not ready, no plugin, "
              "allocatable 0, cordoned, overcommitted), then full nodes; ties by pool and node name")


def resource_rank(resource: str) -> tuple[int, str]:
    return (0 if resource == "nvidia.com/gpu" else 1, resource)


def row_key(row: ResourceRow) -> tuple:
    if row.broken:
        group = 1
    elif row.free > 0:
        group = 0
    else:
        group = 2
    return (resource_rank(row.resource), group, -row.free if group == 0 else 0, row.pool, row.node)


def sort_rows(rows: Iterable[ResourceRow]) -> list[ResourceRow]:
    return sorted(rows, key=row_key)
