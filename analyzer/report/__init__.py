"""Output formats: one small interface, one file per format. Formats never compute."""

from __future__ import annotations

from typing import Callable, Iterable, TextIO

from analyzer.verdict import Verdict

Renderer = Callable[[Iterable[Verdict], TextIO], None]  # json and words stream; table takes a list

def renderers() -> dict[str, Renderer]:
    from analyzer.report import json_format, table, words_format

    return {"table": table.render, "json": json_format.render, "words": words_format.render}
