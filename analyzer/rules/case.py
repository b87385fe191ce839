"""What every rule reads and returns: the Case being judged and the Decision a rule takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from analyzer.model.views import Cluster
from analyzer.model.target import Target

if TYPE_CHECKING:
    from analyzer.model.dra.outcomes import Resolution
    from analyzer.model.pod_filters import PodFilters
    from analyzer.rules.funnel_result import FunnelResult


@dataclass(kw_only=True)
class Case:
    """One target on its way down the order. Rules add what they learn to `evidence`; the admission rule
    may replace `spec` by the spec as admission leaves it (RuntimeClass overhead and scheduling applied)."""

    target: Target
    cluster: Cluster
    spec: dict | None
    funnel_of: Callable[..., "FunnelResult"]  # (spec, pin, claims, filters): shared by pods of one shape
    evidence: dict = field(default_factory=dict)
    claims: "Resolution | None" = None  # the pod's resource claims, resolved (set by the DRA rule)
    funnel: "FunnelResult | None" = None  # set by the funnel rule
    filters: "PodFilters | None" = None  # volumes, inter-pod terms, spread, host ports (set by the volume rule)


@dataclass(frozen=True, kw_only=True)
class Decision:
    word: str
    reason: str
    underlying: str | None = None  # a refined decision (scaling-up, scale-up-blocked): the funnel's own word beneath it
    # The next action for this pod, its objects named (the node holding the volume, the node on its way); None:
    # the word's own action from causes.md.
    action: str | None = None
