"""Kueue's topology-aware scheduling, as v0.19 places a pod set (queues.md, queue-topology).

The snapshot of one TAS ResourceFlavor (pkg/cache/scheduler/tas_cache.go `snapshot`, tas_flavor_snapshot.go):
- its nodes: those carrying the flavor's `nodeLabels` and every level's label, Ready and not unschedulable;
- a leaf domain per distinct tuple of level values: with `kubernetes.io/hostname` as the lowest level one node,
  otherwise the nodes of that lowest domain pooled; its free capacity is the nodes' allocatable minus what the pods
  bound there request (Kueue's non-TAS usage plus its TAS usage, both pods on those nodes);
- per pod set (fillInCounts): a leaf holds min over resources of free / request pods (`pods` counted one each);
  with hostname as the lowest level a node the pod's nodeSelector, required affinity or tolerations (plus the
  flavor's) refuse holds none, and is counted among the exclusions; a domain holds the sum of its children.
- required at a level (findLevelWithFitDomains): the domain of that level holding most pods must hold the whole
  pod set, else `topology %q allows to fit only %d out of %d pod(s)` (`doesn't allow to fit any of %d pod(s)` when
  it holds none), then `. Total nodes: %d; excluded: %s` when nodes were excluded (notFitMessage, formatReasons).
  A preferred or unconstrained request falls back to a higher level and then several domains: never a refusal.

Nothing here decides a word. The per-leaf free capacity is built once per flavor (`snapshot`); the domains' pod
counts once per flavor, level and pod shape (`rank`); a workload then only compares its count (`Placement`).
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.kube import BLOCKING_EFFECTS
from analyzer.model.matching import Taint, selector_matches, tolerated, tolerations_of
from analyzer.model.queues import Flavor
from analyzer.model.views import Cluster

HOSTNAME = "kubernetes.io/hostname"
RUNNERS_UP = 4  # domains named after the best: enough to see whether any is close


@dataclass(frozen=True, kw_only=True)
class Leaf:
    values: tuple[str, ...]  # the level labels' values, highest level first
    nodes: tuple[str, ...]
    free: dict[str, int]  # allocatable minus what bound pods request, scheduler units (`pods`: pods left)
    labels: dict[str, str]  # the node's labels (with hostname as the lowest level, the one node's)
    taints: tuple[Taint, ...]


@dataclass(frozen=True, kw_only=True)
class FlavorTopology:
    flavor: str
    topology: str
    levels: tuple[str, ...]
    leaves: tuple[Leaf, ...]
    left_out: dict[str, int]  # nodes with the flavor's labels the snapshot leaves out, by why

    @property
    def by_host(self) -> bool:
        return bool(self.levels) and self.levels[-1] == HOSTNAME


@dataclass(frozen=True, kw_only=True)
class Domain:
    values: tuple[str, ...]  # highest level first, down to the requested level
    holds: int  # pods of the pod set it can take now
    nodes: int
    free: dict[str, int]  # summed over the leaves that may take the pods


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """The domains of one level ranked for one pod shape (its request and placement terms), whatever its count:
    built once per flavor, level and shape, so the workloads of one shape share it."""

    topology: str
    level: str
    domains: tuple[Domain, ...]  # most pods first, then by the level values (sortedDomains with slices of one)
    total_nodes: int
    excluded: str  # Kueue's exclusion counts, formatted as formatReasons does ("" none)


@dataclass(frozen=True, kw_only=True)
class Placement:
    """One pod set of `count` pods against a ranking: the best domain, and Kueue's reason when it is too small."""

    ranking: Ranking
    count: int

    @property
    def best(self) -> Domain | None:
        return self.ranking.domains[0] if self.ranking.domains else None

    @property
    def runners_up(self) -> tuple[Domain, ...]:
        return self.ranking.domains[1:RUNNERS_UP + 1]

    @property
    def failure(self) -> str:
        """Kueue's reason ("" when the pod set fits one domain)."""
        r, best = self.ranking, self.best
        if best is None:
            return f"no topology domains at level: {r.level}"
        if best.holds >= self.count:
            return ""
        topology = _quoted(r.topology)
        text = (f"topology {topology} doesn't allow to fit any of {self.count} pod(s)" if best.holds == 0 else
                f"topology {topology} allows to fit only {best.holds} out of {self.count} pod(s)")
        return text + (f". Total nodes: {r.total_nodes}; excluded: {r.excluded}" if r.excluded else "")

    @property
    def fits(self) -> bool:
        return not self.failure

    def lacks(self, requests: dict[str, int]) -> dict[str, int]:
        """What the best domain is short of for the whole pod set, summed over its nodes (empty when the sum would
        do and only the split over nodes refuses)."""
        if self.best is None:
            return {}
        wants = {r: v * self.count for r, v in requests.items() if v}
        wants["pods"] = self.count
        return {r: v - self.best.free.get(r, 0) for r, v in wants.items() if v > self.best.free.get(r, 0)}


