"""One clock for every age the replay shows, counted from the bundle's collection time.

kubectl computes some ages itself from its own clock (describe's event and pod lists, `get events`'
LAST SEEN), and the server's tables compute the others. So that all of them read as they read at collection,
every timestamp served is moved forward by (the moment serve started - the collection time), whole seconds,
and the server's tables count from the real clock too: an age that read 3s at collection reads 3s now (plus
the minutes the replay has been running), everywhere. Labels and annotations are left as they are (a value
there is data, not an event time). `serve` says by how much the times are moved.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?Z")
_SKIPPED = frozenset({"labels", "annotations"})


def offset(collected: datetime, now: datetime | None = None) -> timedelta:
    """How far the bundle's times move: now - collected, in whole seconds (a timestamp keeps its format)."""
    moment = now or datetime.now(UTC)
    return timedelta(seconds=round((moment - collected).total_seconds()))


def shift_stamp(text: str, by: timedelta) -> str:
    """An RFC 3339 UTC time moved by `by`, written as the API server writes it (same fractional digits)."""
    m = _STAMP.fullmatch(text)
    if m is None:
        return text
    try:
        t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S") + by
    except (ValueError, OverflowError):
        return text
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (m.group(2) or "") + "Z"


def shift(node: Any, by: timedelta) -> Any:
    """Every timestamp in a kubectl object moved by `by`, in place (lists and dicts); returns the node."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in _SKIPPED:
                continue
            if isinstance(v, str):
                if 20 <= len(v) <= 30 and v[:1].isdigit():
                    node[k] = shift_stamp(v, by)
            elif isinstance(v, (dict, list)):
                shift(v, by)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, str):
                if 20 <= len(v) <= 30 and v[:1].isdigit():
                    node[i] = shift_stamp(v, by)
            elif isinstance(v, (dict, list)):
                shift(v, by)
    return node


__all__ = ["offset", "shift", "shift_stamp"]
