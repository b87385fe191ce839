"""Slim, immutable views of the four DRA kinds (and of a pod's claims), built once per bundle.

One shape for `resource.k8s.io/v1`, `v1beta2` and `v1beta1` (DeviceTaintRules: `v1alpha3` and `v1beta2`). Keeps only what the
rules read (../shared/spec/dra.md "The objects the rules read"), and marks what
the engine does not model with the reason, so the rule can answer `unclassified`
naming it instead of guessing; an item that cannot be read is a `Problem` (file,
JSON path, message).

This module holds the records (and the file names and API constants they use);
reading bundle items and pods into them is in reading.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.catalog import DEVICECLASSES, DEVICETAINTRULES, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, RESOURCESLICES
from analyzer.model.matching import Taint, Toleration, untolerated

V1BETA1 = "resource.k8s.io/v1beta1"
EXACT_COUNT = "ExactCount"
ALL = "All"
# ResourceClaimSpec validation: at most 32 requests per claim and 32 results
# per allocation (resource.k8s.io/v1 types.go, DeviceRequestsMaxSize /
# AllocationResultsMaxSize); a count above that can never be allocated.
ALLOCATION_RESULTS_MAX = 32
CLAIMS_FILE = RESOURCECLAIMS.file
TEMPLATES_FILE = RESOURCECLAIMTEMPLATES.file
CLASSES_FILE = DEVICECLASSES.file
SLICES_FILE = RESOURCESLICES.file
RULES_FILE = DEVICETAINTRULES.file


@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """An item left out because it cannot be read: where a person finds it, and why."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message}"



# ---- claims and templates -------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceAsk:
    """One `exactly` request, or one `firstAvailable` subrequest: what devices it wants and how many."""

    name: str  # request name, or "request/subrequest"
    device_class: str
    selectors: tuple[str, ...]
    mode: str  # ExactCount | All
    count: int  # ExactCount only
    admin_access: bool
    tolerations: tuple[Toleration, ...]
    unmodelled: str | None = None  # e.g. consumable capacity


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    name: str
    alternatives: tuple[DeviceAsk, ...]  # one for `exactly`; firstAvailable in order
    first_available: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Constraint:
    requests: tuple[str, ...]  # empty: every request of the claim
    match_attribute: str | None
    unmodelled: str | None = None  # distinctAttribute and future kinds


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaimSpec:
    """A claim's `spec.devices` (also a template's `spec.spec.devices`); hashable, so pods share results."""

    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]

    @property
    def unmodelled(self) -> str | None:
        for r in self.requests:
            for a in r.alternatives:
                if a.unmodelled:
                    return f"request {a.name}: {a.unmodelled}"
        for c in self.constraints:
            if c.unmodelled:
                return c.unmodelled
        return None

    def class_names(self) -> list[tuple[str, str]]:
        """(request or subrequest name, DeviceClass name) for every ask."""
        return [(a.name, a.device_class) for r in self.requests for a in r.alternatives]


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceRef:
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, kw_only=True, slots=True)
class AllocatedDevice:
    request: str
    ref: DeviceRef
    admin_access: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Claim:
    namespace: str
    name: str
    spec: ClaimSpec
    allocated: tuple[AllocatedDevice, ...] | None  # None: no status.allocation
    node_selector: dict | None = field(default=None, hash=False, compare=False)  # status.allocation.nodeSelector
    reserved_for: tuple[str, ...] = ()  # pod names (status.reservedFor[] with resource "pods")
    owner_pod: str | None = None  # the pod that owns a generated claim
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Template:
    namespace: str
    name: str
    spec: ClaimSpec
    source: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    extended_resource_name: str | None
    created: str = ""  # metadata.creationTimestamp (RFC 3339 sorts as text)
    source: str = ""


# ---- slices and the taints put on their devices ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeviceTaint(Taint):
    """A taint a DeviceTaintRule adds to a device; the rule is named wherever the taint is shown, so a person
    finds what to delete. (A slice's own taints stay plain `Taint`s.)"""

    rule: str = ""

    def __str__(self) -> str:
        return f"{Taint.__str__(self)} (DeviceTaintRule {self.rule})"


