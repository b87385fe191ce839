"""`-o table` (default): for people. One row per target, then the count per word, in the order of causes.md."""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from analyzer import words
from analyzer.classify import Verdict

REASON_WIDTH = 110


def render(verdicts: list[Verdict], out: TextIO) -> None:
    if not verdicts:
        out.write("No pod is Pending or without a node, and no manifest or owner was refused.\n")
        return
    key_w = min(60, max(len("TARGET"), *(len(v.key) for v in verdicts)))
    word_w = max(len("WORD"), *(len(v.word) for v in verdicts))
    out.write(f"{'TARGET':<{key_w}}  {'WORD':<{word_w}}  REASON\n")
    for v in verdicts:
        reason = v.reason if len(v.reason) <= REASON_WIDTH else v.reason[: REASON_WIDTH - 1] + "…"
        out.write(f"{v.key:<{key_w}}  {v.word:<{word_w}}  {reason}\n")
    counts = Counter(v.word for v in verdicts)
    out.write("\n")
    for w in words.ALL:
        if counts.get(w.word):
            out.write(f"{counts[w.word]:>6}  {w.word:<{word_w}}  next: {w.next_action}\n")
    out.write(f"{len(verdicts):>6}  total\n")
