"""Display order of occupancy rows: what a person looks for first.

Per resource (nvidia.com/gpu first, then the others by name):
  1. nodes with free units a waiting pod can use and nothing broken, most free first (a tainted node is
     here when a pod that wants it tolerates the taint);
  2. broken nodes (not ready, no plugin, allocatable 0, cordoned, overcommitted, usage unknown), and
     nodes whose free units sit behind a taint no waiting pod tolerates;
  3. healthy full nodes.
Ties by pool, then node name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # the command line reads ORDER_HELP at every start: nothing else is loaded for it
    from analyzer.occupancy.records import ResourceRow

ORDER_HELP = ("per resource: nodes with free units a waiting pod can use first (most free first), then broken nodes "
              "(not ready, no plugin, allocatable 0, cordoned, overcommitted) and free units behind an untolerated taint, "
              "then full nodes; ties by pool and node name")


def resource_rank(resource: str) -> tuple[int, str]:
    return (0 if resource == "nvidia.com/gpu" else 1, resource)


def row_key(row: ResourceRow) -> tuple:
    if row.broken or row.behind_taint:
        group = 1
    elif row.usable > 0:
        group = 0
    else:
        group = 2
    return (resource_rank(row.resource), group, -row.usable if group == 0 else 0, row.pool, row.node)


def sort_rows(rows: Iterable[ResourceRow]) -> list[ResourceRow]:
    return sorted(rows, key=row_key)
