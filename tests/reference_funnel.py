"""The funnel and its evidence judged node by node: the reference the vector forms are compared with.

Production judges every stage by its vector form (rules/columnar.py, rules/filter_columns.py) and makes the
evidence from the node columns. Here each stage's own rule (Stage.check, rules/checks.py) runs on every node, the
fit rows read each node's amounts, the nearest nodes count each node's failures and the scheduler's message
counts each node's first failing filter in the scheduler's order: the straightforward definitions, slow and
plain. tests/test_columns.py, test_filter_columns.py, test_nearest.py and the recordings' fixtures hold the two
equal, on random clusters and on real and generated bundles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from analyzer.classify import Classifier
from analyzer.evidence.fit import CLOSEST, DEVICES, _Facts, fit_evidence
from analyzer.evidence.makers import Makers
from analyzer.evidence.nearest import _ORDER, Nearest, failures
from analyzer.evidence.filters import nearest_failures
from analyzer.model.matching import selector_matches, untolerated
from analyzer.model.views import Cluster
from analyzer.rules import dra_devices
from analyzer.rules.checks import PodFacts, _fit_order, available, shortages, used_on
from analyzer.rules.columnar import Judged
from analyzer.rules.funnel import Funnels, Stage, run_funnel
from analyzer.rules.funnel_result import FunnelResult
from analyzer.rules.reason import Reason, Removed
from analyzer.rules.scheduler_filters import SCHEDULER_FILTERS
from analyzer.rules.spread import Domains
from analyzer.verdict import Fit

def judge_by_node(stage: Stage, pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """The stage's rule on each node of `at`: the removed ones grouped by Reason, in the order of their first."""
    nodes = cluster.nodes or []
    kept: list[int] = []
    removed: dict[Reason, list[int]] = {}
    for i in at.tolist():
        reason = stage.check(pod, nodes[i], cluster)
        if reason is None:
            kept.append(i)
        else:
            removed.setdefault(reason, []).append(i)
    if stage.name == "fit":
        _keep_fit_rows(pod, cluster, at)
    return Judged(kept=np.array(kept, dtype=np.int64),
                  removed=[Removed(np.array(where, dtype=np.int64), reason) for reason, where in removed.items()])


