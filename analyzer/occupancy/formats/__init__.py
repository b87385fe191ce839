"""`gpu-triage nodes` output formats: one file each, no computation. Every name from the bundle
passes through `safe` (table, csv) or JSON escaping, so a hostile name cannot forge a line."""

from __future__ import annotations

from typing import Callable, TextIO

from analyzer.occupancy.records import Occupancy, ResourceRow
from analyzer.report import printable

Renderer = Callable[[Occupancy, TextIO], None]


def safe(text: str) -> str:
    return printable(text)


def state_text(row: ResourceRow) -> str:
    """States in words, the blocking taints named: 'tainted nvidia.com/gpu=present:NoSchedule, free'."""
    parts = []
    for s in row.states:
        if s == "tainted":
            own = [t for t in row.taints if not t.startswith("node.kubernetes.io/unschedulable:")]
            parts.append("tainted " + " ".join(own))
        elif s == "allocatable-zero":
            parts.append(f"allocatable 0 of capacity {row.capacity}")
        elif s == "no-plugin":
            parts.append("no plugin (resource absent)" if row.capacity is None else "no plugin (capacity 0)")
        else:
            parts.append(s)
    if row.mig_state:
        parts.insert(0, f"MIG config {row.mig_state}: wait for the MIG manager")
    if row.sharing:
        parts.append(row.sharing)
    return ", ".join(parts)


def renderers() -> dict[str, Renderer]:
    from analyzer.occupancy.formats import csv_format, json_format, table

    return {"table": table.render, "json": json_format.render, "csv": csv_format.render}
