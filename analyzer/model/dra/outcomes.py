"""What the DRA model answers about a pod (../shared/spec/dra.md): the pre-funnel resolution of its
claims (causes.md `no-resourceclaim` and `no-deviceclass`), and per node the outcome of the device search with the evidence for
each request (devices left after each of STEPS, devices chosen, who holds the taken ones, CEL errors).
Separate from the world that computes them (allocate.py) because the rules and reports read these
records without needing the indexes or the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from analyzer.model.dra.views import Claim, ClaimSpec, PodClaims, Problem


class NodeLike(Protocol):
    """What the DRA world reads of a node (the model's NodeView, or a test's stand-in)."""

    name: str
    labels: dict[str, str]

STEPS = ("class", "selectors", "taints", "free")
TAINTS_SHOWN = 3  # taints named per tainted device; the rest are counted


@dataclass(frozen=True, kw_only=True, slots=True)
class MissingClaim:
    pod_claim: str  # spec.resourceClaims[].name
    kind: str  # ResourceClaim | ResourceClaimTemplate
    namespace: str
    name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class MissingClass:
    owner: str  # "ResourceClaim lab/x" or "ResourceClaimTemplate lab/one-gpu"
    request: str  # request or request/subrequest
    device_class: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ResolvedClaim:
    pod_claim: str
    owner: str  # the object the spec comes from: "ResourceClaim lab/x" or "ResourceClaimTemplate lab/one-gpu"
    spec: ClaimSpec
    claim: Claim | None  # None when judged on the template (no claim generated yet)

    @property
    def allocated(self) -> bool:
        return self.claim is not None and self.claim.allocated is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Resolution:
    pod: PodClaims
    claims: tuple[ResolvedClaim, ...]
    missing_claims: tuple[MissingClaim, ...]
    missing_classes: tuple[MissingClass, ...]
    unreadable: tuple[Problem, ...] = ()  # a claim, template or class the pod needs that could not be read
    shape_id: int = -1  # pods whose claims have the same shape share one answer per node

    @property
    def complete(self) -> bool:
        """Nothing missing or unreadable: the pod can be judged node by node."""
        return not (self.missing_claims or self.missing_classes or self.unreadable)


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceHolder:
    device: str
    claim: str  # ns/name
    pods: tuple[str, ...]  # status.reservedFor, as ns/name


@dataclass(frozen=True, kw_only=True, slots=True)
class CelError:
    device: str
    expression: str
    error: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TaintedDevice:
    device: str
    # The first TAINTS_SHOWN untolerated ones, as text ("k=v:NoSchedule (DeviceTaintRule drain)"), and how many
    # more: every DeviceTaintRule can add one, so a device may carry hundreds and the answer must stay readable.
    taints: tuple[str, ...]
    more: int = 0

    @property
    def text(self) -> str:
        return ", ".join(self.taints) + (f" and {self.more} more" if self.more else "")


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestEvidence:
    """One request (or firstAvailable subrequest) of one claim on one node."""

    owner: str
    request: str
    device_class: str
    needed: int | str  # a count, or "All"
    left: dict[str, int]  # devices left after each of STEPS
    chosen: tuple[str, ...] = ()
    holders: tuple[DeviceHolder, ...] = ()
    cel_errors: tuple[CelError, ...] = ()
    tainted: tuple[TaintedDevice, ...] = ()  # removed at the taints step, and why


@dataclass(frozen=True, kw_only=True, slots=True)
class NodeOutcome:
    node: str
    stage: str  # ok | pinned | class | selectors | constraints | taints | free | enough | unmodelled | unevaluable
    #             | taints-unknown (a DeviceTaintRule that may taint a device cannot be judged; the text is in unmodelled)
    too_large: bool = False
    requests: tuple[RequestEvidence, ...] = ()
    pinned_by: str | None = None  # the allocated claim whose nodeSelector excludes this node
    unmodelled: str | None = None
    unevaluable: str | None = None  # the CEL expression the library could not evaluate
    unevaluable_why: str | None = None

    @property
    def ok(self) -> bool:
        return self.stage == "ok"


class ExtendedOffer(NamedTuple):
    device_class: str
    offered: int
    free: int
