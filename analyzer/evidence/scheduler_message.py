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
from dataclasses import dataclass

import numpy as np

from analyzer.model.columns import distinct
from analyzer.model.events import SchedulerSaid
from analyzer.model.views import Cluster
from analyzer.model.target import Target
from analyzer.rules import columnar, dra_devices
from analyzer.rules.checks import AFFINITY, NODE_NAME, PodFacts, check_cordon, check_taint, insufficient
from analyzer.rules.checks import check_affinity, check_claims, check_fit
from analyzer.rules.reason import Reason
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


def _sentence(total: int, counts: Counter[str]) -> str:
    parts = sorted(f"{n} {reason}" for reason, n in counts.items() if n)
    return f"0/{total} nodes are available: " + ", ".join(parts) + "."


@dataclass(frozen=True, kw_only=True)
class _Policy:
    """The cordon and taint filters for one set of tolerations: per kind of taints each one's failure, per node
    whether each fails, what the scheduler writes for the nodes that fail at either first, and how many do."""

    cordon: list[Reason | None]
    taint: list[Reason | None]
    cordoned: np.ndarray
    tainted: np.ndarray
    passing: np.ndarray  # neither fails
    first: Counter[str]
    failing: int


class Rebuilder:
    """The rebuilt message for many pod shapes from the node columns, each node counted at its first failing
    filter in the scheduler's order (rules/scheduler_filters.py). The cordon and taint filters depend only on
    the tolerations and a node's taints: judged once per set of taints and tolerations; node name and affinity are
    the selector over the columns (through the node index); then the filters after it over the nodes left: fit
    compares amounts, the volume, spread, inter-pod and port filters read their codes over every node
    (rules/filter_columns.py) and count each code's scheduler strings once, and a claim's devices are the DRA
    rules on each node left (rules/dra_devices.py). tests/reference_funnel.py rebuilds it node by node, the
    reference."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._policy: dict[tuple, _Policy] = {}

    def _kinds(self, pod: PodFacts) -> _Policy:
        """The cordon and taint filters for a set of tolerations, once per kind of taints and cordon."""
        found = self._policy.get(pod.tolerations)
        if found is None:
            c = self.cluster
            cols = columnar.columns_of(c)
            cordon = [check_cordon(pod, cols.nodes[i], c) for i in cols.taint_kinds]
            taint = [check_taint(pod, cols.nodes[i], c) for i in cols.taint_kinds]
            kind = cols.taint_kind
            cordoned = np.array([r is not None for r in cordon], dtype=bool)[kind]
            tainted = np.array([r is not None for r in taint], dtype=bool)[kind]
            first: Counter[str] = Counter()  # each node at the first of the two that fails
            self._count(first, cordon, kind[cordoned])
            self._count(first, taint, kind[~cordoned & tainted])
            passing = ~(cordoned | tainted)
            found = self._policy[pod.tolerations] = _Policy(cordon=cordon, taint=taint, cordoned=cordoned,
                                                            tainted=tainted, passing=passing, first=first,
                                                            failing=cols.n - int(np.count_nonzero(passing)))
        return found

    @staticmethod
    def _count(counts: Counter[str], per_kind: list[Reason | None], kinds: np.ndarray) -> None:
        """Each kind's strings once per node of `kinds` (the kinds of the nodes that fail there)."""
        for reason, size in zip(per_kind, np.bincount(kinds, minlength=len(per_kind)).tolist()):
            if reason is not None and size:
                for text in reason.scheduler:
                    counts[text] += size

    def rebuild(self, pod: PodFacts) -> str | None:
        """The `0/N nodes are available: …` sentence this bundle implies, or None when some node fits."""
        c = self.cluster
        cols = columnar.columns_of(c)
        nodes = cols.nodes
        p = self._kinds(pod)
        matching = selected(pod, c)
        if not pod.pin:
            counts = Counter(p.first)
            left = matching[p.passing[matching]]
            # Past cordon and taints, every node the selector does not match fails at node affinity.
            counts[AFFINITY] += cols.n - p.failing - len(left)
        else:  # NodeUnschedulable, then NodeName, then TaintToleration, then node affinity
            counts = Counter()
            kind = cols.taint_kind
            named = cols.names_column.codes == cols.names_column.code.get(pod.pin, -1)
            self._count(counts, p.cordon, kind[p.cordoned])
            counts[NODE_NAME] += int(np.count_nonzero(~p.cordoned & ~named))
            self._count(counts, p.taint, kind[~p.cordoned & named & p.tainted])
            passed = cols.everything[~p.cordoned & named & ~p.tainted]
            left = passed[np.isin(passed, matching)]
            counts[AFFINITY] += len(passed) - len(left)
        for check in AFTER_AFFINITY:
            if not len(left):
                break
            if check is check_fit:
                failing = np.zeros(len(left), dtype=bool)
                for r, _, _, _, short in columnar.shortfalls(pod, c, left):
                    counts[insufficient(r)] += int(np.count_nonzero(short))
                    failing |= short
                failing |= self._per_node(dra_devices.devices_free, pod, left, ~failing, counts)
            elif check is check_claims:  # the DynamicResources filter: every device step of the claims
                failing = self._per_node(lambda _, node, cl: check_claims(pod, node, cl), pod, left,
                                         np.ones(len(left), dtype=bool), counts)
            else:
                codes = codes_of(check, pod, c) if pod.filters is not None else None
                if codes is None:  # no volume, inter-pod, spread or port needs
                    continue
                mine = codes[left]
                failing = mine != 0
                if not failing.any():
                    continue
                found, first, sizes = distinct(mine[failing])
                for i, size in zip(first.tolist(), sizes.tolist()):
                    reason = check(pod, nodes[int(left[failing][i])], c)
                    assert reason is not None
                    for text in reason.scheduler:
                        counts[text] += size
            left = left[~failing]
        if len(left):
            return None  # some node passes every filter
        return _sentence(cols.n, counts)

    def _per_node(self, rule, pod: PodFacts, left: np.ndarray, ask: np.ndarray, counts: Counter[str]) -> np.ndarray:
        """A claim's device rule on the nodes of `left` where `ask` (read per node: its own ResourceSlices)."""
        failing = np.zeros(len(left), dtype=bool)
        if pod.claims is None:
            return failing
        nodes = columnar.columns_of(self.cluster).nodes
        for j in np.flatnonzero(ask).tolist():
            reason = rule(pod.claims, nodes[int(left[j])], self.cluster)
            if reason is not None:
                failing[j] = True
                counts.update(reason.scheduler)
        return failing


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
