"""Output formats: one small interface, one file per format. Formats never compute."""

from __future__ import annotations

from typing import Callable, Iterable, TextIO

from analyzer.verdict import Verdict

Renderer = Callable[[Iterable[Verdict], TextIO], None]  # json and words stream; table takes a list

# The formats that print each verdict's word and reason and nothing else of it (the table's counts are of words):
# their verdicts are made without the evidence (classify.Classifier, evidence=False).
BARE = frozenset({"table", "wide", "words"})


def renderers() -> dict[str, Renderer]:
    from analyzer.report import json_format, table, words_format

    return {"table": table.render, "json": json_format.render, "words": words_format.render}