def _keep_fit_rows(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> None:
    """The fit stage's rows (what columnar.shortfalls keeps with the shape) read node by node, so that the reason's
    sub-case of `exhausted` (too large, fragmented; rules/funnel_text.fit_sub_case) is judged from each node's own
    amounts here too."""
    order = _fit_order(pod, cluster)
    f = fit_facts_by_node(cluster, pod, at, [r for r, _, _ in order])
    pod.state.fit_rows = (at, [(r, want, np.array(f.alloc[r], dtype=object), np.array(f.free[r], dtype=object),
                                f.short[r]) for r, want, _ in order])


def funnel_by_node(pod: PodFacts, cluster: Cluster) -> FunnelResult:
    return run_funnel(pod, cluster.nodes or [], cluster, judge_by_node)


def fit_facts_by_node(c: Cluster, facts: PodFacts, at: np.ndarray, wanted: list[str]) -> _Facts:
    """Per candidate, from its own amounts (checks.shortages, checks.available) and its devices."""
    nodes = [(c.nodes or [])[i] for i in at.tolist()]
    out = _Facts(wanted, len(nodes))
    for j, node in enumerate(nodes):
        used = used_on(facts, node, c)
        for s in shortages(facts, node, c):
            out.short[s.resource][j] = True
        devices = dra_devices.outcome(facts.claims, node, c)
        if devices is not None and devices.stage in ("free", "enough"):
            out.short[DEVICES][j] = True
            out.devices_too_large = out.devices_too_large and devices.too_large
        for r in wanted:
            alloc, held, _ = available(facts, node, c, r, used)
            out.free[r][j] = alloc - held
            out.alloc[r][j] = available(facts, node, c, r, {})[0]
    return out


def fit_by_node(c: Cluster, facts: PodFacts, funnel: FunnelResult, limit: int | None) -> Fit:
    return fit_evidence(c, facts, funnel, limit, facts_at=fit_facts_by_node)


def counts_by_node(pod: PodFacts, cluster: Cluster,
                   cpu_mask: Callable[[tuple[str, ...]], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per node the failures other than the selector (nearest.failures, then the filters after fit), as (count
    capped at 2, the _ORDER of the one failing check)."""
    nodes = cluster.nodes or []
    shape = PodFacts.of_shape(pod)
    per_node = []
    for n in nodes:
        f = failures(shape, n, cluster)
        if pod.filters is not None and len(f) < 2:
            f = f + nearest_failures(pod, n, cluster, 2 - len(f))
        per_node.append(f)
    count = np.array([min(len(f), 2) for f in per_node], dtype=np.int64)
    order = np.array([_ORDER.get(f[0].check, 9) if f else 0 for f in per_node], dtype=np.int64)
    return count, order


def nearest_by_node(cluster: Cluster) -> Nearest:
    return Nearest(cluster, counts=counts_by_node)


def rebuild_by_node(cluster: Cluster, pod: PodFacts) -> str | None:
    """The `0/N nodes are available: …` sentence: each node's first failing filter in the scheduler's order."""
    nodes = cluster.nodes or []
    counts: Counter[str] = Counter()
    for node in nodes:
        reasons: tuple[str, ...] = ()
        for check in SCHEDULER_FILTERS:
            reason = check(pod, node, cluster)
            if reason is not None:
                reasons = reason.scheduler
                break
        if not reasons:
            return None
        counts.update(reasons)
    parts = sorted(f"{n} {reason}" for reason, n in counts.items() if n)
    return f"0/{len(nodes)} nodes are available: " + ", ".join(parts) + "."


def spread_by_node(pod: PodFacts, cluster: Cluster) -> list[Domains]:
    """spread.state node by node: per constraint the matching pods per eligible domain."""
    out: list[Domains] = []
    f, placement = pod.filters, cluster.placement
    if f is not None and f.spread and placement is not None:
        keys = [c.topology_key for c in f.spread]
        selector = dict(pod.node_selector)
        for c in f.spread:
            m = placement.match(((c.selector, frozenset((f.namespace,))),))
            counts: dict[str, int] = {}
            names: dict[str, list[str]] = {}
            for node in cluster.nodes or ():
                if not all(k in node.labels for k in keys):
                    continue
                if c.honor_affinity and not selector_matches(selector, pod.terms, node.labels, node.name):
                    continue
                if c.honor_taints and untolerated(node.taints, pod.tolerations):
                    continue
                value = node.labels[c.topology_key]
                counts[value] = counts.get(value, 0) + m.counts.get(node.name, 0)
                shown = names.setdefault(value, [])
                shown.extend(m.names.get(node.name, [])[: 3 - len(shown)])
            minimum = min(counts.values()) if counts else None
            if minimum is not None and c.min_domains and len(counts) < c.min_domains:
                minimum = 0
            out.append(Domains(constraint=c, counts=counts, minimum=minimum, names=names))
    return out


class _ReferenceMakers(Makers):
    """The evidence as Makers makes it, every part node by node."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self._nearest = nearest_by_node(cluster)

    def fit(self, funnel: FunnelResult, *, every: bool) -> Fit:
        return fit_by_node(self.cluster, funnel.facts, funnel, None if every else CLOSEST)

    def rebuilt(self, facts: PodFacts) -> str | None:
        return rebuild_by_node(self.cluster, facts)


def classifier_by_node(cluster: Cluster) -> Classifier:
    """A classifier whose funnels and evidence are judged node by node."""
    return Classifier(cluster, funnels=Funnels(cluster, judge=judge_by_node), makers=_ReferenceMakers(cluster))


def verdicts_by_node(cluster: Cluster, extra=()) -> list:
    clf = classifier_by_node(cluster)
    return [clf.classify(t) for t in (*cluster.pod_targets, *extra)]
