"""Kueue's quota tree, as its scheduler cache computes it (kueue v0.19 pkg/cache/scheduler/resource_node.go).

ClusterQueues are the leaves, cohorts the inner nodes (a cohort named by a ClusterQueue or as a parent but
without an object of its own is an implicit root with no quota). Per (flavor, resource):
- SubtreeQuota: a ClusterQueue's nominal quota; a cohort's own nominal plus what each child lends it
  (the child's subtree minus its localQuota);
- localQuota: subtree - lendingLimit (0 without a lending limit): kept for the node's own subtree;
- Usage: a ClusterQueue's reservations; a cohort's, what its children use beyond their localQuota;
- available (what may be reserved now) and potentialAvailable (the most it could ever admit), each bounded by
  the borrowingLimit on the way up. A cohort whose parents form a cycle is reported, never walked forever.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.model.queues import ClusterQueue, Kueue, ResourceGroup, Workload

FR = tuple[str, str]  # (flavor, resource)


@dataclass(frozen=True, kw_only=True)
class Reserved:
    units: int
    workloads: tuple[tuple[str, int], ...]  # (namespace/name, units) of the admitted workloads holding it


@dataclass(kw_only=True)
class _Node:
    name: str
    parent: _Node | None = None
    nominal: dict[FR, int] = field(default_factory=dict)
    borrowing: dict[FR, int] = field(default_factory=dict)
    lending: dict[FR, int] = field(default_factory=dict)
    subtree: dict[FR, int] = field(default_factory=dict)
    usage: dict[FR, int] = field(default_factory=dict)
    children: list[_Node] = field(default_factory=list)

    def local_quota(self, fr: FR) -> int:
        if fr in self.lending:
            return max(0, self.subtree.get(fr, 0) - self.lending[fr])
        return 0

    def local_available(self, fr: FR) -> int:
        return max(0, self.local_quota(fr) - self.usage.get(fr, 0))


def _quotas(node: _Node, groups: tuple[ResourceGroup, ...]) -> None:
    for g in groups:
        for f in g.flavors:
            for r, v in f.nominal.items():
                node.nominal[(f.flavor, r)] = v
            for r, v in f.borrowing_limit.items():
                node.borrowing[(f.flavor, r)] = v
            for r, v in f.lending_limit.items():
                node.lending[(f.flavor, r)] = v


def reservations(kueue: Kueue) -> dict[str, dict[FR, Reserved]]:
    """Per ClusterQueue and (flavor, resource): what admitted workloads reserve (those with QuotaReserved),
    named; the ClusterQueue's own status.flavorsReservation when it says more (workloads the bundle lacks)."""
    by_cq: dict[str, dict[FR, list[tuple[str, int]]]] = {}
    for w in kueue.workloads:
        if not w.cluster_queue or not w.holds("QuotaReserved") or w.finished:
            continue
        for fr, units in w.usage.items():
            by_cq.setdefault(w.cluster_queue, {}).setdefault(fr, []).append((w.key, units))
    out: dict[str, dict[FR, Reserved]] = {}
    for name, cq in kueue.cluster_queues.items():
        mine = by_cq.get(name, {})
        frs = set(mine) | set(cq.reserved_status)
        out[name] = {}
        for fr in frs:
            holders = tuple(sorted(mine.get(fr, ()), key=lambda h: (-h[1], h[0])))
            counted = sum(u for _, u in holders)
            out[name][fr] = Reserved(units=max(counted, cq.reserved_status.get(fr, 0)), workloads=holders)
    return out


