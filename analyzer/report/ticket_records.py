"""The ticket report's data: plain, frozen records the HTML and Markdown formats render (report/html.py,
report/markdown.py). report/ticket.py builds them from an analysis; nothing here computes."""

from __future__ import annotations

from dataclasses import dataclass

URGENCY_NOTE = ("most urgent first: the order of causes.md (admission refusals first, then the spec, gates, "
                "bound pods, the node funnel, unclassified, fits-now; then insufficient-evidence)")


@dataclass(frozen=True, kw_only=True)
class NearNode:
    """A node the pod fails on for exactly one reason (causes.md v2 "nearest nodes")."""

    node: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class SchedulerLines:
    """The scheduler's own sentence beside the one rebuilt from the bundle."""

    said: str | None  # None: nothing recorded
    source: str | None
    rebuilt: str | None  # None: not rebuilt (gated, bound, attempt); "" never: "some node fits now"
    comparison: str | None = None
    notes: tuple[str, ...] = ()  # conflation and preemption notes


@dataclass(frozen=True, kw_only=True)
class TargetRow:
    """One shape: targets with the same word, reason and owner (one row when alone)."""

    word: str
    reason: str
    next_action: str
    kind: str  # Pod, Attempt, or an owner's kind for a refused owner
    owner: str | None  # "ReplicaSet lab/web-7d9c" or None
    names: tuple[str, ...]  # target keys (namespace/name; owners namespace/kind/name)
    source: str  # where a person finds the first one
    evidence: tuple[str, ...] = ()
    scheduler: SchedulerLines | None = None
    nearest: tuple[NearNode, ...] | None = None  # None: not computed for this target

    @property
    def count(self) -> int:
        return len(self.names)


@dataclass(frozen=True, kw_only=True)
class WordCount:
    word: str
    next_action: str
    targets: int
    rows: int


@dataclass(frozen=True, kw_only=True)
class Header:
    bundle: str
    context: str | None
    server_version: str | None
    collected: str | None  # manifest "completed" (else "created"), UTC RFC 3339
    collector: str | None
    missing: tuple[str, ...]  # one line per kind missing, forbidden, failed or unreadable
    problems: tuple[str, ...]  # validation findings, at most MAX_PROBLEMS
    problem_count: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Holder:
    pod: str  # namespace/name
    units: int


@dataclass(frozen=True, kw_only=True)
class ResourceBar:
    """One accelerator resource on one node. capacity/allocatable None: the node does not report it."""

    resource: str
    capacity: int | None
    allocatable: int | None
    used: int
    free: int  # max(0, allocatable - used)
    holders: tuple[Holder, ...] = ()  # largest first, at most MAX_HOLDERS
    holders_more: int = 0
    states: tuple[str, ...] = ()  # in words: "no plugin", "allocatable 0 of capacity 4", "overcommitted", …
    wanting: int = 0  # pending pods asking for this resource whose nodeSelector matches the node
    sharing: str = ""  # "time-slicing, 10 replicas per GPU", "MIG profile 1g.10gb (mixed strategy)"; "" for whole GPUs


@dataclass(frozen=True, kw_only=True)
class NodeRow:
    name: str
    pool: str
    states: tuple[str, ...]  # the node's own: "not ready", "cordoned", "tainted nvidia.com/gpu=present:NoSchedule"
    resources: tuple[ResourceBar, ...]
    not_started: tuple[str, ...] = ()  # bound pods that have not started here, "ns/name: word" (rows 7-10)

    @property
    def broken(self) -> bool:
        return bool(self.states) or any(b.states for b in self.resources)


@dataclass(frozen=True, kw_only=True)
class Pool:
    name: str
    nodes: tuple[NodeRow, ...]

    def totals(self) -> list[tuple[str, int, int, int]]:
        """(resource, allocatable, used, free) summed over the pool's nodes."""
        out: dict[str, list[int]] = {}
        for n in self.nodes:
            for b in n.resources:
                t = out.setdefault(b.resource, [0, 0, 0])
                t[0] += b.allocatable or 0
                t[1] += b.used
                t[2] += b.free
        return [(r, *v) for r, v in out.items()]  # type: ignore[misc]


@dataclass(frozen=True, kw_only=True)
class ReportData:
    header: Header
    summary: tuple[WordCount, ...]
    rows: tuple[TargetRow, ...]
    pools: tuple[Pool, ...]
    occupancy_note: str | None = None  # why the picture is empty or partial
    urgency_note: str = URGENCY_NOTE

    @property
    def target_count(self) -> int:
        return sum(r.count for r in self.rows)
