"""Before the order: a target the bundle itself leaves unreadable (an invalid pod or manifest) cannot be
judged; it answers `insufficient-evidence`, naming the file and JSON path."""

from __future__ import annotations

from analyzer import words
from analyzer import prose
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Family, Plain, Rule


def decide(case: Case) -> Decision | None:
    t = case.target
    if not t.invalid:
        return None
    case.evidence.clear()
    # Invalid, not missing: the file is there, and what to do is fix it (or collect it again), not collect it.
    case.evidence.update({"invalid": [str(v) for v in t.invalid[:20]], "invalid_file": t.invalid[0].file})
    return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"{t.source} is invalid: {t.invalid[0]}",
                    action=f"fix {t.source} (or collect {t.invalid[0].file} again), then run again")


@prose.says("missing")
def _missing_says(value: object) -> list[str]:
    files = value if isinstance(value, list) else [value]
    return [f"Needed: {', '.join(map(str, files))} (collect it and run again)."] if value else []


@prose.says("invalid")
def _invalid_says(value: object) -> list[str]:
    # The first finding is the reason's own (every writer quotes it there): said once, the others after it.
    more = (value if isinstance(value, list) else [value])[1:4] if value else []
    return [f"Also invalid: {x}." for x in more]


@prose.says("invalid_file")
def _invalid_file_says(value: object) -> list[str]:
    return []  # the reason names the file and path


# Reads no kind of its own: the target's file, already validated when the bundle was read.
FAMILY: Family = Plain(name="readable", kinds=(), rules=(
    Rule(rows="", words=(words.INSUFFICIENT_EVIDENCE,), decide=decide),))
