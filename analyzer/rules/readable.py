"""Before the order: a target the bundle itself leaves unreadable (an invalid pod or manifest) cannot be
judged; it answers `insufficient-evidence`, naming the file and JSON path."""

from __future__ import annotations

from analyzer import words
from analyzer.rules.case import Case, Decision


def decide(case: Case) -> Decision | None:
    t = case.target
    if not t.invalid:
        return None
    case.evidence.clear()
    case.evidence.update({"invalid": [str(v) for v in t.invalid[:20]], "missing": t.invalid[0].file})
    return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"{t.source} is invalid: {t.invalid[0]}")
