"""The node funnel (causes.md v2, rows 8-14): stages over the nodes, the first that keeps none names the cause.

The stages go from what is most fixed about a node to what changes by the minute: what the pod selects, what the
node has at all (and, for claims, what its devices offer), policy (cordon, taints), health (allocatable), load
(fit). Each stage is data (name, word, check), so the evidence prints each one: nodes in, nodes out, every removed
node and why. The checks themselves, with the scheduler's reason strings, are in rules/checks.py. The selector
stage goes through the node index (model/node_index.py), so the funnel costs pods + nodes, not pods × nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


from analyzer.bundle.catalog import NODES
from analyzer.text import some_names
from analyzer import words
from analyzer.model.matching import (selector_matches)
from analyzer.model.quantity import format_units
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules.case import Case, Decision
from analyzer.rules.funnel_result import FunnelResult, StageResult
from analyzer.rules.reason import Check, Reason
from analyzer.rules.checks import (AFFINITY, NODE_NAME, PodFacts, check_advertised, check_allocatable,
                                   check_device_selectors, check_fit, check_policy, check_selector)
from analyzer.rules.in_use import check_in_use, in_use_applies
from analyzer.rules.interpod import check_interpod, interpod_applies
from analyzer.rules.spread import check_spread, spread_applies
from analyzer.rules.volumes import check_volume_topology, volumes_apply

def _policy_word(removed: list[Reason]) -> str:
    return words.CORDONED if all(r.check is Check.CORDON for r in removed) else words.UNTOLERATED_TAINT


def _advertised_word(removed: list[Reason]) -> str:
    """Row 16 before 17: some candidate offers the vendor's devices under another name (checks.check_advertised)."""
    return words.RESOURCE_NAME_MISMATCH if any(r.check == "other-name" for r in removed) else words.NO_GPU_NODE


@dataclass(frozen=True, kw_only=True)
class Stage:
    name: str
    word: str
    check: Callable[[PodFacts, NodeView, Cluster], Reason | None]
    word_for: Callable[[list[Reason]], str] | None = None
    # A stage that cannot remove a node for this pod is left out of its funnel (and of the evidence).
    applies: Callable[[PodFacts, Cluster], bool] | None = None


# causes.md v3: what the pod selects (15), what the node has (16-18), where its data lives (19), policy (20, 21),
# health (22), where other pods are (23, 24), load (25: resources, then ports, ReadWriteOncePod and CSI limits).
STAGES: tuple[Stage, ...] = (
    Stage(name="selector", word=words.SELECTOR_MISMATCH, check=check_selector),
    Stage(name="advertised", word=words.NO_GPU_NODE, check=check_advertised, word_for=_advertised_word),
    Stage(name="device-selectors", word=words.DEVICE_SELECTOR_MISMATCH, check=check_device_selectors),
    Stage(name="volumes", word=words.VOLUME_NODE_CONFLICT, check=check_volume_topology, applies=volumes_apply),
    Stage(name="taints", word=words.UNTOLERATED_TAINT, check=check_policy, word_for=_policy_word),
    Stage(name="allocatable", word=words.ALLOCATABLE_ZERO, check=check_allocatable),
    Stage(name="pod-affinity", word=words.POD_AFFINITY, check=check_interpod, applies=interpod_applies),
    Stage(name="topology-spread", word=words.TOPOLOGY_SPREAD, check=check_spread, applies=spread_applies),
    Stage(name="fit", word=words.EXHAUSTED, check=check_fit),
    Stage(name="in-use", word=words.EXHAUSTED, check=check_in_use, applies=in_use_applies),
)


def _selector_stage(pod: PodFacts, nodes: list[NodeView], cluster: Cluster) -> StageResult:
    """Row 8 through the node index: the exact check runs only on the nodes the index cannot rule out."""
    index = cluster.node_index
    possible = index.possible(pod.node_selector, pod.terms, pod.pin) if index is not None else frozenset(range(len(nodes)))
    kept: list[NodeView] = []
    removed: list[tuple[str, Reason]] = []
    for i in sorted(possible):
        node = nodes[i]
        reason = check_selector(pod, node, cluster)
        if reason is None:
            kept.append(node)
        else:
            removed.append((node.name, reason))
    bulk = None
    if len(possible) < len(nodes):
        bulk = (Reason(check=Check.NODE_NAME, text=f"spec.nodeName is {pod.pin!r}", scheduler=(NODE_NAME,)) if pod.pin
                else Reason(check=Check.SELECTOR, text="labels do not satisfy nodeSelector / required node affinity",
                            scheduler=(AFFINITY,)))
    return StageResult(name="selector", nodes_in=len(nodes), kept=kept, removed=removed, bulk=bulk, possible=possible)


