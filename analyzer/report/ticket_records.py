"""The ticket report's data: plain, frozen records the HTML and Markdown formats render (report/html.py,
report/markdown.py). report/ticket.py builds them from an analysis; nothing here computes (first_of: the words both formats lead a varied shape with)."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.occupancy.queues import QueueRow
from analyzer.occupancy.records import Holder

URGENCY_NOTE = ("most urgent first: manifests the API server refused, then what is wrong in the pod itself, gates, pods "
                "stuck on their node, then what the nodes lack; a pod that fits now, or needs more evidence, last")


@dataclass(frozen=True, kw_only=True)
class NearNode:
    """A node the pod fails on for exactly one reason (causes.md, "nearest nodes")."""

    node: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class SchedulerLines:
    """The scheduler's own sentence beside the one rebuilt from the bundle."""

    said: str | None  # None: nothing recorded
    source: str | None
    rebuilt: str | None  # None: not rebuilt (gated, bound, attempt); "" never: "some node fits now"
    comparison: str | None = None
    notes: tuple[str, ...] = ()  # what this pod's sentence says beyond the cause (the preemption tail)


@dataclass(frozen=True, kw_only=True)
class TargetRow:
    """One shape: targets with the same word, owner and reason (one row when alone). Pods that differ only in
    the node each is bound or pinned to (a DaemonSet's) and in amounts share a `pattern`, so they are one shape
    too; the row then says the first one's reason and action (`varies`)."""

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
    asks: str = ""  # what the pod requests ("cpu=500m, memory=1Gi, nvidia.com/gpu=1"), shown beside its name
    refused: bool = False  # a manifest or an owner's pods the API server refuses (Verdict.refused): listed first
    # What the targets of one shape share: the reason and action with the pod's own node and the digits masked
    # (shapes.pattern_of); "" groups by the reason itself.
    pattern: str = ""
    varies: bool = False  # the grouped targets' reasons or actions differ (own node, amounts): the first one's are shown

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
    bundle: str  # the bundle's own name (directory or archive), never a path of the machine that wrote the report
    context: str | None
    server_version: str | None
    collected: str | None  # manifest "completed" (else "created"), UTC RFC 3339
    collector: str | None
    missing: tuple[str, ...]  # one line per kind missing, forbidden, failed or unreadable
    problems: tuple[str, ...]  # validation findings, at most MAX_PROBLEMS
    problem_count: int
    notes: tuple[str, ...] = ()
    version: str = ""  # the gpu-triage that wrote the report
    edited: tuple[str, ...] = ()  # files changed after collection (a what-if): the answers are about them as they are
    # Another collector's archive (a troubleshoot support bundle, a must-gather): its name and version, and
    # what it does not collect for GPU triage.
    archive: str | None = None
    archive_lacks: str | None = None
    completeness: str = ""  # one line: how it was collected, how many kinds present and absent (named)


@dataclass(frozen=True, kw_only=True)
class ResourceBar:
    """One accelerator resource on one node. capacity/allocatable None: the node does not report it."""

    resource: str
    capacity: int | None
    allocatable: int | None
    used: int
    free: int  # max(0, allocatable - used)
    holders: tuple[Holder, ...] = ()  # largest first, at most text.PODS_NAMED_PER_NODE_RESOURCE
    holders_more: int = 0
    states: tuple[str, ...] = ()  # in words: "no plugin", "allocatable 0 of capacity 4", "overcommitted", …
    wanting: tuple[str, ...] = ()  # pending pods asking for this resource whose nodeSelector matches the node
    behind_taint: int = 0  # of free, the units behind a taint none of `wanting` tolerates
    tolerating: tuple[str, ...] = ()  # the pods of `wanting` that tolerate the node's taints
    sharing: str = ""  # "time-slicing, 10 replicas per GPU", "MIG profile 1g.10gb (mixed strategy)"; "" for whole GPUs

    @property
    def usable(self) -> int:
        return self.free - self.behind_taint


