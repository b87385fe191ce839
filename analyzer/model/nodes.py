"""What a node offers, as the rules read it (built once per bundle by model/build.py). Apart from views.py so
the indexes built over nodes (node_index.py, dra/world.py) do not import the Cluster that holds them."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model.matching import Taint
from analyzer.model.node_conditions import NodeConditionSeen


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeView:
    """One node, as every consumer reads it (rules, occupancy, diff). Quantities in scheduler units."""

    name: str
    index: int  # its item in nodes.json
    labels: dict[str, str]
    unschedulable: bool
    taints: tuple[Taint, ...]
    capacity: dict[str, int]
    allocatable: dict[str, int]
    ready: bool | None = None  # the Ready condition ("False" and "Unknown", a lost node, are both not ready)
    conditions: tuple[NodeConditionSeen, ...] = ()  # its adverse conditions (model/node_conditions.py)


def ready_of(status: dict) -> bool | None:
    for c in status.get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return None


@dataclass(frozen=True, kw_only=True)
class InvalidNode:
    """A node that failed validation: out of the funnel, but a pod it might have served is not guessed at."""

    name: str | None
    labels: dict[str, str] | None  # None when unreadable: then it might match any selector
    finding: str
