"""The node funnel (causes.md v2, rows 8-14): one stage, one check, one reason.

Like the kube-scheduler's filter plugins, each check looks at one node and
says pass (None) or fail with a Reason. A Reason carries the scheduler's own
fixed sentence(s) for that failure, so the scheduler's message can be rebuilt
from the same checks (evidence/scheduler_message.py) instead of a second copy
of every predicate.

The stages go from what is most fixed about a node to what changes by the
minute: what the pod selects, what the node has at all, policy (cordon,
taints), health (allocatable), load (fit). A stage keeps the nodes that pass;
the first stage that keeps none names the cause. Stages are data, so the
evidence prints each one: name, nodes in, nodes out, every removed node and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

import orjson

from analyzer import words
from analyzer.model.matching import (CORDON_TAINT, Taint, Toleration, is_cordon_taint, selector_matches, tolerated,
                                     tolerations_of, untolerated)
from analyzer.model.podspec import effective_requests, extended_requested, required_terms
from analyzer.model.quantity import format_units
from analyzer.model.views import Cluster, NodeView
from analyzer.model.dra.outcomes import Resolution
from analyzer.rules import dra
from analyzer.rules.case import Case, Decision, Reason

# The scheduler's fixed reason strings (pkg/scheduler/framework/plugins/*: ErrReason…).
UNSCHEDULABLE = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
NODE_NAME = "node(s) didn't match the requested node name"  # nodename.ErrReason
AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
TAINTS_NEW = "node(s) had untolerated taint(s)"  # tainttoleration, since v1.34 (kubernetes#134740)
TOO_MANY_PODS = "Too many pods"  # noderesources: the pods count


def insufficient(resource: str) -> str:
    return TOO_MANY_PODS if resource == "pods" else f"Insufficient {resource}"


def taint_reason(taint: Taint, new_style: bool) -> str:
    return TAINTS_NEW if new_style else f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


class UnreadableSpec(ValueError):
    """A spec that passed the schema but whose selector, affinity or tolerations have no usable form."""


@dataclass(frozen=True, kw_only=True)
class PodFacts:
    """The scheduling-relevant part of one pod spec, parsed once. Its equality is the funnel cache's key:
    every field that a check reads is part of it, so adding a fact cannot silently share a funnel between
    different pods. Derived fields (compare=False) are computed from the identity fields."""

    node_selector: tuple[tuple[str, str], ...]
    affinity: bytes  # canonical JSON of the required node-affinity terms ("null" when there are none)
    tolerations: tuple[Toleration, ...]
    requests: tuple[tuple[str, int], ...]
    pin: str = ""  # spec.nodeName of an attempt: the scheduler is bypassed, only that node counts
    claims_shape: int = -1  # pods whose resource claims have the same shape share a funnel (model/dra)
    terms: list[dict] | None = field(default=None, compare=False)
    claims: Resolution | None = field(default=None, compare=False)
    wants: dict[str, int] = field(default_factory=dict, compare=False)
    extended: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, spec: dict, pin: str = "", claims: Resolution | None = None) -> "PodFacts":
        has_required = bool(((spec.get("affinity") or {}).get("nodeAffinity") or {})
                            .get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms = required_terms(spec) if has_required else None
        try:
            affinity = orjson.dumps(terms, option=orjson.OPT_SORT_KEYS)
            selector = tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items()))
        except (orjson.JSONEncodeError, TypeError) as exc:  # nesting beyond any real spec, or no JSON form
            raise UnreadableSpec(f"the spec's selector or affinity cannot be read ({exc})") from None
        requests = effective_requests(spec)
        return cls(node_selector=selector, affinity=affinity, tolerations=tolerations_of(spec),
                   requests=tuple(sorted(requests.items())), pin=pin, terms=terms, wants=requests,
                   extended=tuple(extended_requested(requests)), claims=claims,
                   claims_shape=claims.shape_id if claims is not None else -1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Shortage:
    resource: str
    allocatable: int
    used: int
    free: int
    requested: int


# -- the checks ------------------------------------------------------------------

def check_node_name(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.pin and node.name != pod.pin:
        return Reason(check="node-name", text=f"spec.nodeName is {pod.pin!r}", scheduler=(NODE_NAME,))
    return None


def check_affinity(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if selector_matches(dict(pod.node_selector), pod.terms, node.labels, node.name):
        return None
    return Reason(check="selector", text="labels do not satisfy nodeSelector / required node affinity",
                  scheduler=(AFFINITY,))


def check_selector(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return check_node_name(pod, node, cluster) or check_affinity(pod, node, cluster)


def is_cordoned(pod: PodFacts, node: NodeView) -> bool:
    """spec.unschedulable, not tolerated (NodeUnschedulable filter)."""
    return node.unschedulable and not tolerated(CORDON_TAINT, pod.tolerations)


def check_cordon(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if is_cordoned(pod, node):
        return Reason(check="cordon", text="cordoned (spec.unschedulable)", scheduler=(UNSCHEDULABLE,))
    return None


def check_taint(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The TaintToleration filter alone (the cordon taint counts here, as in the scheduler)."""
    blocking = untolerated(node.taints, pod.tolerations)
    if blocking:
        return Reason(check="taint", text="untolerated taint " + ", ".join(map(str, blocking)),
                      scheduler=(taint_reason(blocking[0], cluster.new_taint_wording),))
    return None