class QuotaTree:
    """Built once per bundle; `available` / `potential` are asked per ClusterQueue and (flavor, resource)."""

    def __init__(self, kueue: Kueue, reserved: dict[str, dict[FR, Reserved]]) -> None:
        self.reserved = reserved
        self.cohorts: dict[str, _Node] = {}
        self.queues: dict[str, _Node] = {}
        self.cycles: dict[str, list[str]] = {}  # cohort -> the cycle it is part of or leads into
        for name in list(kueue.cohorts) + [cq.cohort for cq in kueue.cluster_queues.values() if cq.cohort]:
            self._cohort(name, kueue)
        for c in list(self.cohorts.values()):
            chain = self._chain(c, kueue)
            if chain is not None:
                self.cycles[c.name] = chain
        for c in self.cohorts.values():
            parent = kueue.cohorts[c.name].parent if c.name in kueue.cohorts else ""
            if parent and c.name not in self.cycles:
                c.parent = self.cohorts[parent]
                c.parent.children.append(c)
        for name, cq in kueue.cluster_queues.items():
            node = self.queues[name] = _Node(name=name)
            _quotas(node, cq.groups)
            node.usage = {fr: r.units for fr, r in reserved.get(name, {}).items()}
            if cq.cohort and cq.cohort not in self.cycles:
                node.parent = self.cohorts[cq.cohort]
                node.parent.children.append(node)
        for root in [c for c in self.cohorts.values() if c.parent is None and c.name not in self.cycles]:
            self._accumulate(root)
        for node in self.queues.values():
            if node.parent is None:
                node.subtree = dict(node.nominal)

    def _cohort(self, name: str, kueue: Kueue) -> None:
        while name and name not in self.cohorts:
            node = self.cohorts[name] = _Node(name=name)
            if name in kueue.cohorts:
                _quotas(node, kueue.cohorts[name].groups)
                name = kueue.cohorts[name].parent
            else:
                name = ""

    def _chain(self, start: _Node, kueue: Kueue) -> list[str] | None:
        """The cohorts from `start` up to where its parents repeat, or None when they reach a root."""
        seen: list[str] = []
        name = start.name
        while name:
            if name in seen:
                return seen[seen.index(name):] + [name]
            seen.append(name)
            name = kueue.cohorts[name].parent if name in kueue.cohorts else ""
        return None

    def _accumulate(self, cohort: _Node) -> None:
        cohort.subtree = dict(cohort.nominal)
        cohort.usage = {}
        for child in cohort.children:
            if child.name in self.cohorts and self.cohorts[child.name] is child:
                self._accumulate(child)
            else:
                child.subtree = dict(child.nominal)
            for fr, q in child.subtree.items():
                cohort.subtree[fr] = cohort.subtree.get(fr, 0) + q - child.local_quota(fr)
            for fr, u in child.usage.items():
                cohort.usage[fr] = cohort.usage.get(fr, 0) + max(0, u - child.local_quota(fr))

    def chain(self, cq: ClusterQueue) -> list[str]:
        """The cohorts above the ClusterQueue, nearest first."""
        out: list[str] = []
        node = self.queues[cq.name].parent
        while node is not None:
            out.append(node.name)
            node = node.parent
        return out

    def available(self, cq: str, fr: FR) -> int:
        return max(0, self._available(self.queues[cq], fr))

    def _available(self, node: _Node, fr: FR) -> int:
        if node.parent is None:
            return node.subtree.get(fr, 0) - node.usage.get(fr, 0)
        parent = self._available(node.parent, fr)
        if fr in node.borrowing:
            lq = node.local_quota(fr)
            stored = node.subtree.get(fr, 0) - lq
            used = max(0, node.usage.get(fr, 0) - lq)
            parent = min(stored - used + node.borrowing[fr], parent)
        return node.local_available(fr) + parent

    def potential(self, cq: str, fr: FR) -> int:
        return self._potential(self.queues[cq], fr)

    def _potential(self, node: _Node, fr: FR) -> int:
        if node.parent is None:
            return node.subtree.get(fr, 0)
        avail = node.local_quota(fr) + self._potential(node.parent, fr)
        if fr in node.borrowing:
            avail = min(node.subtree.get(fr, 0) + node.borrowing[fr], avail)
        return avail


def admitted(w: Workload) -> bool:
    return w.holds("QuotaReserved") and w.holds("Admitted")
