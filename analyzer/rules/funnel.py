"""The node funnel (causes.md, `selector-mismatch` to `exhausted`): stages over the nodes, the first that keeps none names the cause.

The stages go from what is most fixed about a node to what changes by the minute: what the pod selects, what the
node has at all (and, for claims, what its devices offer), policy (cordon, taints), health (allocatable), load
(fit). Each stage is data (name, word, check), so the evidence prints each one: nodes in, nodes out, every removed
node and why. The checks themselves, with the scheduler's reason strings, are in rules/checks.py. The selector
stage goes through the node index (model/node_index.py), so the funnel costs pods + nodes, not pods × nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from analyzer.bundle import catalog
from analyzer.bundle.catalog import NODES
from analyzer import prose
from analyzer import words
from analyzer.model.matching import names_required, selector_matches
from analyzer.model.nodes import NodeView
from analyzer.model.pod_filters import PodFilters
from analyzer.model.podspec import priority_of
from analyzer.model.quantity import format_units
from analyzer.model.selector_columns import selector_mask
from analyzer.model.views import Cluster
from analyzer.rules import columnar, node_health
from analyzer.rules.case import Case, Decision
from analyzer.rules.checks import (
    AFFINITY,
    NODE_NAME,
    SELECTOR_TEXT,
    PodFacts,
    check_advertised,
    check_allocatable,
    check_device_selectors,
    check_fit,
    check_policy,
    check_selector,
    named_text,
)
from analyzer.model.events import SchedulerSaid
from analyzer.rules.columnar import Judged
from analyzer.rules.family import Answered, Family, Plain, Rule, shape_of
from analyzer.rules.filter_columns import vector_stage
from analyzer.rules.funnel_actions import funnel_action
from analyzer.rules.funnel_result import FunnelResult, StageResult
from analyzer.rules.funnel_text import funnel_reason, stages_as_data
from analyzer.rules.in_use import check_in_use, in_use_applies
from analyzer.rules.interpod import check_interpod, interpod_applies
from analyzer.rules.reason import Check, Reason, Removed
from analyzer.rules.spread import check_spread, spread_applies
from analyzer.rules.volumes import check_volume_topology, volumes_apply

if TYPE_CHECKING:  # the DRA model is imported only where a pod has claims (rules/dra.py)
    from analyzer.model.dra.outcomes import Resolution


def _policy_word(removed: list[Reason]) -> str:
    """Only cordons: `cordoned`; only condition taints: `node-unhealthy` (repair the node); any other taint, or a
    mix: `untolerated-taint`."""
    checks = {r.check for r in removed}
    if checks == {Check.CORDON}:
        return words.CORDONED
    return words.NODE_UNHEALTHY if checks == {Check.CONDITION} else words.UNTOLERATED_TAINT


def _advertised_word(removed: list[Reason]) -> str:
    """`resource-name-mismatch` before `no-gpu-node`: some candidate offers the vendor's devices under another name (checks.check_advertised)."""
    return words.RESOURCE_NAME_MISMATCH if any(r.check is Check.OTHER_NAME for r in removed) else words.NO_GPU_NODE


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage: its rule for one node (rules/checks.py: the Reason texts, and the reference the tests compare
    with) and its vector form over the nodes that reach it (rules/columnar.py, rules/filter_columns.py), the one
    the funnel runs."""

    name: str
    word: str
    check: Callable[[PodFacts, NodeView, Cluster], Reason | None]
    vector: Callable[[PodFacts, Cluster, np.ndarray], Judged]
    word_for: Callable[[list[Reason]], str] | None = None
    # A stage that cannot remove a node for this pod is left out of its funnel (and of the evidence).
    applies: Callable[[PodFacts, Cluster], bool] | None = None


def selected(pod: PodFacts, cluster: Cluster) -> np.ndarray:
    """Positions of the nodes that satisfy spec.nodeName, nodeSelector and required node affinity (`selector-mismatch`).
    The node index narrows first (a pinned DaemonSet pod looks at one node, not 5,000); then the label columns."""
    cols = columnar.columns_of(cluster)
    key = ("selected", pod.node_selector, pod.affinity, pod.pin)
    found = cols.memo.get(key)
    if isinstance(found, np.ndarray):
        return found
    index = cluster.node_index
    at = (np.array(sorted(index.possible(pod.node_selector, pod.terms, pod.pin)), dtype=np.int64) if index is not None
          else cols.everything)
    found = cols.memo[key] = at[selector_mask(cols, pod.node_selector, pod.terms, pod.pin, at)]
    return found  # the funnel, the nearest nodes and the rebuilt message each ask


def select(pod: PodFacts, cluster: Cluster, at: np.ndarray) -> Judged:
    """check_selector over `at` (every node: the funnel's first stage): the nodes `selected` keeps; a node of
    another name fails on the name, the pinned node itself on its labels."""
    chosen = selected(pod, cluster)
    cols = columnar.columns_of(cluster)
    out = np.ones(cols.n, dtype=bool)
    out[chosen] = False
    if len(at) == cols.n:  # every node: the funnel's first stage (a mask, not np.delete: 5,000 pinned pods ask)
        kept, removed = chosen, cols.everything[out]
    else:
        kept, removed = at[~out[at]], at[out[at]]
    affinity = Reason(check=Check.SELECTOR, text=SELECTOR_TEXT, scheduler=(AFFINITY,))
    names = names_required(pod.terms)
    groups: list[Removed] = []
    if not len(removed):
        return Judged(kept=kept, removed=groups)
    if pod.pin or names is not None:  # the nodes of other names apart (check_node_name, check_affinity)
        wanted = [pod.pin] if pod.pin else sorted(names or ())
        codes = cols.names_column.codes
        named = np.zeros(cols.n, dtype=bool)
        for n in wanted:  # a name or a few: a comparison each costs less than np.isin
            named |= codes == cols.names_column.code.get(n, -1)
        named &= out  # a named node the selector removes all the same (on its labels)
        other = (Reason(check=Check.NODE_NAME, text=f"spec.nodeName is {pod.pin!r}", scheduler=(NODE_NAME,)) if pod.pin
                 else Reason(check=Check.SELECTOR, text=named_text(names or frozenset()), scheduler=(AFFINITY,)))
        if pod.pin and names is not None and pod.pin not in names:  # the pinned node is not one the affinity names
            affinity = Reason(check=Check.SELECTOR, text=named_text(names), scheduler=(AFFINITY,))
        if not named.any():  # the usual case (a DaemonSet's pod: every node but its own is another name)
            groups = [Removed(removed, other)]
        else:
            on_labels = named[removed]
            parts = [Removed(removed[~on_labels], other), Removed(removed[on_labels], affinity)]
            groups = sorted((g for g in parts if len(g.at)), key=lambda g: int(g.at[0]))
    else:
        groups = [Removed(removed, affinity)]
    return Judged(kept=kept, removed=groups)


# causes.md's order: what the pod selects, what the node has (its names, its devices), where its data lives, policy
# (cordon, condition and other taints), health (allocatable 0), where other pods are (inter-pod, spread), load
# (resources, then ports, ReadWriteOncePod and CSI limits).
STAGES: tuple[Stage, ...] = (
    Stage(name="selector", word=words.SELECTOR_MISMATCH, check=check_selector, vector=select),
    Stage(name="advertised", word=words.NO_GPU_NODE, check=check_advertised, word_for=_advertised_word,
          vector=columnar.advertised),
    Stage(name="device-selectors", word=words.DEVICE_SELECTOR_MISMATCH, check=check_device_selectors,
          vector=columnar.device_selectors),
    Stage(name="volumes", word=words.VOLUME_NODE_CONFLICT, check=check_volume_topology, applies=volumes_apply,
          vector=vector_stage(check_volume_topology)),
    Stage(name="taints", word=words.UNTOLERATED_TAINT, check=check_policy, word_for=_policy_word, vector=columnar.policy),
    Stage(name="allocatable", word=words.ALLOCATABLE_ZERO, check=check_allocatable, vector=columnar.allocatable),
    Stage(name="pod-affinity", word=words.POD_AFFINITY, check=check_interpod, applies=interpod_applies,
          vector=vector_stage(check_interpod)),
    Stage(name="topology-spread", word=words.TOPOLOGY_SPREAD, check=check_spread, applies=spread_applies,
          vector=vector_stage(check_spread)),
    Stage(name="fit", word=words.EXHAUSTED, check=check_fit, vector=columnar.fit),
    Stage(name="in-use", word=words.EXHAUSTED, check=check_in_use, applies=in_use_applies,
          vector=vector_stage(check_in_use)),
)


class Funnels:
    """Per bundle, one funnel per distinct pod shape (PodFacts is the key: kube-scheduler's PreFilter state, made
    once per shape rather than per pod), so a Deployment's hundred pending replicas cost one funnel. `cache` False:
    one funnel per pod (the tests compare the two)."""

    def __init__(self, cluster: Cluster, *, cache: bool = True,
                 judge: Callable[[Stage, PodFacts, Cluster, np.ndarray], Judged] | None = None) -> None:
        self.cluster = cluster
        self.cache = cache
        self.judge = judge  # run_funnel's: None, each stage's vector form
        self._by_shape: dict[PodFacts, FunnelResult] = {}

    def of(self, spec: dict, pin: str, claims: Resolution | None = None, filters: PodFilters | None = None, *,
           own_key: str = "") -> FunnelResult:
        """The funnel of a pod of this spec; `own_key` is the pod itself among the nominated pods (never counted
        against itself). A pod with spec.nodeName skips the scheduler, and with it the pods nominated by preemption."""
        nominated = self.cluster.nominated
        counting = nominated.counting(priority_of(spec), own_key) if nominated is not None and not pin else ()
        facts = PodFacts.of(spec, pin, claims, filters, counting)
        funnel = self._by_shape.get(facts) if self.cache else None
        if funnel is None:
            funnel = self._by_shape[facts] = run_funnel(facts, self.cluster.nodes or [], self.cluster, self.judge)
        return funnel


def run_funnel(pod: PodFacts, nodes: list[NodeView], cluster: Cluster,
               judge: Callable[[Stage, PodFacts, Cluster, np.ndarray], Judged] | None = None) -> FunnelResult:
    """Stage by stage over the candidates, each by its vector form; `judge`: another way to judge a stage (the
    tests' reference judges it node by node)."""
    results: list[StageResult] = []
    candidates = np.arange(len(nodes), dtype=np.int32)  # node positions (model/columns.py `everything`)
    fit_at = None
    for stage in STAGES:
        if stage.applies is not None and not stage.applies(pod, cluster):
            continue
        if stage.name == "fit":
            fit_at = candidates
        judged = stage.vector(pod, cluster, candidates) if judge is None else judge(stage, pod, cluster, candidates)
        results.append(StageResult(name=stage.name, nodes_in=len(candidates), kept_at=judged.kept,
                                   groups=judged.removed, nodes=nodes))
        if not len(judged.kept):
            word = stage.word_for([g.reason for g in judged.removed]) if stage.word_for else stage.word
            return FunnelResult(facts=pod, stages=results, word=word, fit_at=fit_at)
        candidates = judged.kept
    return FunnelResult(facts=pod, stages=results, word=None, fit_at=fit_at)


# -- the funnel as one rule of the order ------------------------------------------------

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
    if funnel.word == words.NODE_UNHEALTHY:
        ev.update(node_health.evidence(facts, funnel.last))
    return Decision(word=funnel.word, reason=funnel_reason(funnel), action=funnel_action(funnel, c))


@prose.says("requests")
def _say_requests(value: object) -> list[str]:
    if not isinstance(value, dict) or not value:
        return []
    return ["The pod requests " + ", ".join(f"{q} {r}" for r, q in value.items()) + " in all."]


class FunnelFamily(Plain):
    """The core funnel: its rule is `decide`; once the answer is found, the evidence every pod of the shape shows
    alike: the stage table, exhausted's fit rows, the nodes one change away, the volume, inter-pod and spread
    filters, the vendor's other device names, and the scheduler's message rebuilt from the stages."""

    def evidence(self, answered: Answered) -> None:
        case, result, shape = answered.case, answered.case.funnel, answered.shape
        if result is None or shape is None:
            return
        makers = answered.makers
        if shape.stages is None:
            shape.stages = stages_as_data(result, case.cluster.nodes or [], answered.node_limit)
        answered.stages = shape.stages
        if answered.word == words.EXHAUSTED:
            if shape.fit is None:
                shape.fit = makers.fit(result, every=answered.node_limit is None)
            answered.fit = shape.fit
            if answered.action is None and answered.decision.word == words.EXHAUSTED:
                answered.action = makers.fit_action(shape.fit, result.facts, case.target.controller)
        if result.word is not None and answered.word == result.word:
            if shape.nearest is None:
                shape.nearest = makers.nearest(result.facts)
            case.evidence.update(shape.nearest)
        if result.facts.filters is not None:
            if shape.filters is None:
                shape.filters = makers.filters(result)
            case.evidence.update(shape.filters)
        if answered.decision.word in (words.RESOURCE_NAME_MISMATCH, words.NO_GPU_NODE):
            if shape.gpu_names is None:
                shape.gpu_names = makers.gpu_names(result)
            case.evidence.update(shape.gpu_names)

    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        """Any other word of a pod the scheduler judged: its message rebuilt from the funnel of the pod as the
        scheduler sees it (unpinned: a pod with spec.nodeName never met the scheduler)."""
        case, target = answered.case, answered.case.target
        if not (case.cluster.nodes and target.spec is not None and not target.node_name and answered.nodes_asked):
            return None
        result = (case.funnel if case.funnel is not None and not case.funnel.facts.pin
                  else case.funnel_of(target.spec, "", case.claims, case.filters))
        shape = shape_of(result)
        if not shape.rebuilt_done:
            shape.rebuilt = answered.makers.rebuilt(result.facts)
            shape.rebuilt_done = True
        return {"rebuilt": shape.rebuilt}


def _words() -> tuple[str, ...]:
    """The words its stages give: each stage's own, and the taint stage's and the advertised stage's finer ones."""
    finer = {"taints": (words.CORDONED, words.NODE_UNHEALTHY), "advertised": (words.RESOURCE_NAME_MISMATCH,)}
    return tuple(dict.fromkeys(word for s in STAGES for word in (*finer.get(s.name, ()), s.word)))


FAMILY: Family = FunnelFamily(name="funnel", kinds=(catalog.NODES, catalog.PODS), rules=(
    Rule(rows="22-33", words=_words(), decide=decide),))
