"""The next action for a pod the node funnel answers, with this pod's objects named (causes.md, action column,
its notes resolved): the selector pair no node has and the nodes nearest to it (`selector-mismatch`); the taint
and the nodes carrying it (`untolerated-taint`); the cordoned nodes (`cordoned`); the node's condition
(`node-unhealthy`); the nodes with allocatable 0 and the resource (`allocatable-zero`); the resource asked for
and the GPU-labelled nodes that do not advertise it (`no-gpu-node`); the name the nodes do advertise
(`resource-name-mismatch`); the inter-pod rule and the pods it counts (`pod-affinity`); the spread constraint and
the domain that lacks capacity (`topology-spread`); the claim and the volume or class that keeps its data from the
candidates (`volume-node-conflict`). A word this module cannot name objects for keeps the contract's
own action.

Made once per funnel, as its reason is (pods of one shape share a funnel): the last stage's removed nodes are
read, and for `selector-mismatch` the nodes the node index finds for each requirement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from analyzer import words
from analyzer.kube import BLOCKING_EFFECTS, NO_EXECUTE
from analyzer.model import gpu_labels as gl
from analyzer.model.matching import (HOSTNAME_LABEL, Taint, hostnames_required, is_cordon_taint, only_name, term_matches,
                                     toleration_text, untolerated)
from analyzer.model.node_conditions import CONDITION_TAINTS, is_condition_taint
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules.filter_actions import FILTER_COMPOSERS
from analyzer.rules.checks import PodFacts, is_cordoned
from analyzer.rules.funnel_result import FunnelResult, StageResult
from analyzer.rules.reason import Check, Removed
from analyzer.text import some_names, verb

NAMED = 3  # nodes named per group in an action; the rest are counted


def funnel_action(funnel: FunnelResult, cluster: Cluster) -> str | None:
    """The action for the funnel's word, made once per funnel; None: the word's own action from causes.md."""
    if funnel.action is None:
        compose = _COMPOSERS.get(funnel.word or "")
        funnel.action = (compose(funnel, cluster) if compose is not None else None) or ""
    return funnel.action or None


def _removed(stage: StageResult) -> list[NodeView]:
    return stage.removed_views()


def _names(nodes: list[str]) -> str:
    return some_names(nodes, NAMED)


# -- selector-mismatch -------------------------------------------------------------------------

_OPS = {"In": "in", "NotIn": "notin"}


def _expression(expr: dict) -> str:
    """A node-affinity requirement as kubectl prints a selector (metav1.FormatLabelSelector's words)."""
    key, op, values = str(expr.get("key", "")), str(expr.get("operator", "")), [str(v) for v in expr.get("values") or ()]
    if op in _OPS:
        return f"{key} {_OPS[op]} ({','.join(values)})"
    if op == "Exists":
        return f"label {key}"
    if op == "DoesNotExist":
        return f"no label {key}"
    if op in ("Gt", "Lt"):
        return f"{key} {'>' if op == 'Gt' else '<'} {values[0] if values else '?'}"
    return f"{key} {op} ({','.join(values)})"


@dataclass(frozen=True, kw_only=True)
class Requirement:
    """One thing the pod's selection asks of a node: its words, its test, the nodeSelector key it reads ("" for
    affinity), and the same as the node index takes it (a superset of the nodes that meet it, found fast)."""

    text: str
    test: Callable[[NodeView], bool]
    key: str = ""
    selector: tuple[tuple[str, str], ...] = ()
    terms: list[dict] | None = None
    pin: str = ""


def _requirements(facts: PodFacts) -> list[Requirement]:
    """Each nodeSelector pair, each expression of a single required node-affinity term (several terms are
    alternatives: one requirement), and the name of an attempt's spec.nodeName."""
    reqs = [Requirement(text=f"{k}={v}", test=lambda n, k=k, v=v: n.labels.get(k) == v, key=k, selector=((k, v),))
            for k, v in facts.node_selector]
    terms = facts.terms
    if terms is not None and len(terms) == 1:
        exprs = [{"matchExpressions": [e]} for e in terms[0].get("matchExpressions") or ()]
        exprs += [{"matchFields": [e]} for e in terms[0].get("matchFields") or ()]
        for one in exprs:
            field_name, (e,) = next(iter(one.items()))
            text = _expression(e).replace("metadata.name", "node name") if field_name == "matchFields" else _expression(e)
            reqs.append(Requirement(text=text, test=lambda n, one=one: term_matches(one, n.labels, n.name), terms=[one]))
        if not exprs:
            reqs.append(Requirement(text="an empty node-affinity term (it matches no node)", test=lambda n: False))
    elif terms is not None:
        reqs.append(Requirement(text=f"one of the {len(terms)} required node-affinity terms", terms=terms,
                                test=lambda n: any(term_matches(t, n.labels, n.name) for t in terms)))
    if facts.pin:
        reqs.append(Requirement(text=f"the name {facts.pin} (spec.nodeName)", test=lambda n: n.name == facts.pin,
                                pin=facts.pin))
    return reqs


def _meeting(req: Requirement, nodes: list[NodeView], cluster: Cluster) -> set[int]:
    """The positions of the nodes that meet one requirement: the node index narrows (a DaemonSet pod's node name
    is one look-up, not a pass over every node), the test decides."""
    index = cluster.node_index
    at = index.possible(req.selector, req.terms, req.pin) if index is not None else range(len(nodes))
    return {i for i in at if req.test(nodes[i])}


def _carried(key: str, nodes: list[NodeView]) -> str:
    values = sorted({n.labels[key] for n in nodes if key in n.labels})
    if not values:
        return f"no node carries {key}"
    return "nodes carry " + ", ".join(f"{key}={v}" for v in values[:NAMED]) + (
        f" (+{len(values) - NAMED} more values)" if len(values) > NAMED else "")


def _selector(funnel: FunnelResult, cluster: Cluster) -> str | None:
    facts, nodes = funnel.facts, funnel.stages[0].nodes
    reqs = _requirements(facts)
    if not reqs or not nodes:
        return None
    name = only_name(facts.terms)
    if name is not None and not facts.pin and not any(n.name == name for n in nodes):
        # Pinned by name to a node the bundle lacks (a DaemonSet's pod whose node went away): other nodes "nearest"
        # would be false leads; the node's absence is the fact.
        return (f"node {name}, the only one its required node affinity names (matchFields metadata.name), is not in "
                f"the bundle: if it is gone, delete the pod (a DaemonSet removes its own) or name another node; if not, "
                f"collect the bundle again")
    hosts = hostnames_required(facts.node_selector, facts.terms) if name is None and not facts.pin else None
    if hosts and not any(n.labels.get(HOSTNAME_LABEL) in hosts for n in nodes):
        # Held to hosts by the kubelet's hostname label, none in the bundle: labelling another node with that
        # hostname would be the false lead; the host's absence is the fact.
        which = (f"the host {next(iter(hosts))}" if len(hosts) == 1 else f"the hosts {_names(sorted(hosts))}")
        return (f"no node in the bundle is {which} (label {HOSTNAME_LABEL}) its nodeSelector/affinity names: if the "
                f"host is gone or renamed, point the pod at a node that exists (or drop that selector); if not, collect the bundle "
                f"again")
    met = [_meeting(r, nodes, cluster) for r in reqs]
    unmet = [f"{r.text} ({_carried(r.key, nodes)})" if r.key else r.text for r, m in zip(reqs, met) if not m]
    head = ("no node has " + "; none has ".join(unmet) if unmet
            else "no node has " + " and ".join(r.text for r in reqs) + " together")
    # Nearest: the most requirements met; among those, the nodes that offer what the pod asks for.
    counts = Counter(i for m in met for i in m)
    most = max(counts.values(), default=0)
    near = sorted(i for i, c in counts.items() if c == most) if most else list(range(len(nodes)))
    offering = [k for k in near if facts.extended and all(nodes[k].capacity.get(r, 0) > 0 for r in facts.extended)]
    near = offering or near

    def lacking(k: int) -> list[str]:
        return [r.text for r, m in zip(reqs, met) if k not in m]
    lacks = lacking(near[0])
    alike = [nodes[k].name for k in near if lacking(k) == lacks]
    only = "only " if len(reqs) > len(lacks) else ""
    return (f"fix the pod's nodeSelector/affinity, or label the node meant for it: {head}; nearest: "
            f"{_names(alike)}, lacking {only}{', '.join(lacks)}")


# -- the taint stage: untolerated-taint, cordoned, node-unhealthy --------------------------------

def _blocking(facts: PodFacts, node: NodeView) -> list[Taint]:
    effects = (NO_EXECUTE,) if facts.pin else BLOCKING_EFFECTS  # spec.nodeName: the kubelet heeds only NoExecute
    return [t for t in untolerated(node.taints, facts.tolerations, effects) if not is_cordon_taint(t)]


def _taints(funnel: FunnelResult, cluster: Cluster) -> str | None:
    facts, stage = funnel.facts, funnel.last
    by_taint: dict[Taint, list[str]] = {}
    unhealthy: dict[str, NodeView] = {}
    cordoned: list[str] = []
    for node in _removed(stage):
        for t in _blocking(facts, node):
            if is_condition_taint(t):
                unhealthy[node.name] = node
            else:
                by_taint.setdefault(t, []).append(node.name)
        cordon_taint = any(map(is_cordon_taint, untolerated(node.taints, facts.tolerations)))
        if not facts.pin and (is_cordoned(facts, node) or cordon_taint):
            cordoned.append(node.name)
    parts = []
    if by_taint:
        ranked = sorted(by_taint.items(), key=lambda kv: -len(kv[1]))
        shown = "; or ".join(f"{toleration_text(t)} ({_names(on)} {verb(on, 'carries', 'carry')} {t})"
                             for t, on in ranked[:NAMED])
        parts.append(f"add the toleration {shown} to the pod, or remove the taint from the node")
    if cordoned:
        parts.append(f"uncordon {_names(cordoned)} (kubectl uncordon)")
    if unhealthy:  # a condition taint: the condition is the fix, not a toleration
        parts.extend(_condition_repairs(facts, list(unhealthy.values())))
    device = _groups(stage, Check.DEVICE_TAINT)
    if device:  # a claim's devices: the DRA check's text names the device and its taint
        parts.append("add the toleration to the claim's request, or remove the device taint: " +
                     "; ".join(f"{_names([n.name for n in _at(stage, g)])}: {g.reason.text}" for g in device[:NAMED]))
    return "; or ".join(parts) if parts else None


def _groups(stage: StageResult, check: Check) -> list[Removed]:
    """The stage's removed groups failing `check` (a vector stage's many groups are never DRA's: none then)."""
    return [g for g in stage.groups if g.reason.check is check] if isinstance(stage.groups, list) else []


def _at(stage: StageResult, group: Removed) -> list[NodeView]:
    return [stage.nodes[i] for i in group.at.tolist()]


def _cordoned(funnel: FunnelResult, cluster: Cluster) -> str | None:
    names = [n.name for n in _removed(funnel.last)]
    if not names:
        return None
    return (f"uncordon {_names(names)} (kubectl uncordon {names[0]}) if the maintenance is over, or wait for it to end")


# What repairs each condition behind a condition taint (the node lifecycle controller's and the kubelet's taints,
# model/node_conditions.CONDITION_TAINTS); the taint goes when the condition does.
_REPAIR = {
    "DiskPressure": "free disk space (images, logs, emptyDir) on",
    "MemoryPressure": "free memory on",
    "PIDPressure": "free process IDs on",
    "NetworkUnavailable": "repair the network (CNI, routes) of",
    "Ready": "bring the kubelet back (its runtime, network or connection to the API server) on",
}


def _condition_repairs(facts: PodFacts, nodes: list[NodeView]) -> list[str]:
    """Per repair, the nodes it is for, each with its condition and since when."""
    effects = (NO_EXECUTE,) if facts.pin else BLOCKING_EFFECTS  # spec.nodeName: the kubelet heeds only NoExecute
    repairs: dict[str, dict[str, str]] = {}
    for node in nodes:
        for t in untolerated(node.taints, facts.tolerations, effects):
            kind = CONDITION_TAINTS.get(t.key)
            if kind is None:
                continue
            seen = next((c for c in node.conditions if c.type == kind), None) if kind else None
            said = (f"{seen.type}={seen.status or '?'}" + (f" since {seen.since}" if seen.since else "") if seen
                    else "out of service, set by an operator" if not kind else f"taint {t}")
            repair = _REPAIR.get(kind, "finish the recovery, then remove the out-of-service taint from")
            repairs.setdefault(repair, {}).setdefault(node.name, said)  # not-ready's two taints: one condition
    return [f"{repair} {_names([f'{n} ({said})' for n, said in on.items()])}" for repair, on in repairs.items()]


def _unhealthy(funnel: FunnelResult, cluster: Cluster) -> str | None:
    repairs = _condition_repairs(funnel.facts, _removed(funnel.last))
    return "; ".join(repairs) + "; a toleration is not the fix" if repairs else None


# -- what the node has: allocatable-zero, no-gpu-node, resource-name-mismatch -------------------

def _allocatable(funnel: FunnelResult, cluster: Cluster) -> str | None:
    facts = funnel.facts
    by_resource: dict[str, list[NodeView]] = {}
    for node in _removed(funnel.last):
        for r in facts.extended:
            if node.capacity.get(r, 0) > 0 and node.allocatable.get(r, 0) == 0:
                by_resource.setdefault(r, []).append(node)
    if not by_resource:
        return None
    # A device plugin's allocatable counts its healthy devices: capacity > 0 with allocatable 0 is every device
    # reported unhealthy (driver, GPU validation), which no change to the pod fixes.
    said = "; ".join(f"{_names([n.name for n in on])}: {r} allocatable 0 of capacity "
                     f"{', '.join(sorted({str(n.capacity[r]) for n in on}))}" for r, on in by_resource.items())
    return f"repair the node's GPU stack (driver, validation; its device plugin reports no healthy device): {said}"


def _advertised(funnel: FunnelResult, cluster: Cluster) -> str | None:
    facts = funnel.facts
    removed = _removed(funnel.last)
    asked = [r for r in facts.extended if cluster.config.is_accelerator(r)]
    parts = []
    if asked:
        gpu_labelled = [n.name for n in removed if not gl.cpu_node(n.capacity, n.labels, asked)]
        what = ", ".join(asked)
        if gpu_labelled:
            parts.append(f"restore the device plugin that advertises {what} on {_names(gpu_labelled)}: "
                         f"{verb(gpu_labelled, 'labelled as a GPU node, it advertises', 'labelled as GPU nodes, they advertise')}"
                         f" no {what}, and no candidate does")
        else:
            # A CPU node is what it is (gpu_labels.cpu_node): no device plugin to restore there.
            parts.append(f"add a node that has the GPU (or a node group that makes one): no candidate advertises {what}"
                         f" and none is labelled as a GPU node")
    dra = _groups(funnel.last, Check.NO_DEVICES)
    if dra:
        parts.append("restore the DRA driver that publishes the devices: " +
                     "; ".join(f"{_names([n.name for n in _at(funnel.last, g)])}: {g.reason.text}" for g in dra[:NAMED]))
    return "; ".join(parts) if parts else None


def _other_name(funnel: FunnelResult, cluster: Cluster) -> str | None:
    facts = funnel.facts
    offered: dict[tuple[str, str], list[str]] = {}
    for node in _removed(funnel.last):
        for r in facts.extended:
            if node.capacity.get(r, 0) > 0:
                continue
            for name, count in gl.siblings(r, node.capacity, cluster.config):
                offered.setdefault((r, name), []).append(f"{node.name}: {count}")
    if not offered:
        return None
    ranked = sorted(offered.items(), key=lambda kv: -len(kv[1]))
    asks = "; or ".join(f"ask for {name} instead of {r} (advertised by {_names(on)})" for (r, name), on in ranked[:NAMED])
    mig = any(name.startswith(gl.MIG_PREFIX) for (_, name) in offered)
    change = "the MIG configuration" if mig else "the device plugin's sharing configuration (renameByDefault)"
    return f"{asks}; or change {change}"


_COMPOSERS: dict[str, Callable[[FunnelResult, Cluster], str | None]] = {
    words.SELECTOR_MISMATCH: _selector,
    words.UNTOLERATED_TAINT: _taints,
    words.CORDONED: _cordoned,
    words.NODE_UNHEALTHY: _unhealthy,
    words.ALLOCATABLE_ZERO: _allocatable,
    words.NO_GPU_NODE: _advertised,
    words.RESOURCE_NAME_MISMATCH: _other_name,
    **FILTER_COMPOSERS,
}
