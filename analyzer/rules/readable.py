"""Before the order: a target the bundle itself leaves unreadable (an invalid pod or manifest) cannot be
judged; it answers `insufficient-evidence`, naming the file and JSON path."""

from __future__ import annotations

from analyzer import words
from analyzer.evidence import prose
from analyzer.rules.case import Case, Decision


def decide(case: Case) -> Decision | None:
    t = case.target
    if not t.invalid:
        return None
    case.evidence.clear()
    case.evidence.update({"invalid": [str(v) for v in t.invalid[:20]], "missing": t.invalid[0].file})
    return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"{t.source} is invalid: {t.invalid[0]}")


@prose.says("missing")
def _missing_says(value: object) -> list[str]:
    files = value if isinstance(value, list) else [value]
    return [f"Needed: {', '.join(map(str, files))} (collect it and run again)."] if value else []


@prose.says("invalid")
def _invalid_says(value: object) -> list[str]:
    return [f"Invalid: {x}." for x in (value if isinstance(value, list) else [value])[:3]] if value else []
