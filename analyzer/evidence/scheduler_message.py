"""The scheduler's own message: find it for a pod, rebuild it from the bundle, compare.

The word never depends on the message (its wording changes between releases);
it is evidence. The rebuild follows the scheduler: per node only the first
failing filter in its order (NodeUnschedulable, NodeName, TaintToleration,
NodeAffinity, NodeResourcesFit; a fit failure lists every short resource),
reasons counted and sorted as strings into `0/N nodes are available: … .`.
Since v1.34/1.35 (kubernetes#134740) the taint reason no longer names the
taint: `node(s) had untolerated taint(s)`; before, `untolerated taint {k: v}`.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from analyzer.model.columns import distinct
from analyzer.model.nodes import NodeView
from analyzer.model.events import SchedulerSaid
from analyzer.model.views import Cluster
from analyzer.model.target import Target
from analyzer.rules import columnar
from analyzer.rules.checks import AFFINITY, PodFacts, check_cordon, check_taint, insufficient
from analyzer.rules.checks import check_affinity, check_fit
from analyzer.rules.filter_columns import codes_of
from analyzer.rules.funnel import selected
from analyzer.rules.scheduler_filters import SCHEDULER_FILTERS

# The filters after node affinity, in the scheduler's order: NodePorts, NodeResourcesFit, … DynamicResources.
AFTER_AFFINITY = SCHEDULER_FILTERS[SCHEDULER_FILTERS.index(check_affinity) + 1:]


def recorded(cluster: Cluster, target: Target) -> SchedulerSaid | None:
    """The pod's PodScheduled=False condition, else its latest FailedScheduling event."""
    for c in target.status.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("message"):
            return SchedulerSaid(message=c["message"], source="PodScheduled condition", reason=c.get("reason", ""))
    said = cluster.scheduler_events.get((target.namespace, target.name))
    if said:
        return said
    for c in target.status.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return SchedulerSaid(message="", source="PodScheduled condition", reason=c.get("reason", ""))
    return None


def node_reasons(pod: PodFacts, node: NodeView, cluster: Cluster) -> tuple[str, ...]:
    """What the scheduler writes for this node: the fixed strings of its first failing filter, in its order."""
    for check in SCHEDULER_FILTERS:
        reason = check(pod, node, cluster)
        if reason is not None:
            return reason.scheduler
    return ()


def rebuild(cluster: Cluster, pod: PodFacts) -> str | None:
    """The `0/N nodes are available: …` sentence this bundle implies, or None when some node fits.
    (The straightforward definition; Rebuilder gives the same sentence without visiting every node per shape.)"""
    nodes = cluster.nodes or []
    counts: Counter[str] = Counter()
    for node in nodes:
        reasons = node_reasons(pod, node, cluster)
        if not reasons:
            return None
        counts.update(reasons)
    return _sentence(len(nodes), counts)


def _sentence(total: int, counts: Counter[str]) -> str:
    parts = sorted(f"{n} {reason}" for reason, n in counts.items() if n)
    return f"0/{total} nodes are available: " + ", ".join(parts) + "."


class Rebuilder:
    """The rebuilt message for many pod shapes from the node columns. The cordon and taint filters depend only
    on the tolerations and a node's taints: judged once per set of taints and tolerations; node affinity is the
    selector over the columns (through the node index); then the filters after it in the scheduler's order over
    the nodes left: fit compares amounts, the others read their codes over every node (rules/filter_columns.py)
    and count each code's scheduler strings once. A pod with claims, DeviceClass-served resources or spec.nodeName, or `scalar`, is rebuilt node by node
    (rebuild())."""

    def __init__(self, cluster: Cluster, *, scalar: bool = False) -> None:
        self.cluster = cluster
        self.scalar = scalar
        self._policy: dict[tuple, tuple[np.ndarray, Counter[str]]] = {}

    def _cordon_or_taint(self, pod: PodFacts) -> tuple[np.ndarray, Counter[str]]:
        """Nodes whose first failure is the cordon or a taint, and what the scheduler writes for them."""
        found = self._policy.get(pod.tolerations)
        if found is None:
            c = self.cluster
            cols = c.columns
            assert cols is not None and c.nodes is not None
            per_kind = [check_cordon(pod, c.nodes[i], c) or check_taint(pod, c.nodes[i], c) for i in cols.taint_kinds]
            sizes = np.bincount(cols.taint_kind, minlength=len(per_kind))
            counts: Counter[str] = Counter()
            for reason, size in zip(per_kind, sizes.tolist()):
                if reason is not None:
                    for text in reason.scheduler:
                        counts[text] += size
            failing = np.array([r is not None for r in per_kind], dtype=bool)[cols.taint_kind]
            found = self._policy[pod.tolerations] = (failing, counts)
        return found

    def rebuild(self, pod: PodFacts) -> str | None:
        c = self.cluster
        nodes = c.nodes or []
        if self.scalar or pod.pin or columnar.columns_of(c) is None or not columnar.node_blind(pod, c):
            return rebuild(c, pod)
        failing, counts = self._cordon_or_taint(pod)
        counts = Counter(counts)
        matching = selected(pod, c)
        left = matching[~failing[matching]]
        # Past cordon and taints, every node the selector does not match fails at node affinity.
        counts[AFFINITY] += len(nodes) - int(np.count_nonzero(failing)) - len(left)
        for check in AFTER_AFFINITY:
            if not len(left):
                break
            if check is check_fit:
                failing = np.zeros(len(left), dtype=bool)
                for r, _, _, _, short in columnar.shortfalls(pod, c, left) or []:
                    counts[insufficient(r)] += int(np.count_nonzero(short))
                    failing |= short
            else:
                codes = codes_of(check, pod, c) if pod.filters is not None else None
                if codes is None:  # no volume, inter-pod, spread or port needs; DynamicResources: no claims
                    continue
                mine = codes[left]
                failing = mine != 0
                found, first, sizes = distinct(mine[failing])
                for i, size in zip(first.tolist(), sizes.tolist()):
                    reason = check(pod, nodes[int(left[failing][i])], c)
                    assert reason is not None
                    for text in reason.scheduler:
                        counts[text] += size
            left = left[~failing]
        if len(left):
            return None  # some node passes every filter
        return _sentence(len(nodes), counts)


