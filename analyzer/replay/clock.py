"""One clock for every age the replay shows, counted from the bundle's collection time.

kubectl computes some ages itself, from its own clock (describe's events and pod list, `get events`' LAST
SEEN), and the server's tables compute the others. So that all of them read as they read at collection, each
answer moves every timestamp it holds forward by (the moment of the request - the collection time), in whole
seconds, and the server's tables count from the collection time: an age that read 3s at collection reads 3s
in every column, however long after the replay runs. The bundle itself is never changed; only what goes out.
A quoted RFC 3339 UTC time is a timestamp wherever it is (a label value cannot hold one: `:` is not allowed
there); `serve` says by how much the times are moved.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_STAMP = re.compile(rb'"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?Z"')


def offset(collected: datetime, now: datetime | None = None) -> timedelta:
    """How far the bundle's times move: now - collected, in whole seconds (a timestamp keeps its format)."""
    moment = now or datetime.now(UTC)
    return timedelta(seconds=round((moment - collected).total_seconds()))


def shift_json(body: bytes, by: timedelta) -> bytes:
    """Every quoted RFC 3339 UTC time in a JSON answer moved by `by`, written as the API server writes it."""
    if not by:
        return body

    def moved(m: re.Match[bytes]) -> bytes:
        try:
            t = datetime.strptime(m.group(1).decode(), "%Y-%m-%dT%H:%M:%S") + by
        except (ValueError, OverflowError):
            return m.group(0)
        return b'"' + t.strftime("%Y-%m-%dT%H:%M:%S").encode() + (m.group(2) or b"") + b'Z"'
    return _STAMP.sub(moved, body)


__all__ = ["offset", "shift_json"]
