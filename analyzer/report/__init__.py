"""Output formats: one small interface, one file per format. Formats never compute."""

from __future__ import annotations

from typing import Callable, TextIO

from analyzer.classify import Verdict

Renderer = Callable[[list[Verdict], TextIO], None]


def renderers() -> dict[str, Renderer]:
    from analyzer.report import json_format, table, words_format

    return {"table": table.render, "json": json_format.render, "words": words_format.render}
