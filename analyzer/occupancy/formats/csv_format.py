"""`nodes -o csv`: a header row, then one row per node and resource (same order as the table).
Lists are space-separated; names are escaped like the table's and a leading = + - @ is quoted with '
so a spreadsheet never evaluates a name from the bundle as a formula."""

from __future__ import annotations

import csv
from typing import TextIO

from analyzer.occupancy.formats import state_text
from analyzer.occupancy.records import Occupancy
from analyzer.output_format import NODES, RenderFunction
from analyzer.text import printable

HEADER = ("node", "pool", "resource", "capacity", "allocatable", "used", "free", "state", "taints", "holders",
          "pending_wanting")


def cell(text: str) -> str:
    text = printable(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") and text != "-" else text


def render(occ: Occupancy, out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for r in occ.rows:
        writer.writerow([cell(r.node), cell(r.pool), cell(r.resource), "" if r.capacity is None else r.capacity,
                         "" if r.allocatable is None else r.allocatable, r.used, r.free, cell(state_text(r)),
                         cell(" ".join(r.taints)), cell(" ".join(f"{h.key}={h.units}" for h in r.holders)),
                         cell(" ".join(r.wanting))])


FORMAT = RenderFunction("csv", NODES, render)
