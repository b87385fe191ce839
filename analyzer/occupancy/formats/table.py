"""`nodes -o table`: one line per node and resource, then the per-pool totals. Names are never cut."""

from __future__ import annotations

import textwrap
from typing import Sequence, TextIO

from analyzer.occupancy.formats import state_text
from analyzer.occupancy.records import Occupancy, ResourceRow
from analyzer.output_format import NODES, RenderFunction
from analyzer.text import printable, terminal_width

SHOWN_WANTING = 3


def _amount(value: int | None) -> str:
    return "-" if value is None else str(value)


def _wanting(row: ResourceRow) -> str:
    if not row.wanting:
        return "-"
    shown = ", ".join(printable(k) for k in row.wanting[:SHOWN_WANTING])
    more = len(row.wanting) - SHOWN_WANTING
    return f"{len(row.wanting)}: {shown}" + (f", … {more} more" if more > 0 else "")


def _wrapped(text: str, width: int | None) -> list[str]:
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False) or [text]


def _stacked(lines: Sequence[tuple[str, ...]], widths: list[int], width: int, out: TextIO) -> None:
    """Too narrow for STATE and PENDING beside the numbers: each row's numbers on one line, then its state and the
    pending pods wanting it on their own lines below it, wrapped at spaces to the width."""
    header, rows = lines[0], lines[1:]
    # Even the numbers are wider than the terminal (GKE's node names run to 40 characters): the node's name alone
    # on its line, the rest indented under it, as kubectl describe lays out what does not fit a row.
    alone = sum(widths[:6]) + 2 * 5 > width

    def numbers(line: tuple[str, ...]) -> str:
        cells = line[1:6] if alone else line[:6]
        return "  ".join(f"{c:<{w}}" if i < (2 if alone else 3) else f"{c:>{w}}"
                         for i, (c, w) in enumerate(zip(cells, widths[1:6] if alone else widths)))

    if alone:
        out.write(f"{header[0]}  (then POOL, RESOURCE, ALLOC, USED, FREE; STATE, PENDING below)\n"
                  f"    {numbers(header)}\n")
    else:
        out.write(numbers(header) + "  (STATE, PENDING below)\n")
    for line in rows:
        out.write(f"{line[0]}\n    {numbers(line)}\n" if alone else numbers(line) + "\n")
        for label, text in (("state", line[6]), ("pending", line[7])):
            if text == "-" and label == "pending":
                continue
            lead = f"    {label}: "
            for k, part in enumerate(_wrapped(text, max(width - len(lead), 20))):
                out.write((lead if k == 0 else " " * len(lead)) + part + "\n")


