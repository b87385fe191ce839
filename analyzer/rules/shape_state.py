"""What the funnel's checks work out once per pod shape, as kube-scheduler's PreFilter state is worked out once
per pod: a typed object each PodFacts owns (outside its identity, so two equal shapes still share one funnel).

Each field belongs to the check module named beside it, which fills it at its first use; nothing else writes
it. Made per shape, never shared between shapes, and never part of the model (which does not change once built).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from analyzer.model.accelerators import AcceleratorConfig

# The states of the check modules are typed where they are made; named here only in words, as those modules import
# this one (through PodFacts) and an import back would be a cycle.


@dataclass(kw_only=True)
class ShapeState:
    # checks._fit_order: (the config it was made for, (resource, units wanted, extended?) in fit order)
    fit_order: "tuple[AcceleratorConfig, tuple[tuple[str, int, bool], ...]] | None" = None
    # volumes.state: (_Bound, _Delayed) lists: each claim's bound volume, or what could serve a WaitForFirstConsumer claim
    volumes: tuple[list[Any], list[Any]] | None = None
    # volume_columns.parts: (binding, zone) code matrices over the nodes
    volume_parts: tuple[np.ndarray, np.ndarray] | None = None
    spread: list[Any] | None = None  # spread.state: a Domains per constraint: matching pods per eligible domain, per constraint
    interpod: Any = None  # interpod.state: an InterPodState
    in_use: Any = None  # in_use.state: an InUseState
    # columnar.shortfalls: (the positions asked, per resource (resource, wanted, allocatable, free, short)): the fit
    # stage's candidates, read again by the fit evidence
    fit_rows: tuple[np.ndarray, list[Any]] | None = None
    # filter_columns: the inter-pod and spread codes over every node
    interpod_codes: np.ndarray | None = None
    spread_codes: np.ndarray | None = None
