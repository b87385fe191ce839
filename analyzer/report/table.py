"""`-o table` (default) and `-o wide`: for people. One row per target, then the count per word, in the order of
causes.md. What the API server refused comes first and says so (no pod exists to look at): the manifests and the
owners whose pods it refused, each reason led by what the target is.

A reason is never cut: on a terminal (or with COLUMNS set) it wraps at spaces to the width, continuation lines
under the REASON column, so no number or name is split; `-o wide` (and a pipe) keeps each row on one line.
"""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from typing import Iterable, TextIO

from analyzer import words
from analyzer.output_format import ANALYZE, Format
from analyzer.text import printable, target_mark, terminal_width
from analyzer.verdict import Verdict

MIN_REASON = 30  # below this the reason column would be a word per line: each reason goes under its name instead
STACKED = 4  # the indent of a reason under its target's name and word

# The word's colour on a terminal, by the part of causes.md it comes from (as in the HTML report).
_RED, _MAGENTA, _YELLOW, _GREEN, _RESET = "\x1b[31m", "\x1b[35m", "\x1b[33m", "\x1b[32m", "\x1b[0m"
_ADMISSION = {"no-runtimeclass", "quota-exceeded", "queue-misconfigured", "queue-quota"}
_FINE = {"fits-now", "running", "scaling-up"}
_OTHER = {"unclassified", "insufficient-evidence"}


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _colour(word: str, padded: str) -> str:
    if word in _ADMISSION:
        code = _RED
    elif word in _FINE:
        code = _GREEN
    elif word in _OTHER:
        return padded
    elif word in {"no-gpu-request", "scheduling-gated", "selector-mismatch", "no-resourceclaim", "no-deviceclass",
                  "no-volumeclaim", "device-selector-mismatch", "resource-name-mismatch"}:
        code = _MAGENTA
    else:
        code = _YELLOW
    return f"{code}{padded}{_RESET}"


def wrap(text: str, width: int | None) -> list[str]:
    """Lines of at most `width` characters, broken only at spaces (a name or number is never split)."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width=max(width, MIN_REASON), break_long_words=False, break_on_hyphens=False) or [text]


def render(verdicts: list[Verdict], out: TextIO, *, width: int | None = None, colour: bool = False) -> None:
    """`width`: the line width to wrap reasons to (None: never wrap, as `-o wide`)."""
    if not verdicts:
        out.write("No pod is Pending or without a node, and no manifest or owner was refused.\n")
        return
    verdicts = sorted(verdicts, key=lambda v: not v.refused)  # stable: otherwise in the order they came
    keys = [printable(v.key) for v in verdicts]
    key_w = max(len("TARGET"), *(len(k) for k in keys))
    word_w = max(len("WORD"), *(len(v.word) for v in verdicts))
    indent = key_w + 2 + word_w + 2
    reason_w = None if width is None else width - indent
    if width is not None and reason_w is not None and reason_w < MIN_REASON:
        # Long names (a StatefulSet's pods, GKE's node names in the reason) leave no room for a REASON column: each
        # target's name and word on one line, its reason wrapped under them, as kubectl describe does.
        indent, reason_w = STACKED, max(width - STACKED, MIN_REASON)
        out.write(f"TARGET  WORD\n{' ' * indent}REASON\n")
    else:
        out.write(f"{'TARGET':<{key_w}}  {'WORD':<{word_w}}  REASON\n")
    stacked = indent == STACKED
    for key, v in zip(keys, verdicts):
        lines = wrap(printable(_marked(v)), reason_w)
        word = f"{v.word:<{word_w}}" if not stacked else v.word
        word = _colour(v.word, word) if colour else word
        if stacked:
            out.write(f"{key}  {word}\n")
            lines = [" " * indent + line for line in lines]
        else:
            lines[0] = f"{key:<{key_w}}  {word}  {lines[0]}"
            lines[1:] = [" " * indent + line for line in lines[1:]]
        out.write("\n".join(lines) + "\n")
    counts = Counter(v.word for v in verdicts)
    actions: dict[str, set[str]] = {}
    for v in verdicts:
        actions.setdefault(v.word, set()).add(v.next_action or "")
    out.write("\n")
    lead = 6 + 2 + word_w + 2
    for w in words.ALL:
        if counts.get(w.word):
            word = f"{w.word:<{word_w}}"
            action = words.summary_action(w.word, actions[w.word], "each target's own: gpu-triage why BUNDLE NS/NAME --explain")
            # continuation lines sit under the action, after "next: ": the width left is the same for every line
            lines = wrap(action, None if width is None else width - lead - len("next: "))
            out.write(f"{counts[w.word]:>6}  {_colour(w.word, word) if colour else word}  next: {lines[0]}\n")
            for more in lines[1:]:
                out.write(" " * (lead + len("next: ")) + more + "\n")
    out.write(f"{len(verdicts):>6}  total\n")


def _marked(v: Verdict) -> str:
    """The reason, led by what the target is when a person could take it for a pod (a manifest, a refused owner;
    a queued workload's key already names its kind)."""
    mark = target_mark(v.target.kind, v.refused) if v.refused or v.target.kind == "Attempt" else ""
    return f"{mark}: {v.reason}" if mark else v.reason


class TableFormat(Format[Iterable[Verdict]]):
    """`-o table` wraps reasons to the terminal `out` is (COLUMNS); `-o wide` keeps each row on one line. Both
    need every verdict before the first line (the columns' widths)."""

    commands = frozenset({ANALYZE})
    needs_evidence = False

    def __init__(self, *, name: str, wraps: bool) -> None:
        self.name = name
        self.wraps = wraps

    def render(self, document: Iterable[Verdict], out: TextIO) -> None:
        render(list(document), out, colour=use_colour(out), width=terminal_width(out) if self.wraps else None)


TABLE = TableFormat(name="table", wraps=True)
WIDE = TableFormat(name="wide", wraps=False)
