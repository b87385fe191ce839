"""`nodes -o json`: the document schemas/nodes-output.schema.json describes."""

from __future__ import annotations

from typing import TextIO

from analyzer import __version__
from analyzer.occupancy.records import Occupancy, ResourceRow, SharedCard
from analyzer.output_format import NODES, RenderFunction
from analyzer.text import json_text

SCHEMA_VERSION = 1


def row_dict(r: ResourceRow) -> dict:
    return {
        "node": r.node, "pool": r.pool, "resource": r.resource, "capacity": r.capacity, "allocatable": r.allocatable,
        "used": r.used, "free": r.free, "overcommitted": r.overcommitted, "states": list(r.states),
        "taints": list(r.taints),
        "holders": [{"namespace": h.namespace, "name": h.name, "units": h.units} for h in r.holders],
        "pending_wanting": list(r.wanting), "free_behind_taint": r.behind_taint, "pending_tolerating": list(r.tolerating),
        "sharing": r.sharing or None, "mig_config_state": r.mig_state, "conditions": list(r.conditions),
    }


def shared_card_dict(c: SharedCard) -> dict:
    """One card as its sharing scheduler counts it (HAMi, Volcano vGPU): memory in MiB, cores in percent of the
    card, the split count (how many pods may share it), health, and the age of HAMi's handshake."""
    return {
        "node": c.node, "scheduler": c.scheduler, "card": c.card, "type": c.type,
        "memory_mib": {"total": c.memory, "used": c.memory_used, "free": c.memory_free},
        "cores_percent": {"total": c.cores, "used": c.cores_used, "free": c.cores_free},
        "split": {"total": c.shares, "used": c.shares_used},
        "healthy": c.healthy, "handshake_age_seconds": c.handshake_age, "problem": c.problem or None,
        "pods": list(c.pods),
    }


def to_dict(occ: Occupancy) -> dict:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "gpu_triage_version": __version__,
        "rows": [row_dict(r) for r in occ.rows],
        "pools": [{"pool": p.pool, "resource": p.resource, "nodes": p.nodes, "allocatable": p.allocatable, "used": p.used,
                   "free": p.free, "free_behind_taint": p.behind_taint} for p in occ.pools],
        "pending": {k: list(v) for k, v in occ.pending.items()},
        "unmatched": {k: list(v) for k, v in occ.unmatched.items()},
        "not_started": {node: [{"pod": key, "word": word} for key, word in pods] for node, pods in occ.not_started.items()},
        "queues": [{"cluster_queue": q.cluster_queue, "cohort": q.cohort or None, "flavor": q.flavor, "resource": q.resource,
                    "nominal": q.nominal, "reserved": q.reserved, "borrowed": q.borrowed, "waiting": q.waiting,
                    "reserved_by": q.held_by} for q in occ.queues],
        "shared_gpus": [shared_card_dict(c) for c in occ.shared],
        "problems": list(occ.problems),
    }


def render(occ: Occupancy, out: TextIO) -> None:
    out.write(json_text(to_dict(occ)) + "\n")


FORMAT = RenderFunction("json", NODES, render)