@dataclass(frozen=True, kw_only=True)
class NodeRow:
    name: str
    pool: str
    states: tuple[str, ...]  # the node's own: "not ready", "cordoned", "tainted nvidia.com/gpu=present:NoSchedule"
    resources: tuple[ResourceBar, ...]
    not_started: tuple[str, ...] = ()  # bound pods that have not started here, "ns/name: word" (the node-side words)
    # The node's GPUs as a sharing scheduler (HAMi, Volcano vGPU) counts them, one sentence per card, and first why
    # it sees no device here when it does not
    shared_cards: tuple[str, ...] = ()

    @property
    def broken(self) -> bool:
        return bool(self.states) or any(b.states for b in self.resources)


@dataclass(frozen=True, kw_only=True)
class Pool:
    name: str
    nodes: tuple[NodeRow, ...]

    def totals(self) -> list[tuple[str, int, int, int, int]]:
        """(resource, allocatable, used, free for the waiting pods, free behind an untolerated taint) summed
        over the pool's nodes."""
        out: dict[str, list[int]] = {}
        for n in self.nodes:
            for b in n.resources:
                t = out.setdefault(b.resource, [0, 0, 0, 0])
                t[0] += b.allocatable or 0
                t[1] += b.used
                t[2] += b.usable
                t[3] += b.behind_taint
        return [(r, allocatable, used, usable, behind) for r, (allocatable, used, usable, behind) in out.items()]

    def state_counts(self) -> list[tuple[str, int]]:
        """How many nodes are in each state that keeps pods off them, by name ("1 tainted", "1 allocatable 0")."""
        counts: dict[str, int] = {}
        for n in self.nodes:
            seen = {s.split(" ", 1)[0] if s.startswith("tainted") else s for s in n.states}
            seen |= {_short(s) for b in n.resources for s in b.states}
            for s in seen:
                counts[s] = counts.get(s, 0) + 1
        return sorted(counts.items())


@dataclass(frozen=True, kw_only=True)
class AutoscalerRow:
    """One node group (cluster-autoscaler), NodePool or NodeClaim in flight (Karpenter), beside the GPU picture."""

    kind: str  # "node group" | "NodePool" | "NodeClaim"
    name: str
    size: str  # "min 0 / max 4 / target 2 / registered 1" | "nvidia.com/gpu: 8 of limit 8" | "g5.12xlarge in NodePool gpu"
    state: str  # "InProgress", "Backoff: <error>", "at max", "limit reached: nvidia.com/gpu", "Registered Unknown (…)"
    gpu: bool = False  # a GPU group: named by a GPU pod's scale-up, or limiting/using an accelerator resource
    alert: bool = False  # at its limit, in backoff, or a GPU that never registered


@dataclass(frozen=True, kw_only=True)
class ReportData:
    header: Header
    summary: tuple[WordCount, ...]
    rows: tuple[TargetRow, ...]
    pools: tuple[Pool, ...]
    occupancy_note: str | None = None  # why the picture is empty or partial
    queues: tuple[QueueRow, ...] = ()  # Kueue ClusterQueues per flavor and GPU resource (none: no Kueue)
    autoscalers: tuple[AutoscalerRow, ...] = ()  # node groups, NodePools, NodeClaims in flight (none: no autoscaler)
    urgency_note: str = URGENCY_NOTE
    footnotes: tuple[str, ...] = ()  # said once for the whole page (what a scheduler sentence hides)

    @property
    def target_count(self) -> int:
        return sum(r.count for r in self.rows)


def _short(state: str) -> str:
    """A resource state's name without its numbers: 'allocatable 0 of capacity 4' -> 'allocatable 0'."""
    for prefix in ("allocatable 0", "no plugin", "no device", "overcommitted", "usage unknown"):
        if state.startswith(prefix):
            return prefix
    return state


def first_of(row: TargetRow) -> str:
    """What leads a shape's reason when its targets' reasons differ: whose reason is shown, and how the others'
    differ (pattern_of in shapes.py masks only their own node and the amounts)."""
    if not row.varies:
        return ""
    return f"the first, {row.names[0]} (the other {row.count - 1} differ only in their own node and amounts): "
