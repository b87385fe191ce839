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
