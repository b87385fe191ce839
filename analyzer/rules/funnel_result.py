"""What a funnel run gives: each stage's nodes in and out and the removed nodes with their reasons. Apart from
funnel.py so the Case every rule reads can name it without importing the funnel rule.

Nodes are positions in nodes.json (numpy arrays), removed nodes come in groups that share one Reason: a stage
that removes 4,999 nodes for one reason holds one Reason and one array, not 4,999 pairs. The node records and
the (node name, Reason) pairs are made only when asked for (`kept`, `removed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from analyzer.model.nodes import NodeView
from analyzer.rules.checks import PodFacts
from analyzer.rules.reason import (
    Groups,
    Reason,
    Removed,
    group_sizes,
    removed_positions,
)

if TYPE_CHECKING:
    from analyzer.verdict import Fit


@dataclass(kw_only=True)
class StageResult:
    name: str
    nodes_in: int
    kept_at: np.ndarray  # positions in nodes.json, ascending
    groups: list[Removed] | Groups  # removed nodes: one group per distinct Reason, by their first node
    nodes: list[NodeView] = field(repr=False)

    @property
    def nodes_out(self) -> int:
        return len(self.kept_at)

    @property
    def kept(self) -> list[NodeView]:
        nodes = self.nodes
        return [nodes[i] for i in self.kept_at.tolist()]

    def removed_nodes(self, nodes: list[NodeView] | None = None, limit: int | None = None) -> Iterator[tuple[str, Reason]]:
        """Removed nodes with their reasons, in the order of nodes.json (the first `limit` only, if given)."""
        if not self.groups:
            return
        nodes = self.nodes if nodes is None else nodes
        at = removed_positions(self.groups)
        which = np.repeat(np.arange(len(self.groups)), group_sizes(self.groups))
        order = np.argsort(at, kind="stable")[:limit]
        for i, k in zip(at[order].tolist(), which[order].tolist()):
            yield nodes[i].name, self.groups[k].reason

    def removed_views(self) -> list[NodeView]:
        """The removed nodes, in the order of nodes.json."""
        nodes = self.nodes
        return [nodes[i] for i in sorted(removed_positions(self.groups).tolist())] if self.groups else []

    @property
    def removed(self) -> list[tuple[str, Reason]]:
        return list(self.removed_nodes())

    def judged(self) -> list[NodeView]:
        """Every node the stage judged: the removed ones in nodes.json order, then the kept (no Reason made)."""
        nodes = self.nodes
        at = np.sort(removed_positions(self.groups)) if self.groups else np.zeros(0, dtype=np.int64)
        return [nodes[i] for i in at.tolist()] + self.kept


@dataclass(kw_only=True)
class ShapeEvidence:
    """The evidence every pod of one shape shows alike, made on first use and then shared: kube-scheduler's
    PreFilter state, for the evidence. One per funnel (FunnelResult.evidence); each field belongs to the family
    named beside it, which fills it; nothing else writes it."""

    stages: list[dict] | None = None  # funnel: per stage, nodes in and out, removed nodes by reason
    fit: Fit | None = None  # funnel: exhausted's fit rows
    rebuilt: str | None = None  # funnel: the scheduler's message rebuilt from the stages
    rebuilt_done: bool = False
    nearest: dict | None = None  # funnel: the nodes one change away (evidence/nearest.py)
    filters: dict | None = None  # funnel: volumes, inter-pod terms, spread counts (evidence/filters.py)
    gpu_names: dict | None = None  # funnel: other names of the vendor's devices, GPU feature discovery labels
    devices: list[dict] | None = None  # DRA: per node, the device steps of the pod's claims


@dataclass(kw_only=True)
class FunnelResult:
    facts: PodFacts
    stages: list[StageResult]
    word: str | None  # the cause word when a stage emptied the candidates, else None (some node fits)
    fit_at: np.ndarray | None = None  # positions of the nodes that entered the fit stage
    reason: str | None = None  # the reason line, made once (rules/funnel_text.funnel_reason)
    action: str | None = None  # the next action, made once ("": the word's own; rules/funnel_actions.py)
    _fit_names: list[str] | None = field(default=None, repr=False, compare=False)
    # What every pod of this shape shows alike once answered (the families' after-decision evidence), made on
    # first use (rules/family.py): one funnel per shape, so one per shape.
    evidence: ShapeEvidence | None = field(default=None, repr=False, compare=False)

    @property
    def fit_candidates(self) -> list[NodeView]:
        if self.fit_at is None:
            return []
        nodes = self.stages[0].nodes
        return [nodes[i] for i in self.fit_at.tolist()]

    @property
    def fits(self) -> list[NodeView]:
        return self.stages[-1].kept if self.word is None else []

    def fit_names(self) -> list[str]:
        """The names of `fits`, made once per funnel (every pod of the shape asks; there may be thousands)."""
        if self._fit_names is None:
            self._fit_names = [n.name for n in self.fits]
        return list(self._fit_names)

    @property
    def last(self) -> StageResult:
        return self.stages[-1]
