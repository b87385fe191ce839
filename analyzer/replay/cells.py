"""Small readers and formatters shared by the Table printers (replay/tables.py, replay/pod_table.py): a field
at a path, lists and maps read leniently (a bundle is untrusted), labels and selectors as kubectl prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from analyzer.replay.humantime import since

Column = tuple[str, str, int]  # name, type, priority
Row = list[Any]


def column(name: str, typ: str = "string", priority: int = 0) -> Column:
    return (name, typ, priority)


def dig(obj: Any, *path: str) -> Any:
    cur = obj
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def age(item: dict, now: datetime) -> str:
    return since(dig(item, "metadata", "creationTimestamp"), now)


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted k=v joined by ',', '<none>' when empty."""
    d = as_dict(labels)
    return ",".join(f"{k}={d[k]}" for k in sorted(d)) or "<none>"


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    sel = as_dict(selector)
    if not sel:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted(as_dict(sel.get("matchLabels")).items())]
    for expr in as_list(sel.get("matchExpressions")):
        expr = as_dict(expr)
        op, key, values = as_str(expr.get("operator")), as_str(expr.get("key")), [as_str(v) for v in as_list(expr.get("values"))]
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def layout_container_cells(containers: Any) -> tuple[str, str]:
    cs = [as_dict(c) for c in as_list(containers)]
    return ",".join(as_str(c.get("name")) for c in cs), ",".join(as_str(c.get("image")) for c in cs)


def template_containers(item: dict) -> Any:
    return dig(item, "spec", "template", "spec", "containers")
