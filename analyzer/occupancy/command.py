"""`gpu-triage nodes`: load, filter, render, report problems. The CLI only calls `run`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from analyzer.accelerators import AcceleratorConfig
from analyzer.occupancy.adapter import load
from analyzer.occupancy.formats import renderers, safe

MAX_PROBLEMS = 50


def run(bundle: str | Path, output: str = "table", resource: str | None = None, out: TextIO | None = None,
        err: TextIO | None = None) -> int:
    """0 answered; 2 when some items could not be read (the picture is still printed, the problems go to err)."""
    out = out or sys.stdout
    err = err or sys.stderr
    config = AcceleratorConfig()
    if resource:
        config = config.with_additions([resource])  # --resource may name one the defaults do not count
    occ = load(bundle, config)
    if resource:
        occ = occ.only(resource)
    renderers()[output](occ, out)
    out.flush()
    for line in occ.problems[:MAX_PROBLEMS]:
        err.write(safe(line) + "\n")
    if len(occ.problems) > MAX_PROBLEMS:
        err.write(f"… {len(occ.problems) - MAX_PROBLEMS} more\n")
    if occ.problems:
        err.write(f"gpu-triage: {len(occ.problems)} item(s) could not be read; the picture leaves them out\n")
        return 2
    return 0
