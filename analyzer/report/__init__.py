"""Output formats: one small interface, one file per format. Formats never compute."""

from __future__ import annotations

from typing import Callable, Iterable, TextIO

from analyzer.verdict import Verdict

Renderer = Callable[[Iterable[Verdict], TextIO], None]  # json and words stream; table takes a list

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


def renderers() -> dict[str, Renderer]:
    from analyzer.report import json_format, table, words_format

    return {"table": table.render, "json": json_format.render, "words": words_format.render}
