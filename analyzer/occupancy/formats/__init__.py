"""`gpu-triage nodes` output formats: one file each (registered in analyzer/output.py), no computation. Every
name from the bundle passes through `printable` (table, csv) or JSON escaping, so a hostile name cannot forge a
line. Shared by them: a row's states in words."""

from __future__ import annotations

from analyzer.model.dra.extended import IMPLICIT_EXTENDED_PREFIX
from analyzer.occupancy.records import ResourceRow
from analyzer.text import printable


def state_text(row: ResourceRow) -> str:
    """States in words, the blocking taints named and whom they keep out:
    'tainted nvidia.com/gpu=present:NoSchedule (not tolerated by lab/taint), 4 free behind it'."""
    parts = []
    for s in row.states:
        if s == "tainted":
            own = [t for t in row.taints if not t.startswith("node.kubernetes.io/unschedulable:")]
            text = "tainted " + " ".join(own)
            refused = [k for k in row.wanting if k not in row.tolerating]
            if refused:
                text += f" (not tolerated by {_names(refused)})"
            elif row.tolerating:
                text += f" (tolerated by {_names(row.tolerating)})"
            parts.append(text)
        elif s == "unhealthy":
            parts.append("unhealthy: " + "; ".join(row.conditions))
        elif s == "allocatable-zero":
            parts.append(f"allocatable 0 of capacity {row.capacity}")
        elif s == "no-plugin" and row.resource.startswith(IMPLICIT_EXTENDED_PREFIX):
            parts.append("no device of the class published (no ResourceSlice)")
        elif s == "no-plugin":
            parts.append("no plugin (resource absent)" if row.capacity is None else "no plugin (capacity 0)")
        elif s == "free" and row.behind_taint:
            parts.append(f"{row.behind_taint} free behind the taint")
        else:
            parts.append(s)
    if row.mig_state:
        parts.insert(0, f"MIG config {row.mig_state}: wait for the MIG manager")
    if row.sharing:
        parts.append(row.sharing)
    return ", ".join(parts)


def _names(keys: tuple[str, ...] | list[str], shown: int = 3) -> str:
    more = len(keys) - shown
    return ", ".join(printable(k) for k in keys[:shown]) + (f" and {more} more" if more > 0 else "")
