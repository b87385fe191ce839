"""The node funnel (causes.md rows 6-11): one stage, one check, one reason.

Like the kube-scheduler's filter plugins, each check looks at one node and
says pass (None) or fail with a Reason. A stage keeps the nodes that pass;
the first stage that keeps none names the cause. Stages are data, so the
evidence prints each one: name, nodes in, nodes out, every removed node and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from analyzer import words
from analyzer.model.matching import (CORDON_TAINT, Toleration, is_cordon_taint, selector_matches, tolerated, tolerations_of,
                               untolerated)
from analyzer.model.views import Cluster, NodeView
from analyzer.model.podspec import effective_requests, extended_requested, required_terms
from analyzer.model.quantity import format_units


@dataclass(frozen=True, slots=True)
class Reason:
    code: str  # selector | node-name | cordon | taint | not-advertised | zero-allocatable | insufficient (not words: words.py names causes)
    text: str


@dataclass
class PodFacts:
    """The scheduling-relevant part of one pod spec, parsed once."""

    node_selector: dict[str, str]
    terms: list[dict] | None
    tolerations: tuple[Toleration, ...]
    requests: dict[str, int]
    extended: list[str]
    pin: str = ""  # spec.nodeName of an attempt: the scheduler is bypassed, only that node counts

    @classmethod
    def of(cls, spec: dict, pin: str = "") -> "PodFacts":
        terms = required_terms(spec)
        has_required = bool(((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))
        requests = effective_requests(spec)
        return cls(dict(spec.get("nodeSelector") or {}), terms if has_required else None, tolerations_of(spec), requests,
                   extended_requested(requests), pin)


# -- the checks ------------------------------------------------------------------

def check_selector(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.pin and node.name != pod.pin:
        return Reason("node-name", f"spec.nodeName is {pod.pin!r}")
    if selector_matches(pod.node_selector, pod.terms, node.labels, node.name):
        return None
    return Reason("selector", "labels do not satisfy nodeSelector / required node affinity")


def check_taints(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.pin:
        # spec.nodeName bypasses the scheduler: the kubelet admits it ignoring the cordon and
        # NoSchedule taints, and rejects only untolerated NoExecute taints (kubelet lifecycle predicate).
        blocking = untolerated(node.taints, pod.tolerations, ("NoExecute",))
        return Reason("taint", "untolerated taint " + ", ".join(map(str, blocking))) if blocking else None
    blocking = untolerated(node.taints, pod.tolerations)
    cordon = (node.unschedulable and not tolerated(CORDON_TAINT, pod.tolerations)) or any(map(is_cordon_taint, blocking))
    others = [t for t in blocking if not is_cordon_taint(t)]
    if others:
        text = "untolerated taint " + ", ".join(str(t) for t in others)
        return Reason("taint", text + (" (and cordoned)" if cordon else ""))
    if cordon:
        return Reason("cordon", "cordoned (spec.unschedulable), no toleration for node.kubernetes.io/unschedulable:NoSchedule")
    return None


def check_advertised(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    # Capacity 0 counts as not advertised: when a device plugin goes away the kubelet keeps the
    # resource name with capacity 0, and the next action is the same: restore the device plugin.
    missing = [r for r in pod.extended if node.capacity.get(r, 0) <= 0]
    if missing:
        texts = [f"{r} capacity 0 (device plugin gone)" if r in node.capacity else f"no {r} in status.capacity" for r in missing]
        return Reason("not-advertised", ", ".join(texts))
    return None


def check_allocatable(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    zero = [r for r in pod.extended if node.allocatable.get(r, 0) == 0]
    if zero:
        return Reason("zero-allocatable", ", ".join(f"{r}: capacity {node.capacity.get(r, 0)}, allocatable 0" for r in zero))
    return None


def shortages(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[tuple[str, int, int, int, int]]:
    """(resource, allocatable, used, free, requested) for every resource the pod is short of on the node."""
    used = cluster.usage.get(node.name) or {}
    out = []
    for r in cluster.config.resource_order(list(pod.requests) + ["pods"]):
        want = 1 if r == "pods" else pod.requests.get(r, 0)
        if want <= 0:
            continue  # the scheduler checks only what the pod requests
        alloc = node.allocatable.get(r, 0)
        free = alloc - used.get(r, 0)
        if free < want:
            out.append((r, alloc, used.get(r, 0), free, want))
    return out


def check_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    short = shortages(pod, node, cluster)
    if not short:
        return None
    return Reason("insufficient", "; ".join(
        f"{r}: {format_units(r, free)} free of {format_units(r, alloc)} allocatable, {format_units(r, want)} requested"
        for r, alloc, _used, free, want in short))


def _taint_word(removed: list[Reason]) -> str:
    return words.CORDONED if all(r.code == "cordon" for r in removed) else words.UNTOLERATED_TAINT


@dataclass(frozen=True)
class Stage:
    name: str
    word: str
    check: Callable[[PodFacts, NodeView, Cluster], Reason | None]
    word_for: Callable[[list[Reason]], str] | None = None


STAGES: tuple[Stage, ...] = (
    Stage("selector", words.SELECTOR_MISMATCH, check_selector),
    Stage("taints", words.UNTOLERATED_TAINT, check_taints, _taint_word),
    Stage("advertised", words.NO_GPU_NODE, check_advertised),
    Stage("allocatable", words.ALLOCATABLE_ZERO, check_allocatable),
    Stage("fit", words.EXHAUSTED, check_fit),
)


@dataclass
class StageResult:
    name: str
    nodes_in: int
    kept: list[NodeView]
    removed: list[tuple[str, Reason]]

    @property
    def nodes_out(self) -> int:
        return len(self.kept)


@dataclass
class FunnelResult:
    stages: list[StageResult]
    word: str | None  # the cause word when a stage emptied the candidates, else None (some node fits)
    fit_candidates: list[NodeView] = field(default_factory=list)  # the nodes that entered the fit stage
    _json: list[dict] | None = field(default=None, repr=False, compare=False)

    @property
    def fits(self) -> list[NodeView]:
        return self.stages[-1].kept if self.word is None else []

    def as_json(self) -> list[dict]:
        """Stage by stage; removed nodes grouped by their exact reason (every node named once).
        Built once per funnel: pods of one shape share it."""
        if self._json is None:
            stages = []
            for st in self.stages:
                groups: dict[str, list[str]] = {}
                for node, reason in st.removed:
                    groups.setdefault(reason.text, []).append(node)
                stages.append({"stage": st.name, "nodes_in": st.nodes_in, "nodes_out": st.nodes_out,
                               "removed": [{"reason": text, "nodes": nodes} for text, nodes in groups.items()]})
            self._json = stages
        return self._json



def run_funnel(pod: PodFacts, nodes: list[NodeView], cluster: Cluster) -> FunnelResult:
    candidates = nodes
    results: list[StageResult] = []
    fit_candidates: list[NodeView] = []
    for stage in STAGES:
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
        results.append(StageResult(stage.name, len(candidates), kept, removed))
        if not kept:
            word = stage.word_for([r for _, r in removed]) if stage.word_for else stage.word
            return FunnelResult(results, word, fit_candidates)
        candidates = kept
    return FunnelResult(results, None, fit_candidates)