def check_policy(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """Rows 11-12: cordon and taints as one stage; a node that is only cordoned counts toward `cordoned`."""
    if pod.pin:
        # spec.nodeName bypasses the scheduler: the kubelet admits it ignoring the cordon and
        # NoSchedule taints, and rejects only untolerated NoExecute taints (kubelet lifecycle predicate).
        blocking = untolerated(node.taints, pod.tolerations, ("NoExecute",))
        return Reason(check="taint", text="untolerated taint " + ", ".join(map(str, blocking))) if blocking else None
    blocking = untolerated(node.taints, pod.tolerations)
    cordon = is_cordoned(pod, node) or any(map(is_cordon_taint, blocking))
    others = [t for t in blocking if not is_cordon_taint(t)]
    if others:
        text = "untolerated taint " + ", ".join(str(t) for t in others)
        return Reason(check="taint", text=text + (" (and cordoned)" if cordon else ""))
    if cordon:
        return Reason(check="cordon",
                      text="cordoned (spec.unschedulable), no toleration for node.kubernetes.io/unschedulable:NoSchedule")
    return dra.device_taints(pod.claims, node, cluster)


def check_advertised(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    # Capacity 0 counts as not advertised: when a device plugin goes away the kubelet keeps the
    # resource name with capacity 0, and the next action is the same: restore the device plugin.
    missing = [r for r in pod.extended if node.capacity.get(r, 0) <= 0 and not _served_by_dra(r, node, cluster)]
    if missing:
        texts = [f"{r} capacity 0 (device plugin gone)" if r in node.capacity else f"no {r} in status.capacity"
                 for r in missing]
        return Reason(check="not-advertised", text=", ".join(texts))
    return dra.no_devices(pod.claims, node, cluster)


def _served_by_dra(resource: str, node: NodeView, cluster: Cluster) -> bool:
    """An extended resource a DeviceClass serves on a node that does not advertise it (dra.md)."""
    offer = dra.extended_offer(resource, node, cluster) if node.allocatable.get(resource, 0) == 0 else None
    return offer is not None and offer.offered > 0


def check_device_selectors(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    return dra.device_selectors(pod.claims, node, cluster)


def check_allocatable(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    zero = [r for r in pod.extended if node.allocatable.get(r, 0) == 0 and not _served_by_dra(r, node, cluster)]
    if zero:
        return Reason(check="zero-allocatable",
                      text=", ".join(f"{r}: capacity {node.capacity.get(r, 0)}, allocatable 0" for r in zero))
    return None


def shortages(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Shortage]:
    """Every resource the pod is short of on the node (NodeResourcesFit), accelerators first."""
    used = cluster.usage.get(node.name) or {}
    out = []
    for r in cluster.config.resource_order(list(pod.wants) + ["pods"]):
        want = 1 if r == "pods" else pod.wants.get(r, 0)
        if want <= 0:
            continue  # the scheduler checks only what the pod requests
        alloc, held, _ = available(pod, node, cluster, r, used)
        free = alloc - held
        if free < want:
            out.append(Shortage(resource=r, allocatable=alloc, used=held, free=free, requested=want))
    return out


def available(pod: PodFacts, node: NodeView, cluster: Cluster, resource: str,
              used: dict[str, int]) -> tuple[int, int, str | None]:
    """(allocatable, in use, the DeviceClass serving it or None) of one resource on one node. An extended
    resource the node does not advertise but a DeviceClass serves counts that class's devices (dra.md)."""
    alloc = node.allocatable.get(resource, 0)
    offer = dra.extended_offer(resource, node, cluster) if alloc == 0 and resource in pod.extended else None
    if offer is not None:
        return offer.offered, offer.offered - offer.free, offer.device_class
    return alloc, used.get(resource, 0), None


def check_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    short = shortages(pod, node, cluster)
    if not short:
        return dra.devices_free(pod.claims, node, cluster)
    return Reason(check="fit", text="; ".join(
        f"{s.resource}: {format_units(s.resource, s.free)} free of {format_units(s.resource, s.allocatable)} "
        f"allocatable, {format_units(s.resource, s.requested)} requested" for s in short),
        scheduler=tuple(insufficient(s.resource) for s in short))


# The scheduler's filters in its own order; each node reports only its first failure
# (framework/runtime: the default plugin order). Used to rebuild its message.
def check_claims(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """The scheduler's DynamicResources filter: any device step that fails on this node."""
    for check in (dra.no_devices, dra.device_selectors, dra.device_taints, dra.devices_free):
        reason = check(pod.claims, node, cluster)
        if reason is not None:
            return reason
    return None


SCHEDULER_FILTERS: tuple[Callable[[PodFacts, NodeView, Cluster], Reason | None], ...] = (
    check_cordon, check_node_name, check_taint, check_affinity, check_fit, check_claims,
)


def _policy_word(removed: list[Reason]) -> str:
    return words.CORDONED if all(r.check == "cordon" for r in removed) else words.UNTOLERATED_TAINT


@dataclass(frozen=True, kw_only=True)
class Stage:
    name: str
    word: str
    check: Callable[[PodFacts, NodeView, Cluster], Reason | None]
    word_for: Callable[[list[Reason]], str] | None = None


# causes.md v2: what the pod selects (8), what the node has (9, 10), policy (11, 12), health (13), load (14).
STAGES: tuple[Stage, ...] = (
    Stage(name="selector", word=words.SELECTOR_MISMATCH, check=check_selector),
    Stage(name="advertised", word=words.NO_GPU_NODE, check=check_advertised),
    Stage(name="device-selectors", word=words.DEVICE_SELECTOR_MISMATCH, check=check_device_selectors),
    Stage(name="taints", word=words.UNTOLERATED_TAINT, check=check_policy, word_for=_policy_word),
    Stage(name="allocatable", word=words.ALLOCATABLE_ZERO, check=check_allocatable),
    Stage(name="fit", word=words.EXHAUSTED, check=check_fit),
)


@dataclass(kw_only=True)
class StageResult:
    name: str
    nodes_in: int
    kept: list[NodeView]
    removed: list[tuple[str, Reason]]  # each removed node judged one by one
    # The selector stage only: every node the index rules out (not in `possible`) is removed for `bulk`,
    # without a Reason object per node (5,000 pinned DaemonSet pods × 5,000 nodes would be 25 million).
    bulk: Reason | None = None
    possible: frozenset[int] = frozenset()

    @property
    def nodes_out(self) -> int:
        return len(self.kept)

    def removed_nodes(self, nodes: list[NodeView]) -> Iterator[tuple[str, Reason]]:
        """Every removed node with its reason, in the order of nodes.json."""
        if self.bulk is None:
            yield from self.removed
            return
        explicit = dict(self.removed)
        for i, node in enumerate(nodes):
            if i not in self.possible:
                yield node.name, self.bulk
            elif node.name in explicit:
                yield node.name, explicit[node.name]


@dataclass(kw_only=True)
class FunnelResult:
    facts: PodFacts
    stages: list[StageResult]
    word: str | None  # the cause word when a stage emptied the candidates, else None (some node fits)
    fit_candidates: list[NodeView] = field(default_factory=list)  # the nodes that entered the fit stage

    @property
    def fits(self) -> list[NodeView]:
        return self.stages[-1].kept if self.word is None else []

    @property
    def last(self) -> StageResult:
        return self.stages[-1]


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
        bulk = (Reason(check="node-name", text=f"spec.nodeName is {pod.pin!r}", scheduler=(NODE_NAME,)) if pod.pin
                else Reason(check="selector", text="labels do not satisfy nodeSelector / required node affinity",
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
}


def _names(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def funnel_reason(funnel: FunnelResult) -> str:
    last = funnel.last
    head = _HEAD[last.name].format(n=last.nodes_in)
    if last.name == "selector":
        return head
    by_reason: dict[str, list[str]] = {}
    for node, reason in last.removed:
        by_reason.setdefault(reason.text, []).append(node)
    parts = [f"{_names(nodes)}: {text}" for text, nodes in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))]
    return head + ": " + "; ".join(parts[:3])


def stages_as_data(funnel: FunnelResult, nodes: list[NodeView], limit: int | None) -> list[dict]:
    """Stage by stage; removed nodes grouped by their exact reason: a count, at most `limit` names (None: all)
    and how many more. The selector stage's bulk group is counted without naming every node: a pod pinned to
    one node of 5,000 costs the names shown, not 4,999."""
    out = []
    for st in funnel.stages:
        counts: dict[str, int] = {}
        names: dict[str, list[str]] = {}
        for node, reason in st.removed:
            counts[reason.text] = counts.get(reason.text, 0) + 1
        if st.bulk is not None:
            counts[st.bulk.text] = counts.get(st.bulk.text, 0) + len(nodes) - len(st.possible)
        full = [text for text, n in counts.items() if limit is None or len(names.get(text, ())) < min(n, limit)]
        if full:
            for node, reason in st.removed_nodes(nodes):
                group = names.setdefault(reason.text, [])
                if limit is None or len(group) < limit:
                    group.append(node)
                    if limit is not None and all(len(names.get(t, ())) >= min(counts[t], limit) for t in counts):
                        break
        out.append({"stage": st.name, "nodes_in": st.nodes_in, "nodes_out": st.nodes_out,
                    "removed": [{"reason": text, "count": n, "nodes": names.get(text, []),
                                 "more": n - len(names.get(text, []))}
                                for text, n in sorted(counts.items(), key=lambda kv: _first_seen(kv[0], names))]})
    return out


def _first_seen(text: str, names: dict[str, list[str]]) -> int:
    order = list(names)
    return order.index(text) if text in order else len(order)


def decide(case: Case) -> Decision | None:
    c, t, ev = case.cluster, case.target, case.evidence
    if c.nodes is None or not c.nodes:
        ev["missing"] = "nodes.json"
        why = (f"cannot run the node funnel: {c.why_missing('nodes')}" if c.nodes is None
               else "nodes.json lists no usable node: nothing to judge the pod against")
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=why)
    funnel = case.funnel = case.funnel_of(case.spec or {}, "" if t.created else t.node_name, case.claims)
    facts = funnel.facts
    ev["requests"] = {r: format_units(r, v) for r, v in facts.requests if v}
    if funnel.word is None:
        return None
    relevant = [n for n in c.node_problems if n.labels is None or n.name is None
                or (selector_matches(dict(facts.node_selector), facts.terms, n.labels, n.name)
                    and (not facts.pin or n.name == facts.pin))]
    if relevant:
        # An invalid node is out of the funnel; its labels say it might have taken the pod.
        ev["missing"] = "nodes.json"
        ev["invalid_nodes"] = [n.finding for n in relevant[:20]]
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"the funnel says {funnel.word}, but {len(relevant)} invalid node(s) it might select "
                               f"could not be judged: {relevant[0].finding}")
    return Decision(word=funnel.word, reason=funnel_reason(funnel))
