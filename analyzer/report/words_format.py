"""`-o words`: exactly one line per target, `namespace/name<TAB>word`; owners as namespace/kind/name."""

from __future__ import annotations

from typing import Iterable, TextIO

from analyzer.output_format import ANALYZE, RenderFunction
from analyzer.text import printable
from analyzer.verdict import Verdict


def render(verdicts: Iterable[Verdict], out: TextIO) -> None:
    # Written as the verdicts come: nothing is held.
    for v in verdicts:
        out.write(f"{printable(v.key)}\t{v.word}\n")


FORMAT = RenderFunction("words", ANALYZE, render, needs_evidence=False)