def run_funnel(pod: PodFacts, nodes: list[NodeView], cluster: Cluster) -> FunnelResult:
    first = _selector_stage(pod, nodes, cluster)
    results: list[StageResult] = [first]
    if not first.kept:
        return FunnelResult(facts=pod, stages=results, word=STAGES[0].word)
    candidates = first.kept
    fit_candidates: list[NodeView] = []
    for stage in STAGES[1:]:
        if stage.applies is not None and not stage.applies(pod, cluster):
            continue
        if stage.name == "fit":
            fit_candidates = candidates
        kept: list[NodeView] = []
        removed: list[tuple[str, Reason]] = []
        check = stage.check
        for node in candidates:
            reason = check(pod, node, cluster)
            if reason is None:
                kept.append(node)
            else:
                removed.append((node.name, reason))
        results.append(StageResult(name=stage.name, nodes_in=len(candidates), kept=kept, removed=removed))
        if not kept:
            word = stage.word_for([r for _, r in removed]) if stage.word_for else stage.word
            return FunnelResult(facts=pod, stages=results, word=word, fit_candidates=fit_candidates)
        candidates = kept
    return FunnelResult(facts=pod, stages=results, word=None, fit_candidates=fit_candidates)


# -- rows 8-14 as one rule of the order ------------------------------------------------

_HEAD = {
    "selector": "no node matches nodeSelector/affinity (0 of {n})",
    "advertised": "no candidate ({n}) advertises the resource",
    "device-selectors": "no candidate ({n}) can satisfy the claim even with every device free",
    "taints": "every candidate ({n}) is excluded by a taint or cordon",
    "allocatable": "every candidate ({n}) reports allocatable 0",
    "fit": "no candidate ({n}) has room",
    "volumes": "the pod's volumes cannot be used on any candidate ({n})",
    "pod-affinity": "every candidate ({n}) breaks a required inter-pod rule",
    "topology-spread": "every candidate ({n}) would break a DoNotSchedule topology spread constraint",
    "in-use": "on every candidate ({n}) another pod holds what it needs (a host port, a ReadWriteOncePod claim, "
              "the CSI volume limit)",
}


def funnel_reason(funnel: FunnelResult) -> str:
    if funnel.reason is None:  # once per funnel: every pod of the shape shares it
        funnel.reason = _reason(funnel)
    return funnel.reason


def _reason(funnel: FunnelResult) -> str:
    last = funnel.last
    head = _HEAD[last.name].format(n=last.nodes_in)
    if last.name == "selector":
        return head
    by_reason: dict[str, list[str]] = {}
    for node, reason in last.removed:
        by_reason.setdefault(reason.text, []).append(node)
    parts = [f"{some_names(nodes)}: {text}" for text, nodes in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))]
    return head + ": " + "; ".join(parts[:3])


def stages_as_data(funnel: FunnelResult, nodes: list[NodeView], limit: int | None) -> list[dict]:
    """Stage by stage; removed nodes grouped by their exact reason: a count, at most `limit` names (None: all)
    and how many more. The selector stage's bulk group is counted without naming every node: a pod pinned to
    one node of 5,000 costs the names shown, not 4,999."""
    out = []
    for st in funnel.stages:
        counts: dict[str, int] = {}
        names: dict[str, list[str]] = {}
        for _node, reason in st.removed:
            counts[reason.text] = counts.get(reason.text, 0) + 1
        if st.bulk is not None:
            counts[st.bulk.text] = counts.get(st.bulk.text, 0) + len(nodes) - len(st.possible)
        if counts:
            # Stop as soon as every group has its names: a pinned pod's 4,999 removed nodes cost 20 steps.
            wanted = {text: n if limit is None else min(n, limit) for text, n in counts.items()}
            unfilled = sum(1 for n in wanted.values() if n)
            for node, reason in st.removed_nodes(nodes):
                group = names.setdefault(reason.text, [])
                if len(group) < wanted[reason.text]:
                    group.append(node)
                    if len(group) == wanted[reason.text]:
                        unfilled -= 1
                        if unfilled == 0:
                            break
        first_seen = {text: i for i, text in enumerate(names)}  # groups in the order their first node came
        out.append({"stage": st.name, "nodes_in": st.nodes_in, "nodes_out": st.nodes_out,
                    "removed": [{"reason": text, "count": n, "nodes": names.get(text, []),
                                 "more": n - len(names.get(text, []))}
                                for text, n in sorted(counts.items(), key=lambda kv: first_seen.get(kv[0], len(first_seen)))]})
    return out


def decide(case: Case) -> Decision | None:
    c, t, ev = case.cluster, case.target, case.evidence
    if c.nodes is None or not c.nodes:
        ev["missing"] = NODES.file
        why = (f"cannot run the node funnel: {c.why_missing('nodes')}" if c.nodes is None
               else "nodes.json lists no usable node: nothing to judge the pod against")
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=why)
    funnel = case.funnel = case.funnel_of(case.spec or {}, "" if t.created else t.node_name, case.claims, case.filters)
    facts = funnel.facts
    ev["requests"] = {r: format_units(r, v) for r, v in facts.requests if v}
    if funnel.word is None:
        return None
    relevant = [n for n in c.node_problems if n.labels is None or n.name is None
                or (selector_matches(dict(facts.node_selector), facts.terms, n.labels, n.name)
                    and (not facts.pin or n.name == facts.pin))]
    if relevant:
        # An invalid node is out of the funnel; its labels say it might have taken the pod.
        ev["missing"] = NODES.file
        ev["invalid_nodes"] = [n.finding for n in relevant[:20]]
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"the funnel says {funnel.word}, but {len(relevant)} invalid node(s) it might select "
                               f"could not be judged: {relevant[0].finding}")
    return Decision(word=funnel.word, reason=funnel_reason(funnel))
