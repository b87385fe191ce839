"""Evidence for `resource-name-mismatch` and `no-gpu-node` (node-start.md): the names the candidates advertise the vendor's devices under, with
the nodes offering each and their free counts, and what GPU feature discovery and the MIG manager say in the
nodes' labels. A node whose MIG layout is changing (`nvidia.com/mig.config.state` not `success`) comes first."""

from __future__ import annotations

import orjson

from analyzer import prose
from analyzer.model import gpu_labels as gl
from analyzer.model.views import Cluster
from analyzer.rules.funnel_result import FunnelResult

NODES_SHOWN = 20


def _candidates(funnel: FunnelResult) -> list:
    """The nodes the advertised stage judged (the selector's survivors)."""
    stage = next((st for st in funnel.stages if st.name == "advertised"), None)
    if stage is None:
        return []
    return stage.judged()


def gpu_names(funnel: FunnelResult, cluster: Cluster) -> dict:
    nodes = _candidates(funnel)
    asked = [r for r in funnel.facts.extended if cluster.config.is_accelerator(r)]
    out: dict = {}
    offers: dict[str, list[dict]] = {}
    cols = cluster.columns
    by_kind: dict[int, list[tuple[str, int]]] = {}  # the siblings read only status.capacity: once per capacity kind
    for node in nodes:
        used = cluster.usage.get(node.name) or {}
        kind = int(cols.capacity_kind[cols.position[node.name]]) if cols is not None else -1
        offered = by_kind.get(kind) if kind >= 0 else None
        if offered is None:
            offered = [sib for r in asked for sib in gl.siblings(r, node.capacity, cluster.config)]
            if kind >= 0:
                by_kind[kind] = offered
        if offered:
            for name, count in offered:
                alloc = node.allocatable.get(name, 0)
                offers.setdefault(name, []).append({"node": node.name, "capacity": count, "allocatable": alloc,
                                                    "free": max(0, alloc - used.get(name, 0))})
    if offers:
        out["other_names"] = [{"resource": name, "nodes": rows[:NODES_SHOWN], "more": max(0, len(rows) - NODES_SHOWN),
                               "free_total": sum(r["free"] for r in rows)}
                              for name, rows in sorted(offers.items(), key=lambda kv: -sum(r["free"] for r in kv[1]))]
    changing = []
    groups: dict[bytes, dict] = {}
    for node in nodes:
        labels = gl.gfd_labels(node.labels)
        state = gl.mig_unsettled(node.labels)
        if state is not None:
            changing.append(f"{node.name} ({gl.MIG_CONFIG_STATE}={state}"
                            + (f", {gl.MIG_CONFIG}={node.labels[gl.MIG_CONFIG]}" if gl.MIG_CONFIG in node.labels else "")
                            + "): wait for the MIG manager, its layout is changing")
        if labels:
            group = groups.setdefault(orjson.dumps(labels), {"labels": labels, "nodes": [], "count": 0})
            group["count"] += 1
            if len(group["nodes"]) < NODES_SHOWN:
                group["nodes"].append(node.name)
    if changing:
        out["mig_reconfiguring"] = changing[:NODES_SHOWN]
    if groups:
        # Groups with a changing MIG layout first, then the largest.
        out["gpu_labels"] = sorted(groups.values(), key=lambda g: (gl.mig_unsettled(g["labels"]) is None, -g["count"]))
    return out


@prose.says("other_names")
def _other_names_says(value: object) -> list[str]:
    out = []
    for o in value if isinstance(value, list) else []:
        if not isinstance(o, dict):
            continue
        nodes = ", ".join(f"{n.get('node')} ({n.get('free')} free of {n.get('allocatable')})"
                          for n in o.get("nodes") or () if isinstance(n, dict))
        more = f" and {o['more']} more nodes" if o.get("more") else ""
        out.append(f"The nodes advertise {o.get('resource')} instead, {o.get('free_total')} free in all: {nodes}{more}.")
    return out


@prose.says("gpu_labels")
def _gpu_labels_says(value: object) -> list[str]:
    out = []
    for g in value if isinstance(value, list) else []:
        if not isinstance(g, dict):
            continue
        labels = ", ".join(f"{k}={v}" for k, v in (g.get("labels") or {}).items())
        count = g.get("count") or 0
        shown = ", ".join(map(str, g.get("nodes") or ()))
        more = f" and {count - len(g.get('nodes') or ())} more" if count > len(g.get("nodes") or ()) else ""
        out.append(f"{count} node(s) ({shown}{more}) carry the GPU feature discovery labels {labels}.")
    return out


@prose.says("mig_reconfiguring")
def _mig_says(value: object) -> list[str]:
    return [f"{x}." for x in value] if isinstance(value, list) else []
