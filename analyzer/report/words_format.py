"""`-o words`: exactly one line per target, `namespace/name<TAB>word`; owners as namespace/kind/name."""

from __future__ import annotations

from typing import TextIO

from analyzer.classify import Verdict


def render(verdicts: list[Verdict], out: TextIO) -> None:
    for v in verdicts:
        out.write(f"{v.key}\t{v.word}\n")
