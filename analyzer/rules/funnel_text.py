"""The funnel's answer in words: the reason line of the stage that left no node (with causes.md's sub-cases of
`exhausted`), and the stage table as data (-o json's "funnels", `why --explain`'s removed nodes). rules/funnel.py
runs the stages; this module only reads their results."""

from __future__ import annotations

import numpy as np

from analyzer import words
from analyzer.model.nodes import NodeView
from analyzer.model.quantity import format_units
from analyzer.rules import node_health
from analyzer.rules.funnel_result import FunnelResult, StageResult
from analyzer.rules.reason import Groups, Removed, group_sizes
from analyzer.text import some_names

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
    if funnel.word == words.NODE_UNHEALTHY:
        return node_health.reason(funnel.facts, last)
    head = _HEAD[last.name].format(n=last.nodes_in)
    if last.name == "selector":
        return head
    if last.name == "fit":
        # causes.md's sub-cases, said where a person meets the word first (the table's row): waiting cannot help a
        # pod larger than every candidate even empty, and a fragmented request waits for one node, not for capacity.
        large, fragmented = fit_sub_case(funnel)
        if large:
            head += f", even empty: it asks more {', '.join(large)} than any has (too large)"
        elif fragmented:
            head += f", though together they have {fragmented} free (fragmented)"
    nodes = last.nodes
    groups = text_groups(last)
    sizes = group_sizes(groups)
    parts = []
    for k in sorted(range(len(groups)), key=lambda k: -sizes[k])[:3]:
        g = groups[k]
        parts.append(f"{some_names([nodes[i].name for i in g.at[:3].tolist()], total=len(g.at))}: {g.reason.text}")
    return head + ": " + "; ".join(parts)


def fit_sub_case(funnel: FunnelResult) -> tuple[list[str], str]:
    """causes.md's sub-cases of `exhausted` at the fit stage, from its rows kept with the shape
    (columnar.shortfalls): the resources asked beyond every candidate even empty (too large), else the free units of
    a resource short on every candidate that would cover the request summed over them ("4 nvidia.com/gpu":
    fragmented), else ""; evidence/fit.py names the same in the fit table."""
    kept = funnel.facts.state.fit_rows
    if funnel.fit_at is None or kept is None or kept[0] is not funnel.fit_at:
        return [], ""
    large, fragmented = [], ""
    for r, want, alloc, free, short in kept[1]:
        if not len(alloc) or not short.all():
            continue
        case = sub_case(want, alloc, free)
        if case == TOO_LARGE:
            large.append(r)
        elif case == FRAGMENTED and not fragmented:
            fragmented = f"{format_units(r, int(np.maximum(free, 0).astype(object).sum()))} {r}"
    return large, fragmented


TOO_LARGE, FRAGMENTED = "too large", "fragmented"


def sub_case(want: int, alloc: np.ndarray, free: np.ndarray) -> str | None:
    """causes.md's sub-cases of `exhausted` for one resource short on every candidate: more than any candidate's
    allocatable even empty (too large: waiting cannot help), else enough free units summed over the candidates
    though on no one node (fragmented), else neither. Sums in Python ints: 5,000 nodes' bytes stay exact."""
    if int(alloc.max()) < want:
        return TOO_LARGE
    return FRAGMENTED if int(np.maximum(free, 0).astype(object).sum()) >= want else None


def text_groups(stage: StageResult) -> list[Removed] | Groups:
    """The stage's removed nodes grouped by their reason's text, groups in the order of their first node. Groups
    whose texts are known to be distinct stay as they are (their Reasons still unmade)."""
    if isinstance(stage.groups, Groups) or all(g.distinct_text for g in stage.groups):
        return stage.groups
    by_text: dict[str, list[Removed]] = {}
    for g in stage.groups:
        by_text.setdefault(g.reason.text, []).append(g)
    out = [parts[0] if len(parts) == 1 else Removed(np.sort(np.concatenate([g.at for g in parts])), parts[0].reason)
           for parts in by_text.values()]
    return sorted(out, key=lambda g: int(g.at[0]))


GROUP_LIMIT = 20  # reasons listed per stage in `analyze -o json` (the rest counted); why -o json lists every one


def stages_as_data(funnel: FunnelResult, nodes: list[NodeView], limit: int | None) -> list[dict]:
    """Stage by stage; removed nodes grouped by their exact reason: a count, at most `limit` names (None: all)
    and how many more. With a limit, at most GROUP_LIMIT reasons per stage, the most common (the others are
    counted in `removed_more`): 5,000 nodes short of memory by 5,000 different amounts are not 5,000 groups."""
    out = []
    for st in funnel.stages:
        groups = text_groups(st)
        sizes = group_sizes(groups)
        listed = range(len(groups))
        if limit is not None and len(groups) > GROUP_LIMIT:
            listed = sorted(sorted(range(len(groups)), key=lambda k: (-sizes[k], k))[:GROUP_LIMIT])
        removed = []
        for g in (groups[k] for k in listed):
            shown = g.at if limit is None else g.at[:limit]
            removed.append({"reason": g.reason.text, "count": len(g.at), "nodes": [nodes[i].name for i in shown.tolist()],
                            "more": len(g.at) - len(shown)})
        stage = {"stage": st.name, "nodes_in": st.nodes_in, "nodes_out": st.nodes_out, "removed": removed}
        if len(listed) < len(groups):
            stage["removed_more"] = {"reasons": len(groups) - len(listed),
                                     "count": sum(sizes) - sum(sizes[k] for k in listed)}
        out.append(stage)
    return out
