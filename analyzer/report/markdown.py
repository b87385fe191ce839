"""`report -o markdown`: GitHub-flavoured Markdown for a ticket comment. Renders ReportData only.

A ticket comment holds at most 65,536 characters, so the page is written at the most detailed level
that fits under LIMIT; each shorter level names fewer pods per shape, fewer shapes per word and fewer
nodes per pool, and says what it left out. Bundle text goes through `_m`: control characters made
visible, `& < >` as entities (no HTML reaches the page), and Markdown's punctuation backslash-escaped
(no table cell broken by `|`, no code span opened by a backtick, no link, no emphasis).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from analyzer.output_format import REPORT, RenderFunction, Write
from analyzer.text import and_more, markdown_text as _m, target_mark
from analyzer.report.ticket_records import NodeRow, Pool, ReportData, ResourceBar, TargetRow, first_of

LIMIT = 65_000
BAR_CELLS = 10


@dataclass(frozen=True, kw_only=True)
class Level:
    names: int  # names listed per shape
    shapes: int  # shapes shown per word
    evidence: int  # evidence lines per shape
    nodes: int  # nodes listed per pool
    scheduler: bool  # the scheduler's sentence beside the rebuilt one


LEVELS: tuple[Level, ...] = (
    Level(names=1_000, shapes=1_000, evidence=50, nodes=1_000, scheduler=True),
    Level(names=50, shapes=25, evidence=8, nodes=40, scheduler=True),
    Level(names=20, shapes=15, evidence=6, nodes=25, scheduler=True),
    Level(names=10, shapes=10, evidence=5, nodes=15, scheduler=True),
    Level(names=10, shapes=8, evidence=4, nodes=10, scheduler=False),
    Level(names=5, shapes=5, evidence=3, nodes=6, scheduler=False),
    Level(names=3, shapes=3, evidence=2, nodes=3, scheduler=False),
    Level(names=3, shapes=2, evidence=1, nodes=3, scheduler=False),
    Level(names=2, shapes=1, evidence=1, nodes=2, scheduler=False),  # each word's largest shape, its action named
    Level(names=0, shapes=0, evidence=0, nodes=0, scheduler=False),
)


def render(data: ReportData, out: TextIO) -> None:
    out.write(render_text(data))


def render_text(data: ReportData, limit: int = LIMIT) -> str:
    """The most detailed level under `limit` characters; the last level is cut hard if even it is not."""
    text = ""
    for i, level in enumerate(LEVELS):
        text = _page(data, level, shortened=i > 0, limit=limit)
        if len(text) <= limit:
            return text
    note = "\n\n**Cut here: the report exceeds a ticket comment's limit even in its shortest form.**\n"
    return text[: limit - len(note)] + note


def _page(data: ReportData, level: Level, *, shortened: bool, limit: int) -> str:
    parts: list[str] = []
    w = parts.append
    h = data.header
    w(f"# GPU triage: {_m(h.context or h.bundle)}\n\n")
    if shortened:
        w(f"> Shortened to stay under {limit:,} characters (a ticket comment's limit): at most {level.names} names per "
          f"shape, {level.shapes} shapes per word and {level.nodes} nodes per pool; what is left out is counted below. "
          "`gpu-triage report -o html` has everything.\n\n")
    _header(data, w)
    _summary(data, w)
    _occupancy(data, level, w)
    _queues(data, w)
    _autoscalers(data, w)
    _targets(data, level, w)
    return "".join(parts)


def _header(data: ReportData, w: Write) -> None:
    h = data.header
    w("| | |\n|---|---|\n")
    w(f"| Context | {_m(h.context or 'not recorded (no manifest.json)')} |\n")
    w(f"| Server version | {_m(h.server_version or 'not recorded')} |\n")
    w(f"| Collected | {_m(h.collected or 'not recorded (no manifest.json)')} |\n")
    w(f"| Collector | {_m(h.collector or 'not recorded')} |\n")
    if h.archive:
        w(f"| Archive | {_m(h.archive)}: {_m(h.archive_lacks or '')} |\n")
    w(f"| Bundle | {_m(h.bundle)} |\n")
    w(f"| Written by | gpu-triage {_m(h.version)} |\n")
    w(f"| Completeness | {_m(h.completeness or 'every kind the analyzer reads is present')} |\n")
    if h.problem_count:
        w(f"| Validation | **{h.problem_count} finding(s)**: the answers skip or mark what they affect |\n")
    else:
        w("| Validation | valid: no schema, checksum or model finding |\n")
    for line in h.edited:
        w(f"| Edited | {_m(line)}; the answers are about the file as it is now |\n")
    for note in h.notes:
        w(f"| Note | {_m(note)} |\n")
    w("\n")
    if h.missing:  # what could not be collected or read, one line each, outside the table
        w("Not collected or unreadable:\n\n" + "".join(f"- {_m(x)}\n" for x in h.missing) + "\n")
    if h.problems:
        w(f"<details><summary>Validation findings ({h.problem_count})</summary>\n\n")
        for p in h.problems[:20]:
            w(f"- {_m(p)}\n")
        if h.problem_count > 20:
            w(f"- … {h.problem_count - 20} more (run `gpu-triage validate`)\n")
        w("\n</details>\n\n")


def _summary(data: ReportData, w: Write) -> None:
    w("## Summary\n\n")
    if not data.summary:
        w("No pod is Pending or without a node, and no manifest or owner was refused.\n\n")
        return
    w(f"_{_m(data.urgency_note)}._\n\n| Word | Targets | Next action |\n|---|--:|---|\n")
    for s in data.summary:
        w(f"| `{s.word}` | {s.targets} | {_m(s.next_action)} |\n")
    w(f"| **total** | **{data.target_count}** | |\n\n")


def _targets(data: ReportData, level: Level, w: Write) -> None:
    if not data.rows:
        return
    w("## Targets\n\n")
    for note in data.footnotes:
        w(f"_Note: {_m(note)}._\n\n")
    by_word: dict[str, list[TargetRow]] = {}
    for row in data.rows:
        by_word.setdefault(row.word, []).append(row)
    for s in data.summary:
        rows = by_word.get(s.word, [])
        w(f"### `{s.word}`: {s.targets} target(s) · next: {_m(s.next_action)}\n\n")
        for row in rows[: level.shapes]:
            _shape(row, level, w, s.next_action)
        hidden = rows[level.shapes:]
        if hidden:
            w(f"_… {len(hidden)} more shape(s) of `{s.word}` ({sum(r.count for r in hidden)} target(s)) left out._\n\n")


def _shape(row: TargetRow, level: Level, w: Write, said_above: str) -> None:
    """One shape: who, what it asks, the reason; its own next action when the word's line above does not say it."""
    mark = target_mark(row.kind, row.refused)
    kind = f" ({_m(mark)})" if mark else ""
    if row.count > 1:
        who = f"**{row.count} ×** {_m(row.owner) if row.owner else 'pods without an owner'}"
        who += f" ({_m(mark)})" if row.kind == "Attempt" else ""
    else:
        who = f"**{_m(row.names[0])}**{kind}" + (f", owner {_m(row.owner)}" if row.owner and row.kind == "Pod" else "")
    asks = f" (asks {_m(row.asks)})" if row.asks else ""
    w(f"- {who}{asks}: {_m(first_of(row) + row.reason)}\n")
    if row.next_action and row.next_action != said_above:
        w(f"  - **next{' for the first' if row.varies else ''}:** {_m(row.next_action)}\n")
    for line in row.evidence[: level.evidence]:
        w(f"  - {_m(line)}\n")
    if len(row.evidence) > level.evidence:
        w(f"  - … {len(row.evidence) - level.evidence} more evidence line(s) left out\n")
    s = row.scheduler
    if s is not None and level.scheduler:
        same = bool(s.rebuilt and s.said and s.said.startswith(s.rebuilt))
        tail = (["rebuilt from the bundle: the same sentence"] if same else [])
        tail += [n.removesuffix(" — supporting evidence only") for n in s.notes]
        w(f"  - scheduler said: {_m(s.said) if s.said else '_nothing recorded_'}"
          + (f" ({_m('; '.join(tail))})" if tail else "") + "\n")
        if not same:
            if s.rebuilt:
                w(f"  - rebuilt from the bundle: {_m(s.rebuilt)}\n")
            if s.comparison:
                w(f"  - {_m(s.comparison)}\n")
    if row.nearest is not None:
        if row.nearest:
            w("  - nearest nodes: " + "; ".join(f"**{_m(n.node)}**: {_m(n.reason)}" for n in row.nearest) + "\n")
        else:
            w("  - nearest nodes: none (no node would take it after one change)\n")
    if row.count > 1:
        shown = row.names[: level.names]
        left = row.count - len(shown)
        if shown:
            more = f", … {left} more left out" if left else ""
            w(f"\n  <details><summary>{row.count} names</summary>\n\n  " + ", ".join(_m(n) for n in shown) + f"{more}\n\n  </details>\n")
        else:
            w(f"  - {row.count} names left out\n")
    w("\n")


