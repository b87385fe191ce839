"""`generate_bundle.py --kueue`, topology-aware scheduling (scripts/generate_kueue.py writes the rest): the GPU
pools' nodes by block and rack, Topology gpu-topology (block, rack, hostname) that flavor h100-tas names, and the
QuotaReserved message Kueue v0.19 writes for a pod set no rack holds (notFitMessage,
pkg/cache/scheduler/tas_flavor_snapshot.go), counted from the nodes as the generator filled them and as nodes.json
says they are (Ready, schedulable, their taints: what another option did to them counts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.bundle.catalog import BY_NAME
from analyzer.model.matching import Taint, tolerated, tolerations_of
from bundlegen.common import GPU, ts
from bundlegen.kueue import BLOCK, RACK, RACK_SIZE, RACKS_PER_BLOCK

if TYPE_CHECKING:
    from bundlegen.generator import Generator

TOPOLOGY, TAS_FLAVOR, HOSTNAME = "gpu-topology", "h100-tas", "kubernetes.io/hostname"
TAS_LABELS = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb", "cloud.google.com/gke-nodepool": "h100-pool"}


def racks(gen: Generator) -> dict[str, tuple[str, str]]:
    """node -> (block, rack): each GPU pool's nodes in their order, RACK_SIZE a rack."""
    out = {}
    for pool, nodes in gen.by_pool.items():
        if not nodes[0].pool["alloc"].get(GPU):
            continue
        for i, node in enumerate(nodes):
            rack = i // RACK_SIZE
            out[node.name] = (f"{pool}-b{rack // RACKS_PER_BLOCK}", f"{pool}-r{rack}")
    return out


def not_fit(gen: Generator, tas_nodes: dict[str, tuple[Taint, ...]], spec: dict, req: dict[str, int],
            count: int) -> str:
    """Kueue's notFitMessage for a pod set required in one rack of h100-tas: every node of the snapshot a leaf; an
    untolerated NoSchedule/NoExecute taint excludes it, else it holds min over resources of free / request pods
    (ties to the resource first by name), none counted as excluded by that resource."""
    where = racks(gen)
    per_rack: dict[str, int] = {}
    excluded: dict[str, int] = {}
    wants = {**{r: v for r, v in req.items() if v}, "pods": 1}
    tolerations = tolerations_of(spec)
    for node in gen.by_pool[TAS_LABELS["cloud.google.com/gke-nodepool"]]:
        if node.name not in tas_nodes:
            continue
        rack = where[node.name][1]
        taint = next((t for t in tas_nodes[node.name]
                      if t.effect in ("NoSchedule", "NoExecute") and not tolerated(t, tolerations)), None)
        if taint is not None:
            reason = f'taint "{taint}"'
            excluded[reason] = excluded.get(reason, 0) + 1
            per_rack.setdefault(rack, 0)
            continue
        free = {r: node.alloc.get(r, 0) - node.used.get(r, 0) for r in req}
        free["pods"] = node.alloc["pods"] - node.npods
        holds, limiting = min((max(0, free[r]) // v, r) for r, v in wants.items())
        if holds == 0:
            reason = f'resource "{limiting}"'
            excluded[reason] = excluded.get(reason, 0) + 1
        per_rack[rack] = per_rack.get(rack, 0) + holds
    best = max(per_rack.values(), default=0)
    text = (f'topology "{TOPOLOGY}" doesn\'t allow to fit any of {count} pod(s)' if best == 0 else
            f'topology "{TOPOLOGY}" allows to fit only {best} out of {count} pod(s)')
    if excluded:
        text += f". Total nodes: {len(tas_nodes)}; excluded: " + ", ".join(
            sorted(f"{reason}: {n}" for reason, n in excluded.items()))
    return text


def snapshot_nodes(root: Path) -> dict[str, tuple[Taint, ...]]:
    """The nodes of nodes.json Kueue's snapshot of h100-tas takes: the flavor's labels, Ready, not unschedulable."""
    out = {}
    for node in json.loads((root / BY_NAME["nodes"].file).read_text())["items"]:
        labels = node["metadata"].get("labels") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (node.get("status") or {}).get("conditions") or ())
        if all(labels.get(k) == v for k, v in TAS_LABELS.items()) and ready and not (node.get("spec") or {}).get("unschedulable"):
            out[node["metadata"]["name"]] = tuple(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"]))
                                                  for t in (node.get("spec") or {}).get("taints") or ())
    return out


def label_racks(items: list[dict], gen: Generator) -> None:
    """The block and rack labels on the GPU pools' nodes (nodes.json's items)."""
    where = racks(gen)
    for node in items:
        found = where.get(node["metadata"]["name"])
        if found is not None:
            node["metadata"]["labels"].update({BLOCK: found[0], RACK: found[1]})


def topology_object(gen: Generator, api: str) -> dict:
    return {"apiVersion": api, "kind": "Topology",
            "metadata": {"creationTimestamp": ts(120 * 86400), "generation": 1, "name": TOPOLOGY,
                         "resourceVersion": gen.rv("topology", TOPOLOGY), "uid": gen.uid("topology", TOPOLOGY)},
            "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOSTNAME}]}}