def render(occ: Occupancy, out: TextIO) -> None:
    """One line per row in a pipe; on a terminal (or with COLUMNS) the STATE and PENDING columns wrap at spaces
    to its width, continuation lines under their column (a name is never cut)."""
    width = terminal_width(out)
    if not occ.rows:
        out.write("No node offers an accelerator resource, looks like a GPU node, or is where a pending GPU pod could go.\n")
    else:
        header = ("NODE", "POOL", "RESOURCE", "ALLOC", "USED", "FREE", "STATE", "PENDING WANTING IT")
        lines = [header] + [(printable(r.node), printable(r.pool), printable(r.resource), _amount(r.allocatable), str(r.used),
                             str(r.free), printable(state_text(r)), _wanting(r)) for r in occ.rows]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
        fixed = sum(widths[:6]) + 2 * 7
        if width is not None and widths[6] + max(len(line[7]) for line in lines) > width - fixed:
            _stacked(lines, widths, width, out)
        else:
            for line in lines:
                out.write("  ".join(f"{c:<{w}}" if i < 3 or i == 6 else f"{c:>{w}}"
                                    for i, (c, w) in enumerate(zip(line, widths))) + "  " + line[-1] + "\n")
        out.write("\n")
        pools = [("POOL", "RESOURCE", "NODES", "ALLOC", "USED", "FREE", "BEHIND A TAINT")] + [
            (printable(p.pool), printable(p.resource), str(p.nodes), str(p.allocatable), str(p.used), str(p.free - p.behind_taint),
             str(p.behind_taint)) for p in occ.pools]
        _table(pools, "llrrrrr", width, out)
    if occ.not_started:
        out.write("\nbound pods that have not started (`gpu-triage why` for each):\n")
        for node, pods in occ.not_started.items():
            more = len(pods) - SHOWN_WANTING
            text = (f"{printable(node)}: " + ", ".join(f"{printable(key)} {word}" for key, word in pods[:SHOWN_WANTING])
                    + (f", … {more} more" if more > 0 else ""))
            for k, part in enumerate(_wrapped(text, None if width is None else max(width - 6, 20))):
                out.write(("  " if k == 0 else "      ") + part + "\n")
    if occ.shared:
        _shared(occ, out)
    if occ.queues:
        out.write("\nKueue ClusterQueues (GPU quota per flavor; reserved beyond nominal is borrowed from the cohort):\n")
        qs = [("CLUSTERQUEUE", "FLAVOR", "RESOURCE", "NOMINAL", "RESERVED", "BORROWED", "WAITING", "RESERVED BY")] + [
            (printable(q.cluster_queue), printable(q.flavor), printable(q.resource), str(q.nominal), str(q.reserved), str(q.borrowed),
             str(q.waiting), printable(q.held_by) or "-") for q in occ.queues]
        _table(qs, "lllrrrrl", width, out)
    if occ.pending:
        out.write("\n")
    offered = {r.resource for r in occ.rows if r.capacity}
    for resource, keys in occ.pending.items():
        lost = occ.unmatched.get(resource, ())
        text = f"pending pods asking for {printable(resource)}: {len(keys)}"
        if lost:
            shown = ", ".join(printable(k) for k in lost[:SHOWN_WANTING]) + (", …" if len(lost) > SHOWN_WANTING else "")
            if resource in offered:
                text += f"; {len(lost)} whose nodeSelector matches no node above ({shown})"
            else:
                text += f"; no node offers it ({shown})"
        out.write("\n".join(_wrapped(text, width) if width is None else
                             [p if k == 0 else "    " + p for k, p in enumerate(_wrapped(text, width - 4))]) + "\n")


def _table(rows: Sequence[tuple[str, ...]], aligns: str, width: int | None, out: TextIO) -> None:
    """Aligned columns (`aligns`: l or r per column); wider than the terminal, the first column alone on its line
    and the others indented under it (names are never cut)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    alone = width is not None and sum(widths) + 2 * (len(widths) - 1) > width
    for r in rows:
        cells = [f"{c:<{w}}" if a == "l" else f"{c:>{w}}" for c, w, a in zip(r, widths, aligns)]
        text = f"{r[0]}\n    " + "  ".join(cells[1:]) if alone else "  ".join(cells)
        out.write(text.rstrip() + "\n")


def _shared(occ: Occupancy, out: TextIO) -> None:
    out.write("\nGPUs shared by a scheduler (HAMi, Volcano vGPU), per card as that scheduler counts it:\n")
    rows = [("NODE", "SCHEDULER", "CARD", "TYPE", "MEM USED", "MEM FREE", "CORES USED", "CORES FREE", "SHARES",
             "HEALTH", "HANDSHAKE")]
    for c in occ.shared:
        age = "-" if c.handshake_age is None else f"{c.handshake_age}s ago"
        health = ("healthy" if c.healthy else "unhealthy") + (f"; {c.problem}" if c.problem else "")
        rows.append((printable(c.node), c.scheduler, printable(c.card), printable(c.type), f"{c.memory - c.memory_free} MiB",
                     f"{c.memory_free} MiB", f"{c.cores - c.cores_free}%", f"{c.cores_free}%",
                     f"{c.shares_used}/{c.shares}", printable(health), age))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)).rstrip() + "\n")


FORMAT = RenderFunction("table", NODES, render)
