"""Plain records for `gpu-triage diff`: one Snapshot per bundle, one Diff between two."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class PodState:
    node: str
    phase: str | None


@dataclass(frozen=True, kw_only=True)
class NodeGpu:
    """What of a node the diff compares: its accelerator resources and what decides whether they can be used."""

    capacity: dict[str, int]
    allocatable: dict[str, int]
    used: dict[str, int]
    taints: tuple[str, ...]
    cordoned: bool
    ready: bool | None
    gpu_labels: dict[str, str]
    usage_unknown: bool = False  # a pod bound there could not be read: `used` is a lower bound


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    label: str  # what the user named
    created: str | None  # manifest.json "created"
    context: str | None
    files: dict[str, str]  # file -> "collected" | "failed" | "missing" (listed by the manifest, absent)
    words: dict[str, str]  # target key -> cause word
    kinds: dict[str, str]  # target key -> "Pod", "Attempt" or the refused owner's kind
    pods: dict[str, PodState]  # ns/name -> where and in which phase
    nodes: dict[str, NodeGpu]  # GPU nodes only (those in the occupancy picture)
    pools: dict[tuple[str, str], tuple[int, int, int]]  # (pool, resource) -> (allocatable, used, free)
    quotas: dict[tuple[str, str, str], tuple[str | None, str | None]] | None  # (ns, quota, key) -> (hard, used)
    problems: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()  # files changed after collection (a what-if): compared as they are now
    reasons: dict[str, str] = field(default_factory=dict)  # target key -> its reason (the `why` of a change)


@dataclass(frozen=True, kw_only=True)
class Change:
    field: str
    before: object
    after: object


@dataclass(frozen=True, kw_only=True)
class NodeChange:
    node: str
    kind: str  # "changed" | "added" | "removed"
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TargetChange:
    key: str
    before: str | None  # word in OLD (None: not a target there)
    after: str | None  # word in NEW
    why: str = ""  # resolved: now runs / deleted / finished / no longer a target; else the new reason


@dataclass(frozen=True, kw_only=True)
class PoolRow:
    pool: str
    resource: str
    before: tuple[int, int, int] | None  # (allocatable, used, free)
    after: tuple[int, int, int] | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, kw_only=True)
class QuotaChange:
    namespace: str
    quota: str
    key: str
    before: tuple[str | None, str | None] | None  # (hard, used); None: the quota key did not exist
    after: tuple[str | None, str | None] | None


@dataclass(frozen=True, kw_only=True)
class Collection:
    old_label: str
    new_label: str
    old_created: str | None
    new_created: str | None
    old_context: str | None
    new_context: str | None
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    status_changed: tuple[tuple[str, str, str], ...]  # (file, old status, new status)
    # Files one manifest lists as not collected ("failed", "not-served", "missing") that the other bundle does
    # not hold: (file, "old" | "new", status). Not "only in" the other: that bundle tried and could not.
    not_collected: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Diff:
    collection: Collection
    appeared: tuple[TargetChange, ...]
    resolved: tuple[TargetChange, ...]
    changed: tuple[TargetChange, ...]
    nodes: tuple[NodeChange, ...]
    pools: tuple[PoolRow, ...]
    quotas: tuple[QuotaChange, ...] | None  # None: neither bundle holds resourcequotas.json
    problems: tuple[str, ...] = field(default=())
    edited: tuple[str, ...] = field(default=())  # "<bundle>: pods.json changed after collection: …"
