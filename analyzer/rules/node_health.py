"""`node-unhealthy` at the funnel's taint stage (causes.md; node-start.md): every remaining candidate is excluded
only by condition taints the pod does not tolerate (model/node_conditions.py). The word comes from the taint
stage's reasons (checks.check_policy gives Check.CONDITION); this module names what a person repairs: each node,
the condition behind its taint with its reason, message and since when.
"""

from __future__ import annotations

from analyzer import prose
from analyzer.kube import BLOCKING_EFFECTS, NO_EXECUTE
from analyzer.model.matching import untolerated
from analyzer.model.node_conditions import behind, is_condition_taint
from analyzer.model.nodes import NodeView
from analyzer.rules.checks import PodFacts
from analyzer.rules.funnel_result import StageResult
from analyzer.rules.reason import removed_positions

SHOWN = 20  # nodes listed in the evidence; the rest counted
NAMED = 3  # nodes named in the reason line


def condition_taints(pod: PodFacts, node: NodeView) -> list[str]:
    """The node's untolerated condition taints, each with the condition behind it, in words."""
    effects = (NO_EXECUTE,) if pod.pin else BLOCKING_EFFECTS  # spec.nodeName: the kubelet heeds only NoExecute
    blocking = untolerated(node.taints, pod.tolerations, effects)
    return [behind(t, node.conditions) for t in blocking if is_condition_taint(t)]


def _removed(stage: StageResult, limit: int) -> list[NodeView]:
    nodes = stage.nodes
    return [nodes[i] for i in sorted(removed_positions(stage.groups).tolist())[:limit]]


def reason(pod: PodFacts, stage: StageResult) -> str:
    shown = _removed(stage, NAMED)
    total = stage.nodes_in
    parts = "; ".join(f"{n.name}: {', '.join(condition_taints(pod, n))}" for n in shown)
    more = f"; and {total - len(shown)} more" if total > len(shown) else ""
    return (f"every candidate ({total}) is unhealthy, excluded only by condition taints the pod does not tolerate: "
            f"{parts}{more}; repair the node's condition (a toleration is not the fix)")


def evidence(pod: PodFacts, stage: StageResult) -> dict:
    shown = _removed(stage, SHOWN)
    out: dict = {"unhealthy_nodes": [{"node": n.name, "taints": condition_taints(pod, n),
                                      "conditions": [c.as_data() for c in n.conditions]} for n in shown]}
    if stage.nodes_in > len(shown):
        out["unhealthy_nodes_more"] = stage.nodes_in - len(shown)
    return out


@prose.says("unhealthy_nodes")
def _say_unhealthy(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    out = []
    for row in value:
        if isinstance(row, dict):
            taints = "; ".join(str(t) for t in row.get("taints") or ()) or "a condition taint"
            out.append(f"Node {row.get('node')} is unhealthy: {taints}.")
    return out


@prose.says("unhealthy_nodes_more")
def _say_more(value: object) -> list[str]:
    return [f"{value} more candidate nodes are unhealthy the same way."] if isinstance(value, int) and value else []
