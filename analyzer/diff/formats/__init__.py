"""`gpu-triage diff` output formats: one file each (registered in analyzer/output.py), no computation. Shared by
the diff's formats: counts and quotas in words, and what a bundle could not collect; values in words are
analyzer/text.py's, as every format's."""

from __future__ import annotations


def triple(t: tuple[int, int, int] | None) -> str:
    return "-" if t is None else f"{t[0]}/{t[1]}/{t[2]}"


def quota_pair(t: tuple[str | None, str | None] | None) -> str:
    return "-" if t is None else f"hard {t[0] or '-'}, used {t[1] or '-'}"


_NOT_COLLECTED = {"failed": "failed (kubectl's error is in the manifest)", "not-served": "not served by the API server",
                  "missing": "listed by the manifest but absent"}


def not_collected_lines(rows: tuple[tuple[str, str, str], ...]) -> list[str]:
    """Per bundle and status, the files its manifest says it could not collect, as one sentence each."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f, side, status in rows:
        groups.setdefault((side, status), []).append(f)
    return [f"{len(files)} file(s) {_NOT_COLLECTED.get(status, status)} in the {side} bundle (not in the other): "
            + ", ".join(files) for (side, status), files in groups.items()]