def first_sentence(message: str) -> str:
    """The part before the preemption tail (`… . no new claims …, preemption: …`)."""
    head, sep, _ = message.partition(". ")
    return head + "." if sep else message


_TAINT_NAMED = re.compile(r"untolerated taint \{[^}]*\}")


def _normalise(message: str) -> str:
    """The taint reason's two wordings (with and without the taint) read as one: the change came in a
    1.34 patch release, so the minor version alone cannot tell which one a server writes."""
    return _TAINT_NAMED.sub("untolerated taint(s)", first_sentence(message)).rstrip(".")


def compare(recorded_message: str, rebuilt: str | None) -> str:
    if not recorded_message:
        return "the scheduler left no message"
    if rebuilt is None:
        return "differs: the bundle shows a node that fits now (the message is stale, or the pod is in back-off)"
    if _normalise(recorded_message) == _normalise(rebuilt):
        return "agrees: the bundle shows the same world the scheduler saw"
    return "differs: the cluster changed since the message, or it depends on something the bundle does not show"


def conflation_note(message: str, word: str) -> str | None:
    """When the scheduler says `Insufficient X` or `cannot allocate all claims`, say what that one sentence hides."""
    if "cannot allocate all claims" in message:
        return (f"the scheduler's 'cannot allocate all claims' is the same sentence for every device cause: no device "
                f"of the class published (no-gpu-node), none matching the selectors (device-selector-mismatch), "
                f"every matching device tainted (untolerated-taint) or allocated (exhausted), more asked than a node "
                f"has (exhausted, too-large); the bundle says: {word}")
    if "Insufficient " not in message:
        return None
    return (f"the scheduler's 'Insufficient …' is the same sentence for three causes: the resource not advertised "
            f"(no-gpu-node), advertised with allocatable 0 (allocatable-zero), and all of it taken (exhausted); "
            f"the bundle says: {word}")


_PREEMPTION = re.compile(r"preemption: 0/(\d+) nodes are available: (.*)$")
_PREEMPTION_PART = re.compile(r"(\d+) (No preemption victims found for incoming pod|Preemption is not helpful for scheduling)")


def preemption_hint(message: str) -> str | None:
    """The scheduler's preemption tail in words, per node count. kube-scheduler (pkg/scheduler/framework/
    preemption/preemption.go, nodesWherePreemptionMightHelp) writes "Preemption is not helpful for scheduling"
    for a node whose failure is UnschedulableAndUnresolvable: a taint, a selector or affinity, a device or a
    request the node can never give, so evicting a pod cannot help; defaultpreemption's SelectVictimsOnNode
    writes "No preemption victims found for incoming pod" where evicting could make room but no pod of lower
    priority is there to evict."""
    m = _PREEMPTION.search(message)
    if m is None:
        return None
    counts = {"victims": 0, "unhelpful": 0}
    for n, what in _PREEMPTION_PART.findall(m.group(2)):
        counts["victims" if what.startswith("No preemption") else "unhelpful"] += int(n)
    total = int(m.group(1))
    parts = []
    if counts["unhelpful"]:
        where = "any node" if counts["unhelpful"] == total else f"{counts['unhelpful']} of {total} node(s)"
        parts.append(f"would not help on {where} (what stops the pod there, a taint, a selector or something the "
                     f"node can never give, is not a pod to evict)")
    if counts["victims"]:
        where = "every node" if counts["victims"] == total else f"{counts['victims']} of {total} node(s)"
        parts.append(f"on {where} other pods hold what it needs, but none has a lower priority to evict")
    if not parts:
        return None
    return "preemption: " + "; ".join(parts) + " — supporting evidence only"