def snapshot(flavor: Flavor, levels: tuple[str, ...], cluster: Cluster) -> FlavorTopology:
    groups: dict[tuple[str, ...], list] = {}
    left_out: dict[str, int] = {}
    for node in cluster.nodes or ():
        if any(node.labels.get(k) != v for k, v in flavor.node_labels.items()):
            continue
        missing = next((label for label in levels if label not in node.labels), None)
        why = (f"no label {missing}" if missing is not None else "not Ready" if node.ready is not True
               else "unschedulable" if node.unschedulable else "")
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        groups.setdefault(tuple(node.labels[label] for label in levels), []).append(node)
    leaves = []
    for values, nodes in sorted(groups.items()):
        free: dict[str, int] = {}
        for node in nodes:
            used = cluster.usage.get(node.name, {})
            for r, v in node.allocatable.items():
                free[r] = free.get(r, 0) + v - used.get(r, 0)
        leaves.append(Leaf(values=values, nodes=tuple(n.name for n in nodes), free=free,
                           labels=nodes[0].labels, taints=nodes[0].taints))
    return FlavorTopology(flavor=flavor.name, topology=flavor.topology, levels=levels, leaves=tuple(leaves),
                          left_out=left_out)


def _holds(free: dict[str, int], requests: dict[str, int]) -> tuple[int, str]:
    """CountInWithLimitingResource: how many pods the capacity takes, and the resource that limits it."""
    most, limiting = None, ""
    for r, v in sorted({**requests, "pods": 1}.items()):
        if v <= 0:
            continue
        n = max(0, free.get(r, 0)) // v
        if most is None or n < most:
            most, limiting = n, r
    return (most or 0), limiting


def _excluded_by(leaf: Leaf, spec: dict, flavor: Flavor) -> str:
    """matchNode: the first untolerated NoSchedule/NoExecute taint, then the nodeSelector, then required affinity."""
    tolerations = tolerations_of(spec) + flavor.tolerations
    taint = next((t for t in leaf.taints if t.effect in BLOCKING_EFFECTS and not tolerated(t, tolerations)), None)
    if taint is not None:
        return f"taint {_quoted(str(taint))}"
    selector = {str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()}
    if not selector_matches(selector, None, leaf.labels, leaf.nodes[0]):
        return "nodeSelector"
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if terms and not selector_matches({}, list(terms), leaf.labels, leaf.nodes[0]):
        return "affinity"
    return ""


def _quoted(text: str) -> str:
    """Go's %q of a plain string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rank(snap: FlavorTopology, flavor: Flavor, spec: dict, requests: dict[str, int], level: str) -> Ranking:
    """fillInCounts for one pod shape at `level` (a label of the Topology's levels), its domains ranked."""
    depth = snap.levels.index(level) + 1
    per_domain: dict[tuple[str, ...], list] = {}
    excluded: dict[str, int] = {}
    for leaf in snap.leaves:
        row = per_domain.setdefault(leaf.values[:depth], [0, 0, {}])
        row[1] += len(leaf.nodes)
        why = _excluded_by(leaf, spec, flavor) if snap.by_host else ""
        if why:  # an excluded node still makes its domains; it holds nothing
            excluded[why] = excluded.get(why, 0) + 1
            continue
        holds, limiting = _holds(leaf.free, requests)
        if holds == 0 and limiting:
            key = f"resource {_quoted(limiting)}"
            excluded[key] = excluded.get(key, 0) + 1
        row[0] += holds
        for r, v in leaf.free.items():
            row[2][r] = row[2].get(r, 0) + max(0, v)
    domains = sorted((Domain(values=values, holds=h, nodes=n, free=free) for values, (h, n, free) in per_domain.items()),
                     key=lambda d: (-d.holds, d.values))
    return Ranking(topology=snap.topology, level=level, domains=tuple(domains), total_nodes=len(snap.leaves),
                   excluded=", ".join(sorted(f"{k}: {v}" for k, v in excluded.items())))