def _occupancy(data: ReportData, level: Level, w: Write) -> None:
    w("## GPU occupancy\n\n")
    if data.occupancy_note:
        w(f"_{_m(data.occupancy_note)}_\n\n")
    if not data.pools:
        return
    w("Per node and accelerator resource: █ used, ░ free for the waiting pods, ▒ free behind a taint no waiting pod "
      "tolerates, · capacity not allocatable. Used = requests of pods bound to the node and not finished. Tainted and "
      "empty nodes included.\n\n")
    w("| Pool | Resource | Nodes | Allocatable | Used | Free | Behind a taint |\n|---|---|--:|--:|--:|--:|--:|\n")
    for pool in data.pools:
        for r, alloc, used, free, behind in pool.totals():
            w(f"| {_m(pool.name)} | {_m(r)} | {len(pool.nodes)} | {alloc} | {used} | {free} | {behind} |\n")
    w("\n")
    if level.nodes == 0:
        w(f"_The per-node rows ({sum(len(p.nodes) for p in data.pools)} nodes) are left out._\n")
        return
    for pool in data.pools:
        _pool(pool, level, w)


def _queues(data: ReportData, w: Write) -> None:
    if not data.queues:
        return
    w("## Queues\n\nKueue's ClusterQueues per flavor and GPU resource (reserved beyond the nominal: borrowed).\n\n"
      "| ClusterQueue | Cohort | Flavor | Resource | Nominal | Reserved | Borrowed | Reserved by | Waiting |\n"
      "|---|---|---|---|--:|--:|--:|---|--:|\n")
    for r in data.queues:
        reserved = f"**{r.reserved}**" if r.alert else str(r.reserved)
        w(f"| {_m(r.cluster_queue)} | {_m(r.cohort)} | {_m(r.flavor)} | {_m(r.resource)} | {r.nominal} | {reserved} | "
          f"{r.borrowed or ''} | {_m(r.held_by)} | {r.waiting or ''} |\n")
    w("\n")


