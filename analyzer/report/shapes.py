"""The ticket report's shapes: targets that say one thing grouped into one row, most urgent first, and the count per
word with its next action (report/ticket.py builds the rows; nothing here reads the analysis).

"Most urgent first" means the order of causes.md (admission refusals first, then spec, gate, bound pod, the node
funnel, unclassified, fits-now), then the two answers outside the order (running, insufficient-evidence): the order
words.py walks.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Iterable

from analyzer import words
from analyzer.report.ticket_records import TargetRow, WordCount

URGENCY: dict[str, int] = {w.word: i for i, w in enumerate(words.ALL)}


def group_rows(rows: Iterable[TargetRow]) -> list[TargetRow]:
    """Rows with the same word, owner and reason (or pattern: pattern_of) become one row carrying every name (it
    `varies` when their reasons or actions differ within the pattern); then
    what the API server refused (no pod exists: a person meets it first), then most urgent first, larger groups
    first, then by name. Ownerless targets group by word and reason too: a hundred bare pods with one reason read
    best as one row."""
    groups: dict[tuple[str, str, str | None], TargetRow] = {}
    names: dict[tuple[str, str, str | None], list[str]] = {}
    varies: set[tuple[str, str, str | None]] = set()
    for row in rows:
        key = (row.word, row.pattern or row.reason, row.owner)
        if key not in groups:
            groups[key] = row
            names[key] = []
        elif (row.reason, row.next_action) != (groups[key].reason, groups[key].next_action):
            varies.add(key)  # the first one's reason and action are shown: the row says so
        names[key].extend(row.names)
    out = [replace(row, names=tuple(names[key]), varies=key in varies) for key, row in groups.items()]
    out.sort(key=lambda r: (not r.refused, URGENCY.get(r.word, len(URGENCY)), -r.count, r.names[0]))
    return out


_DIGITS = re.compile(r"\d+")


def pattern_of(reason: str, action: str, node: str) -> str:
    """What the pods of one owner share when each is bound or pinned to its own node (a DaemonSet's 5,000 pods):
    the reason and the action with that node's name and every number masked. Pods of one owner whose texts differ
    only there are one cause said 5,000 times; anything else (another resource, another sub-case's action) keeps
    them apart."""
    texts = (reason, action)
    if node:
        texts = tuple(t.replace(node, "\0") for t in texts)
    return "\1".join(_DIGITS.sub("#", t) for t in texts)


def summarise(rows: Iterable[TargetRow]) -> list[WordCount]:
    """Count per word with its next action, most urgent first: the targets' own action when they all share one
    (5,000 pods of one quota, one webhook), else the contract's, pointing to each target's own below."""
    targets: Counter[str] = Counter()
    shapes: Counter[str] = Counter()
    actions: dict[str, set[str]] = {}
    varied: set[str] = set()  # words with a shape whose pods each have their own action (the first's is shown)
    for r in rows:
        targets[r.word] += r.count
        shapes[r.word] += 1
        actions.setdefault(r.word, set()).add(r.next_action or "")
        if r.varies:
            varied.add(r.word)
    ordered = sorted(targets, key=lambda w: URGENCY.get(w, len(URGENCY)))
    return [WordCount(word=w, next_action=words.summary_action(w, actions[w], "each target's own below",
                                                               each_own=w in varied),
                      targets=targets[w], rows=shapes[w]) for w in ordered]
