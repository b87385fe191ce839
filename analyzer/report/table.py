"""`-o table` (default): for people. One row per target, then the count per word, in the order of causes.md."""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from analyzer import words
from analyzer.verdict import Verdict
from analyzer.text import printable

REASON_WIDTH = 110


def render(verdicts: list[Verdict], out: TextIO) -> None:
    if not verdicts:
        out.write("No pod is Pending or without a node, and no manifest or owner was refused.\n")
        return
    keys = [printable(v.key) for v in verdicts]
    key_w = min(60, max(len("TARGET"), *(len(k) for k in keys)))
    word_w = max(len("WORD"), *(len(v.word) for v in verdicts))
    out.write(f"{'TARGET':<{key_w}}  {'WORD':<{word_w}}  REASON\n")
    for key, v in zip(keys, verdicts):
        reason = printable(v.reason)
        reason = reason if len(reason) <= REASON_WIDTH else reason[: REASON_WIDTH - 1] + "…"
        out.write(f"{key:<{key_w}}  {v.word:<{word_w}}  {reason}\n")
    counts = Counter(v.word for v in verdicts)
    out.write("\n")
    for w in words.ALL:
        if counts.get(w.word):
            out.write(f"{counts[w.word]:>6}  {w.word:<{word_w}}  next: {w.next_action}\n")
    out.write(f"{len(verdicts):>6}  total\n")
