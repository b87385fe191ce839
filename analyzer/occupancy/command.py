"""`gpu-triage nodes`: load, filter, render, report problems. The CLI only calls `run`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from dataclasses import replace

from analyzer.bundle.catalog import NODES, PODS
from analyzer.errors import BundleError
from analyzer.occupancy.formats import table
from analyzer.occupancy.from_analysis import occupancy_of
from analyzer.occupancy.records import Occupancy
from analyzer.output_format import Format
from analyzer.text import printable, problem_lines



def run(bundle: str | Path, fmt: Format[Occupancy] = table.FORMAT, resource: str | None = None,
        out: TextIO | None = None, err: TextIO | None = None) -> int:
    """`fmt`: one of analyzer.output.formats_for("nodes"). 0 answered; 2 when some items could not be read (the picture is still printed, the problems go to err)."""
    out = out or sys.stdout
    err = err or sys.stderr
    from analyzer.pipeline import Options, analyse

    # The same streamed reading as `analyze` (pods.json is never held whole); --resource may name one the
    # defaults do not count.
    analysis = analyse(bundle, Options(resources=(resource,) if resource else ()), classify=False)
    with analysis.bundle:
        occ = occupancy_of(analysis)
    if occ is None:
        missing = "; ".join(analysis.cluster.why_missing(k) for k in (NODES.name, PODS.name) if not analysis.loaded.has(k))
        raise BundleError(str(bundle), f"no occupancy picture: {missing or 'it needs nodes.json and pods.json'}")
    if analysis.problem_count:
        occ = replace(occ, problems=tuple(occ.problems) + tuple(analysis.problems))
    if resource:
        occ = occ.only(resource)
    fmt.render(occ, out)
    out.flush()
    for line in analysis.changed:
        err.write(f"gpu-triage: warning: {printable(line)}\n")
    # A webhook refusing every pod in every namespace: no node in the picture can get a new pod until it is back.
    for line in analysis.notes:
        err.write(f"gpu-triage: note: {printable(line)}\n")
    for line in problem_lines(occ.problems):
        err.write(line + "\n")
    if occ.problems:
        err.write(f"gpu-triage: {len(occ.problems)} item(s) could not be read; the picture leaves them out\n")
        return 2
    return 0
