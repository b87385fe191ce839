"""The occupancy API's records: slim inputs (no raw JSON) and the computed picture.

Inputs: the model's NodeViews (analyzer/model/nodes.py) and PodUse, built from an analysis by
from_analysis.py (the bundle is read once, by bundle/, and turned into records once, by model/). Outputs: Occupancy = ResourceRow per (node, accelerator resource)
plus PoolTotal per (pool, resource). Units are the scheduler's (whole devices for
accelerators). Everything is frozen, so a report can share it freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.model.matching import Toleration
from analyzer.words import CORDONED  # the node state is named as the cause word it leads to

# Node states, most severe first. A row carries every state that applies, in this order.
NOT_READY = "not-ready"
UNHEALTHY = "unhealthy"              # an adverse node condition (pressure, NotReady): named in `conditions`
NO_PLUGIN = "no-plugin"            # looks like a GPU node (labels) but the resource is absent or capacity 0
ALLOCATABLE_ZERO = "allocatable-zero"  # capacity N > 0, allocatable 0 (device plugin unhealthy)
TAINTED = "tainted"                # a NoSchedule/NoExecute taint other than the cordon's
OVERCOMMITTED = "overcommitted"    # used > allocatable
USAGE_UNKNOWN = "usage-unknown"    # a pod bound here could not be read: used is a lower bound
FULL = "full"                      # allocatable > 0 and nothing free
FREE = "free"                      # something free, nothing above applies
# States that make a node's free units unusable for an ordinary pod (a taint may be tolerated, so it is not here).
BROKEN: frozenset[str] = frozenset({NOT_READY, UNHEALTHY, NO_PLUGIN, ALLOCATABLE_ZERO, CORDONED, OVERCOMMITTED, USAGE_UNKNOWN})

NO_POOL = "-"


@dataclass(frozen=True, slots=True, kw_only=True)
class PodUse:
    """One pod: its effective requests (podspec.effective_requests, scheduler units), where it is bound
    (node "" when unbound) and its phase. `node_selector` is spec.nodeSelector, used only to say which
    pending pods want a node's resource. `readable=False` marks a pod whose requests could not be read:
    bound, it makes its node's usage unknown."""

    namespace: str
    name: str
    node: str = ""
    phase: str | None = None
    requests: dict[str, int] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    readable: bool = True
    tolerations: tuple[Toleration, ...] = ()  # a pending pod's: is a tainted node's free capacity free for it?

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """A pod holding units of a resource on a node."""

    namespace: str
    name: str
    units: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRow:
    """One node and one accelerator resource. capacity/allocatable are None when the node does not
    report the resource at all (then the row exists only because the node looks like a GPU node, or
    because a pod bound there uses it)."""

    node: str
    pool: str
    resource: str
    capacity: int | None
    allocatable: int | None
    used: int
    free: int  # max(0, allocatable - used)
    holders: tuple[Holder, ...]  # largest first, then by name
    states: tuple[str, ...]  # most severe first, in the order of the constants above; never empty
    taints: tuple[str, ...]  # blocking taints (NoSchedule/NoExecute) as key=value:effect, cordon's included
    wanting: tuple[str, ...]  # pending pods (ns/name) asking for this resource whose nodeSelector matches the node
    # Free units no waiting pod can use: the node has a blocking taint of its own that none of the pods wanting it
    # tolerates (with no pod waiting: that an ordinary pod would not tolerate). 0 when some waiting pod tolerates it.
    behind_taint: int = 0
    tolerating: tuple[str, ...] = ()  # the pods of `wanting` that tolerate every blocking taint of the node
    sharing: str = ""  # how the resource cuts the GPUs: "time-slicing, 10 replicas per GPU", "MIG profile 1g.10gb (mixed strategy)"
    mig_state: str | None = None  # nvidia.com/mig.config.state when not `success`: the MIG manager is changing the layout
    conditions: tuple[str, ...] = ()  # the node's adverse conditions in words (model/node_conditions.py)

    @property
    def usable(self) -> int:
        """Free units a waiting pod can take: free minus what sits behind an untolerated taint."""
        return self.free - self.behind_taint

    @property
    def overcommitted(self) -> bool:
        return self.used > (self.allocatable or 0)

    @property
    def broken(self) -> bool:
        return any(s in BROKEN for s in self.states)


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolTotal:
    pool: str
    resource: str
    nodes: int
    allocatable: int
    used: int
    free: int
    behind_taint: int = 0  # of `free`, the units behind a taint no waiting pod tolerates


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedCard:
    """One card of a GPU shared by HAMi or Volcano's vGPU, as that scheduler counts it (model/vgpu.py)."""

    node: str
    scheduler: str
    card: str
    type: str
    memory: int  # MiB
    memory_free: int
    cores: int  # percent
    cores_free: int
    shares: int
    shares_used: int
    healthy: bool
    handshake_age: int | None  # seconds before the bundle's time (HAMi's handshake; None: no time or not HAMi)
    problem: str  # why the scheduler sees no device on the node ("" when it does)
    pods: tuple[str, ...] = ()  # the bound pods (ns/name) whose allocation holds part of the card

    @property
    def memory_used(self) -> int:
        return self.memory - self.memory_free

    @property
    def cores_used(self) -> int:
        return self.cores - self.cores_free


@dataclass(frozen=True, slots=True, kw_only=True)
class Occupancy:
    """The whole picture. `rows` in display order (see order.py); `pending` maps each accelerator
    resource to the pending pods (ns/name) asking for it, whatever their selectors."""

    rows: tuple[ResourceRow, ...]
    pools: tuple[PoolTotal, ...]
    pending: dict[str, tuple[str, ...]]
    problems: tuple[str, ...] = ()  # unreadable items (file, JSON path, why): the picture is partial
    # resource -> pending pods asking for it whose nodeSelector matches no node offering it (or looking like it)
    unmatched: dict[str, tuple[str, ...]] = field(default_factory=dict)
    queues: tuple = ()  # Kueue ClusterQueues per flavor and GPU resource (occupancy/queues.QueueRow)
    # node -> bound pods that have not started there, each with its cause word (the node-side words): (ns/name, word)
    not_started: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    shared: tuple[SharedCard, ...] = ()  # cards HAMi or Volcano's vGPU share, as they count them

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(sorted({r.resource for r in self.rows} | set(self.pending)))

    def only(self, resource: str) -> "Occupancy":
        """The same picture for one resource name or shell-style pattern (`nvidia.com/mig-*`)."""
        from fnmatch import fnmatchcase

        def keep(name: str) -> bool:
            return fnmatchcase(name, resource)
        return Occupancy(rows=tuple(r for r in self.rows if keep(r.resource)),
                         pools=tuple(p for p in self.pools if keep(p.resource)),
                         pending={k: v for k, v in self.pending.items() if keep(k)}, problems=self.problems,
                         unmatched={k: v for k, v in self.unmatched.items() if keep(k)}, not_started=self.not_started,
                         shared=self._shared_on({r.node for r in self.rows if keep(r.resource)}))

    def _shared_on(self, nodes: set[str]) -> tuple[SharedCard, ...]:
        """The shared cards of the nodes a filtered picture keeps: a card is the scheduler's view of the node's GPUs,
        whichever of the node's resource names the filter kept."""
        return tuple(c for c in self.shared if c.node in nodes)
