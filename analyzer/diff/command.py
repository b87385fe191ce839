"""`gpu-triage diff OLD NEW`: two snapshots, compared, rendered. The CLI only calls `run`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from analyzer.diff.compare import compare
from analyzer.diff.records import Diff
from analyzer.diff.formats import table
from analyzer.diff.snapshot import snapshot
from analyzer.output_format import Format
from analyzer.text import printable, problem_lines



def diff_bundles(old: str | Path, new: str | Path) -> Diff:
    return compare(snapshot(old), snapshot(new))


def run(old: str | Path, new: str | Path, fmt: Format[Diff] = table.FORMAT, out: TextIO | None = None,
        err: TextIO | None = None) -> int:
    """`fmt`: one of analyzer.output.formats_for("diff"). 0 compared; 2 when items of either bundle could not be read (still compared; problems on err)."""
    out = out or sys.stdout
    err = err or sys.stderr
    d = diff_bundles(old, new)
    fmt.render(d, out)
    out.flush()
    for line in d.edited:
        err.write(f"gpu-triage: warning: {printable(line)}\n")
    for line in problem_lines(d.problems):
        err.write(line + "\n")
    if d.problems:
        err.write(f"gpu-triage: {len(d.problems)} item(s) could not be read; the comparison leaves them out\n")
        return 2
    return 0
