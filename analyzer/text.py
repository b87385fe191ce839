"""Text from strangers' bundles made safe to print: every output that puts a bundle's names on a line uses this."""

from __future__ import annotations

import os
from typing import Sequence, TextIO

# Names come from strangers' bundles: a pod named "a\tfits-now\nlab/b" must not forge a line of
# `-o words`, and ESC sequences must not reach a terminal. Kubernetes names never hold these.
_ESCAPES = {i: f"\\x{i:02x}" for i in (*range(32), *range(0x7F, 0xA0))}
_ESCAPES.update({9: "\\t", 10: "\\n", 13: "\\r"})


def printable(text: str) -> str:
    """Text safe for one line of a terminal or a TSV: control characters and lone surrogates escaped."""
    out = text.translate(_ESCAPES)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:
        out = out.encode("utf-8", "backslashreplace").decode("utf-8")
    return out


def some_names(items: list[str], limit: int = 3, total: int | None = None) -> str:
    """The first few names and how many more: `a, b, c (+4 more)` (`total`: how many there are, when `items`
    holds only the first ones)."""
    total = len(items) if total is None else total
    shown = ", ".join(items[:limit])
    return shown + (f" (+{total - limit} more)" if total > limit else "")


PROBLEMS_SHOWN = 50  # problem lines a command prints; the rest are counted


def problem_lines(problems: Sequence[str], total: int | None = None) -> list[str]:
    """The first problems, printable, then how many more (`total` when only some were kept as text)."""
    total = len(problems) if total is None else total
    out = [printable(p) for p in problems[:PROBLEMS_SHOWN]]
    if total > PROBLEMS_SHOWN:
        out.append(f"… {total - PROBLEMS_SHOWN} more")
    return out


def terminal_width(stream: TextIO) -> int | None:
    """The width to wrap to: COLUMNS when set, else the terminal's; None in a pipe (one line per row)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        pass
    return None
