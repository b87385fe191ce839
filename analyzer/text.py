"""Text from strangers' bundles made safe to print, and the helpers every output format shares (written once
here: escaping, JSON that survives a hostile name, lists of names with how many more, values in words)."""

from __future__ import annotations

import html
import os
import re
from typing import Sequence, TextIO

import orjson

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


# What acts inside a Markdown line: code spans, emphasis, links and images, table cells, strikethrough. Bundle
# text never starts a line in our Markdown (always after "| " or "- "), so nothing else needs escaping.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~])")


def markdown_text(text: object, *, quote: bool = False) -> str:
    """Bundle text inside a Markdown line: control characters visible, `& < >` as entities (no HTML reaches the
    page; with `quote`, quotes too), Markdown's punctuation backslash-escaped."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(printable(str(text)), quote=quote))


def json_safe(node: object) -> object:
    """A document with every string through `printable`: lone surrogates (from a hostile manifest) cannot be
    UTF-8, so a format that meets one escapes them rather than fail."""
    if isinstance(node, str):
        return printable(node)
    if isinstance(node, dict):
        return {json_safe(k): json_safe(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [json_safe(x) for x in node]
    return node


def json_text(doc: object, option: int = orjson.OPT_INDENT_2) -> str:
    """The document as indented JSON; only when a string cannot be UTF-8 is it escaped first (`json_safe`)."""
    try:
        return orjson.dumps(doc, option=option).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(json_safe(doc), option=option).decode()


def value_text(value: object) -> str:
    """A value for a person: dicts as k=v, lists joined, yes/no, None as '-'. Not yet escaped."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


# How many holders a line names before it counts the rest: the pods holding a resource on a node (the
# report's occupancy picture, and the pods not started on that node), the workloads reserving a ClusterQueue's
# quota (nodes and the report).
PODS_NAMED_PER_NODE_RESOURCE = 8
WORKLOADS_NAMED_PER_QUEUE_ROW = 3


def and_more(hidden: int) -> str:
    """What follows the names shown when some are not: ` +4 more` (nothing when none is hidden)."""
    return f" +{hidden} more" if hidden > 0 else ""


def named_few(names: Sequence[str], limit: int) -> str:
    """The first `limit` names and how many more: `a, b, c +4 more`. Not escaped: the format escapes."""
    return ", ".join(names[:limit]) + and_more(len(names) - limit)


REFUSED = "refused by the API server"


def target_mark(kind: str, refused: bool) -> str:
    """What a target is when it is not a pod, as every format but -o json and -o words says it beside its name."""
    if kind == "Pod":
        return ""
    if kind == "Attempt":
        return f"a manifest {REFUSED}" if refused else "a manifest, not created"
    return f"{kind}: its pods {REFUSED}" if refused else kind


def some_names(items: list[str], limit: int = 3, total: int | None = None) -> str:
    """The first few names and how many more: `a, b, c (+4 more)` (`total`: how many there are, when `items`
    holds only the first ones)."""
    total = len(items) if total is None else total
    shown = ", ".join(items[:limit])
    return shown + (f" (+{total - limit} more)" if total > limit else "")


def verb(items: Sequence[object], one: str, many: str) -> str:
    """The word for one item or for several: `verb(pods, "it forbids", "they forbid")`."""
    return one if len(items) == 1 else many


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