@dataclass(frozen=True, kw_only=True, slots=True)
class TaintRule:
    """One DeviceTaintRule (resource.k8s.io v1alpha3 or v1beta2): the taint it adds to every device its selector
    matches. `selected` is False without `spec.deviceSelector`: the scheduler's tracker then taints every device
    (resourceslice/tracker/tracker.go applyPatches). A rule that cannot be read keeps `problem` and the parts of
    its selector that could be read (driver, pool, device): the devices they match have unknown taints."""

    name: str
    taint: DeviceTaint | None  # None: unreadable
    selected: bool = True
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class: str | None = None  # v1alpha3 in v1.33/v1.34 only (tombstoned from v1.35)
    selectors: tuple[str, ...] = ()  # likewise
    source: str = ""  # JSON path in devicetaintrules.json
    problem: Problem | None = None

    def label(self) -> str:
        return f"DeviceTaintRule {self.name} ({RULES_FILE} {self.source})"


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class SliceDevice:
    """One published device. `raw` is the device in v1 shape (name, attributes, capacity) for CEL."""

    ref: DeviceRef
    raw: dict
    taints: tuple[Taint, ...]
    unmodelled: str | None = None  # partitionable (consumesCounters), binding conditions, shared allocation


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: dict | None
    all_nodes: bool
    per_device_node_selection: bool
    devices: tuple[SliceDevice, ...]
    unmodelled: str | None = None  # the whole slice (a device's own reason is on the device)
    source: str = ""


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class Pool:
    """A (driver, pool) at its newest generation; older generations are dropped (dra.md)."""

    driver: str
    name: str
    generation: int
    slices: tuple[Slice, ...]
    unmodelled: str | None  # incomplete pool, or a slice/device of it the engine does not model
    incomplete: bool = False


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class DraViews:
    claims: dict[tuple[str, str], Claim]  # (namespace, name)
    templates: dict[tuple[str, str], Template]
    classes: dict[str, DeviceClass]
    pools: tuple[Pool, ...]
    dropped_slices: tuple[str, ...]  # slices of an older pool generation (evidence only)
    problems: tuple[Problem, ...]
    # Objects left out as unreadable, by (file, namespace, name): a pod naming one is not "missing" it.
    unreadable: dict[tuple[str, str, str], Problem] = field(default_factory=dict)
    taint_rules: tuple[TaintRule, ...] = ()  # unreadable ones included (they make taints unknown)


# ---- pods -----------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True, slots=True)
class PodClaimRef:
    name: str  # spec.resourceClaims[].name
    claim_name: str | None  # resourceClaimName
    template_name: str | None  # resourceClaimTemplateName


@dataclass(frozen=True, kw_only=True, slots=True)
class PodClaims:
    namespace: str
    name: str
    refs: tuple[PodClaimRef, ...]
    generated: tuple[tuple[str, str | None], ...]  # status.resourceClaimStatuses: claim name -> generated name
    extended_claim: str | None  # status.extendedResourceClaimStatus.resourceClaimName
    container_claims: frozenset[str]  # names used by containers' resources.claims

    def generated_name(self, ref_name: str) -> tuple[bool, str | None]:
        """(listed, generated claim name); a listed entry without a name means no claim was needed."""
        for name, generated in self.generated:
            if name == ref_name:
                return True, generated
        return False, None


@dataclass(frozen=True, kw_only=True, slots=True)
class TaintsUnknown:
    """Why a device's taints are unknown: the rule, and either a CEL expression that cannot be evaluated
    (`expression`, with `why`) or another reason (`why`: an unreadable rule or DeviceClass). `taint` is the taint
    the rule would add when that much is known (None: the rule is unreadable, it could add any taint)."""

    rule: str  # TaintRule.label()
    why: str
    expression: str | None = None
    taint: Taint | None = None

    def blocks(self, tolerations: tuple[Toleration, ...]) -> bool:
        """Could the taint the rule may add stop a request with these tolerations (allocator_stable.go
        taintPreventsAllocation)? A known taint is matched as any other; an unknown one is harmless only to a
        toleration of everything (operator Exists, no key, no effect: core/v1 Toleration.ToleratesTaint)."""
        if self.taint is not None:
            return bool(untolerated((self.taint,), tolerations))
        return not any(t.operator == "Exists" and not t.key and not t.effect for t in tolerations)
