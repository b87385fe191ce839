"""What a funnel run gives: each stage's nodes in and out and the removed nodes with their reasons. Apart from
funnel.py so the Case every rule reads can name it without importing the funnel rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from analyzer.model.nodes import NodeView
from analyzer.rules.checks import PodFacts
from analyzer.rules.reason import Reason


@dataclass(kw_only=True)
class StageResult:
    name: str
    nodes_in: int
    kept: list[NodeView]
    removed: list[tuple[str, Reason]]  # each removed node judged one by one
    # The selector stage only: every node the index rules out (not in `possible`) is removed for `bulk`,
    # without a Reason object per node (5,000 pinned DaemonSet pods × 5,000 nodes would be 25 million).
    bulk: Reason | None = None
    possible: frozenset[int] = frozenset()

    @property
    def nodes_out(self) -> int:
        return len(self.kept)

    def removed_nodes(self, nodes: list[NodeView]) -> Iterator[tuple[str, Reason]]:
        """Every removed node with its reason, in the order of nodes.json."""
        if self.bulk is None:
            yield from self.removed
            return
        explicit = dict(self.removed)
        for i, node in enumerate(nodes):
            if i not in self.possible:
                yield node.name, self.bulk
            elif node.name in explicit:
                yield node.name, explicit[node.name]


@dataclass(kw_only=True)
class FunnelResult:
    facts: PodFacts
    stages: list[StageResult]
    word: str | None  # the cause word when a stage emptied the candidates, else None (some node fits)
    fit_candidates: list[NodeView] = field(default_factory=list)  # the nodes that entered the fit stage
    reason: str | None = None  # the reason line, made once (rules/funnel.funnel_reason)
    _fit_names: list[str] | None = field(default=None, repr=False, compare=False)

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
