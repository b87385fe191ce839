"""`gpu-triage diff` output formats: one file each, no computation. Shared: values in words."""

from __future__ import annotations

from typing import Callable, TextIO

from analyzer.diff.records import Diff

Renderer = Callable[[Diff, TextIO], None]


def value_text(value: object) -> str:
    """A compared value for a person: dicts as k=v, tuples joined, None as '-'. Not yet escaped."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def triple(t: tuple[int, int, int] | None) -> str:
    return "-" if t is None else f"{t[0]}/{t[1]}/{t[2]}"


def quota_pair(t: tuple[str | None, str | None] | None) -> str:
    return "-" if t is None else f"hard {t[0] or '-'}, used {t[1] or '-'}"


def renderers() -> dict[str, Renderer]:
    from analyzer.diff.formats import json_format, markdown, table

    return {"table": table.render, "json": json_format.render, "markdown": markdown.render}


_NOT_COLLECTED = {"failed": "failed (kubectl's error is in the manifest)", "not-served": "not served by the API server",
                  "missing": "listed by the manifest but absent"}


def not_collected_lines(rows: tuple[tuple[str, str, str], ...]) -> list[str]:
    """Per bundle and status, the files its manifest says it could not collect, as one sentence each."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f, side, status in rows:
        groups.setdefault((side, status), []).append(f)
    return [f"{len(files)} file(s) {_NOT_COLLECTED.get(status, status)} in the {side} bundle (not in the other): "
            + ", ".join(files) for (side, status), files in groups.items()]
