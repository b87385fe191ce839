"""k8s.io/apimachinery/pkg/util/duration.HumanDuration, the AGE every kubectl table shows.

`since(t, now)` is the printers' translateTimestampSince with `now` = the bundle's collection time,
so a replay months later shows the ages the cluster showed then.
"""

from __future__ import annotations

from datetime import datetime

from analyzer.replay.store import parse_time


def human_duration(seconds_float: float) -> str:
    seconds = int(seconds_float)  # Go truncates toward zero (int(d.Seconds()))
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: object, now: datetime) -> str:
    """translateTimestampSince: '<unknown>' for a zero/missing time."""
    t = parse_time(value)
    if t is None:
        return "<unknown>"
    return human_duration((now - t).total_seconds())