def _autoscalers(data: ReportData, w: Write) -> None:
    if not data.autoscalers:
        return
    w("## Autoscalers\n\nNode groups (cluster-autoscaler's status), NodePools (limits against usage), NodeClaims "
      "still on their way; GPU ones first.\n\n| Kind | Name | GPU | Size or limits | State |\n|---|---|---|---|---|\n")
    for r in data.autoscalers:
        state = f"**{_m(r.state)}**" if r.alert else _m(r.state)
        w(f"| {_m(r.kind)} | {_m(r.name)} | {'yes' if r.gpu else ''} | {_m(r.size)} | {state} |\n")
    w("\n")


def _pool(pool: Pool, level: Level, w: Write) -> None:
    w(f"### Pool {_m(pool.name)} ({len(pool.nodes)} node(s))\n\n")
    w("| Node | State | Resource | Bar | Allocatable | Used | Free | Held by | Waiting for it |\n"
      "|---|---|---|---|--:|--:|--:|---|---|\n")
    for node in pool.nodes[: level.nodes]:
        _node(node, w)
    shown = [n for n in pool.nodes[: level.nodes] if n.shared_cards]
    if shown:
        w("\nGPUs shared by a scheduler, per card as it counts them:\n\n")
        for node in shown:
            w(f"- {_m(node.name)}: " + "; ".join(_m(line) for line in node.shared_cards[:1]) + "\n")
            for line in node.shared_cards[1:]:
                w(f"  - {_m(line)}\n")
    hidden = pool.nodes[level.nodes:]
    if hidden:
        free = sum(b.usable for n in hidden for b in n.resources)
        broken = sum(1 for n in hidden if n.broken)
        w(f"\n_… {len(hidden)} more node(s) in this pool left out ({broken} tainted, cordoned or broken; {free} free unit(s) among them)._\n")
    w("\n")


def _node(node: NodeRow, w: Write) -> None:
    for bar in node.resources:
        states = ", ".join(_m(s) for s in (*node.states, *bar.states,
                                           *(f"not started: {p}" for p in node.not_started))) or "schedulable"
        if bar.capacity is None and bar.allocatable is None:
            alloc, free = "—", "—"
        else:
            alloc = str(bar.allocatable or 0) + (f" of {bar.capacity}" if bar.capacity is not None and bar.capacity != (bar.allocatable or 0) else "")
            free = f"**{bar.usable}**" + (f" (+{bar.behind_taint} behind the taint)" if bar.behind_taint else "")
        waiting = ", ".join(_m(k) + (" (taint not tolerated)" if bar.behind_taint and k not in bar.tolerating else "")
                            for k in bar.wanting[:3]) + and_more(len(bar.wanting) - 3)
        resource = _m(bar.resource) + (f" ({_m(bar.sharing)})" if bar.sharing else "")
        w(f"| {_m(node.name)} | {states} | {resource} | {_bar(bar)} | {alloc} | {bar.used} | {free} | "
          f"{_holders(bar)} | {waiting} |\n")


def _bar(bar: ResourceBar) -> str:
    alloc = bar.allocatable or 0
    scale = max(bar.capacity or 0, alloc, bar.used)
    if scale == 0:
        return "not reported"
    cells = min(scale, BAR_CELLS)

    def n(units: int) -> int:
        return round(cells * units / scale)
    used = n(min(bar.used, scale))
    free = n(bar.usable)
    behind = n(bar.behind_taint)
    rest = max(0, cells - used - free - behind)
    return "█" * used + "░" * free + "▒" * behind + "·" * rest


def _holders(bar: ResourceBar) -> str:
    return ", ".join(f"{_m(h.key)} {h.units}" for h in bar.holders) + and_more(bar.holders_more)


FORMAT = RenderFunction("markdown", REPORT, render)

__all__ = ["FORMAT", "LIMIT", "render", "render_text"]
