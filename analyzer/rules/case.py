"""What every rule reads and returns: the Case being judged and the Decision a rule takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from analyzer.model.views import Cluster
from analyzer.targets.target import Target

if TYPE_CHECKING:
    from analyzer.rules.funnel import FunnelResult


@dataclass(kw_only=True)
class Case:
    """One target on its way down the order. Rules add what they learn to `evidence`; the admission rule
    may replace `spec` by the spec as admission leaves it (RuntimeClass overhead and scheduling applied)."""

    target: Target
    cluster: Cluster
    spec: dict | None
    funnel_of: Callable[[dict, str], "FunnelResult"]  # the funnel for (spec, pin), shared by pods of one shape
    evidence: dict = field(default_factory=dict)
    funnel: "FunnelResult | None" = None  # set by the funnel rule


@dataclass(frozen=True, kw_only=True)
class Decision:
    word: str
    reason: str
