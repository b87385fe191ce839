"""`report -o html`: one self-contained page for a ticket. Renders ReportData only; computes nothing.

Inline CSS and SVG, no script, no font, no image, no link to anything: the Content-Security-Policy
forbids every request, so even a name that smuggles markup could not fetch a thing. Every text that
comes from the bundle goes through `_e` (control characters made visible, then html.escape).
"""

from __future__ import annotations

import html
from typing import TextIO

from analyzer.model.dra.extended import IMPLICIT_EXTENDED_PREFIX
from analyzer.output_format import REPORT, RenderFunction, Write
from analyzer.text import REFUSED, and_more, printable, target_mark
from analyzer.report.ticket_records import NodeRow, Pool, ReportData, ResourceBar, TargetRow, first_of

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
NAMES_OPEN = 3  # names shown before the rest collapse into <details>
HOLDERS_OPEN = 2  # holders shown inline per node and resource
OPEN_POOL = 30  # a pool with more nodes starts collapsed: its summary line still shows its totals
BAR_W, BAR_H = 96, 14
READY = '<span class="muted">schedulable</span>'

# Word colours by the part of causes.md they come from: refused before creation, the spec and the
# cluster's objects, capacity, and the answers that are not a failure.
_WORD_CLASS = {
    "no-runtimeclass": "adm", "quota-exceeded": "adm",
    "no-gpu-request": "spec", "scheduling-gated": "spec", "node-side": "node",
    "selector-mismatch": "spec", "cordoned": "node", "node-unhealthy": "node", "untolerated-taint": "node",
    "no-gpu-node": "node", "allocatable-zero": "node", "exhausted": "cap",
    "unclassified": "other", "fits-now": "ok", "running": "ok", "insufficient-evidence": "other",
}

STYLE = """
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0;background:#f4f5f7;color:#16191d}
main{max-width:1240px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px;border-bottom:2px solid #d5d9e0;padding-bottom:4px}
h3{font-size:16px;margin:18px 0 6px}
code,.mono{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:13px}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:10px 0 0;background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:10px 14px}
.meta dt{color:#59606b}.meta dd{margin:0}.meta dd{grid-column:2}.meta dt{grid-column:1}.meta ul{margin:2px 0;padding-left:18px}
nav{margin:8px 0 0;font-size:14px}nav a{margin-right:14px}
h3 .nx{font-weight:400;font-size:14.5px;color:#3b414a}
.warn{color:#8a4b00}.bad{color:#a3141c;font-weight:600}.muted{color:#59606b}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d5d9e0}
th,td{text-align:left;vertical-align:top;padding:5px 9px;border-bottom:1px solid #e6e8ec}
th{background:#eceef2;font-weight:600;font-size:13px;color:#3b414a}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.w{display:inline-block;padding:1px 8px;border-radius:10px;font:600 13px/1.5 ui-monospace,Menlo,Consolas,monospace;white-space:nowrap;color:#fff}
.w.adm{background:#a3141c}.w.spec{background:#7b3fb0}.w.node{background:#b35300}.w.cap{background:#8a6d00}
.w.ok{background:#1f7a3a}.w.other{background:#4d5560}
.card{background:#fff;border:1px solid #d5d9e0;border-left:6px solid #4d5560;border-radius:6px;padding:6px 12px;margin:6px 0}
.card.adm{border-left-color:#a3141c}.card.spec{border-left-color:#7b3fb0}.card.node{border-left-color:#b35300}
.card.cap{border-left-color:#8a6d00}.card.ok{border-left-color:#1f7a3a}
.card .head{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.card .count{font-weight:700}.card .who{font-weight:600;word-break:break-all}
.reason{margin:3px 0 2px;font-size:15.5px}.next{margin:2px 0 6px}.next b{color:#1f4f99}
.card ul{margin:4px 0;padding-left:20px}.card li{margin:1px 0}
.near{background:#eef6ee;border:1px solid #c9e3cb;border-radius:4px;padding:6px 8px;margin:6px 0}
details summary{cursor:pointer;color:#1f4f99}
.legend{display:flex;gap:16px;flex-wrap:wrap;font-size:13px;margin:4px 0 8px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:4px}
svg.bar rect.u,.sw.u{fill:#c2410c;background:#c2410c}svg.bar rect.f,.sw.f{fill:#16a34a;background:#16a34a}
svg.bar rect.x,.sw.x{fill:#9ca3af;background:#9ca3af}svg.bar rect.t,.sw.t{fill:#e8b931;background:#e8b931}svg.bar rect.bg{fill:#eef0f3;stroke:#b8bec8}
.state{overflow-wrap:break-word;display:inline-block;margin:0 4px 2px 0;padding:0 6px;border-radius:3px;font-size:12.5px;background:#fdecc8;color:#6b3a00}
.state.bad{background:#fbd5d5;color:#8b1116;font-weight:600}
details.pool{margin:8px 0}details.pool>summary{background:#e3e9f3;padding:6px 10px;border:1px solid #d5d9e0;border-radius:4px;color:#16191d}
td.nn{font-weight:600;overflow-wrap:anywhere;min-width:10ch;max-width:22ch}td.rs code{white-space:nowrap}
.said{margin:3px 0}.said .lbl{font-size:12px;color:#59606b;font-weight:600;text-transform:uppercase;letter-spacing:.03em;margin-right:6px}
.src{font-size:12.5px;color:#59606b}
td.st{max-width:30ch}td.held{min-width:12ch;overflow-wrap:anywhere}td.held ul{margin:2px 0;padding-left:16px}
footer{margin-top:30px;font-size:12.5px;color:#59606b}
"""


def _e(text: object) -> str:
    """Bundle text for the page: control characters made visible, then HTML-escaped (quotes too)."""
    return html.escape(printable(str(text)), quote=True)


def render(data: ReportData, out: TextIO) -> None:
    w = out.write
    h = data.header
    title = f"GPU triage — {h.context or h.bundle}"
    w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
    w(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n')
    w('<meta name="referrer" content="no-referrer">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n')
    w(f"<title>{_e(title)}</title>\n<style>{STYLE}</style></head>\n<body><main>\n")
    _header(data, w)
    _summary(data, w)
    _occupancy(data, w)
    _queues(data, w)
    _autoscalers(data, w)
    _targets(data, w)
    w(f"<footer>Written by gpu-triage {_e(h.version)} from the bundle alone, offline. The scheduler's own message is "
      "shown as evidence and never decides a word.</footer>\n")
    w("</main></body></html>\n")


def _header(data: ReportData, w: Write) -> None:
    h = data.header
    w(f"<h1>GPU triage: {_e(h.context or h.bundle)}</h1>\n")
    if not data.target_count:
        w('<p>No pod is Pending or without a node, and no manifest or owner was refused.</p>\n')
    w('<dl class="meta">\n')
    short = [("Context", _e(h.context or "not recorded (no manifest.json)")), ("Bundle", _e(h.bundle)),
             ("Server version", _e(h.server_version or "not recorded")),
             ("Collected", _e(h.collected or "not recorded (no manifest.json)")),
             ("Collector", _e(h.collector or "not recorded")), ("Written by", _e(f"gpu-triage {h.version}")),
             *((("Archive", _e(f"{h.archive}: {h.archive_lacks or ''}")),) if h.archive else ()),
             ("Targets", _e(_targets_line(data)))]
    for k, v in short:
        w(f"<dt>{k}</dt><dd>{v}</dd>\n")
    wide: list[tuple[str, str]] = []
    text = _e(h.completeness) if h.completeness else "every kind the analyzer reads is present"
    if h.missing:
        text = f'<span class="warn">{text}</span>' + "<ul>" + "".join(f"<li>{_e(m)}</li>" for m in h.missing) + "</ul>"
    wide.append(("Completeness", text))
    if h.problem_count:
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in h.problems)
        more = f"<li>… {h.problem_count - len(h.problems)} more (run <code>gpu-triage validate</code>)</li>" if h.problem_count > len(h.problems) else ""
        wide.append(("Validation", f'<span class="bad">{h.problem_count} finding(s): the answers skip or mark what they affect</span><ul>{items}{more}</ul>'))
    else:
        wide.append(("Validation", "valid: no schema, checksum or model finding"))
    for line in h.edited:
        wide.append(("Edited", f'<span class="warn">{_e(line)}</span>; the answers are about the file as it is now'))
    for note in h.notes:
        wide.append(("Note", _e(note)))
    for k, v in wide:
        w(f'<dt>{k}</dt><dd class="wide">{v}</dd>\n')
    w("</dl>\n")


def _targets_line(data: ReportData) -> str:
    def count(kind: str, refused: bool) -> int:
        return sum(r.count for r in data.rows if (r.kind == kind or kind == "owner" and r.kind not in ("Pod", "Attempt"))
                   and r.refused == refused)

    parts = []
    for n, what in ((count("Attempt", True), f"manifest(s) {REFUSED}"),
                    (count("owner", True), f"controller(s) whose pods were {REFUSED}"),
                    (count("Pod", False), "pod(s) that will not start"),
                    (count("Attempt", False), "manifest(s) judged before they are created"),
                    (count("owner", False), "workload(s) a queue holds")):
        if n:
            parts.append(f"{n} {what}")
    return "; ".join(parts) or "none"


def _word(word: str) -> str:
    return f'<span class="w {_WORD_CLASS.get(word, "other")}">{_e(word)}</span>'


def _summary(data: ReportData, w: Write) -> None:
    if not data.summary:
        return
    w(f'<h2 id="summary">Summary</h2>\n<p class="muted">{_e(data.urgency_note)}.</p>\n')
    w('<table><tr><th>Word</th><th>Targets</th><th>Which</th><th>Next action</th></tr>\n')
    names: dict[str, list[str]] = {}
    for row in data.rows:
        names.setdefault(row.word, []).extend(row.names)
    for s in data.summary:
        who = names.get(s.word, [])
        shown = ", ".join(f"<code>{_e(n)}</code>" for n in who[:NAMES_OPEN]) + (f" +{len(who) - NAMES_OPEN}" if len(who) > NAMES_OPEN else "")
        w(f'<tr><td><a href="#w-{_e(s.word)}">{_word(s.word)}</a></td><td class="n">{s.targets}</td><td>{shown}</td>'
          f'<td>{_e(s.next_action)}</td></tr>\n')
    w(f'<tr><td><b>total</b></td><td class="n"><b>{data.target_count}</b></td><td></td><td></td></tr>\n</table>\n')


def _targets(data: ReportData, w: Write) -> None:
    if not data.rows:
        return
    w('<h2 id="targets">Targets</h2>\n')
    for note in data.footnotes:
        w(f'<p class="muted">Note: {_e(note)}.</p>\n')
    counts = {s.word: s for s in data.summary}
    current = None
    for row in data.rows:
        if row.word != current:
            current = row.word
            c = counts.get(row.word)
            n = f"{c.targets} target(s)" if c else ""
            said = c.next_action if c else row.next_action
            w(f'<h3 id="w-{_e(row.word)}">{_word(row.word)} <span class="nx">{n} — next: {_e(said)}</span></h3>\n')
        _card(row, w, said)


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(f"<code>{_e(n)}</code>" for n in names[:NAMES_OPEN])
    if len(names) <= NAMES_OPEN:
        return shown
    rest = "".join(f"<li><code>{_e(n)}</code></li>" for n in names)
    return f"{shown} … <details><summary>all {len(names)} names</summary><ul>{rest}</ul></details>"


def _card(row: TargetRow, w: Write, said_above: str) -> None:
    """One shape, said once: who, the reason, its own next action when the word's heading does not say it, what
    else the evidence adds, the scheduler's sentence."""
    cls = _WORD_CLASS.get(row.word, "other")
    count = f'<span class="count">{row.count} ×</span>' if row.count > 1 else ""
    who = f"<span class=\"who\">{_e(row.owner)}</span>" if row.owner and row.count > 1 else f'<span class="who">{_e(row.names[0])}</span>'
    mark = target_mark(row.kind, row.refused)
    kind = f'<span class="{"warn" if row.refused else "muted"}">{_e(mark)}</span>' if mark else ""
    owner = f'<span class="muted">owner {_e(row.owner)}</span>' if row.owner and row.kind == "Pod" and row.count == 1 else ""
    asks = f'<span class="muted">asks {_e(row.asks)}</span>' if row.asks else ""
    w(f'<div class="card {cls}"><div class="head">{count} {who} {kind}{owner}{asks}</div>\n')
    if row.count > 1:
        w(f'<div>{_names(row.names)}</div>\n')
    w(f'<p class="reason">{_e(first_of(row) + row.reason)}</p>\n')
    if row.next_action and row.next_action != said_above:
        w(f'<p class="next"><b>next{" for the first" if row.varies else ""}:</b> {_e(row.next_action)}</p>\n')
    if row.evidence:
        w("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in row.evidence) + "</ul>\n")
    s = row.scheduler
    if s is not None:
        said = f"<code>{_e(s.said)}</code> <span class=\"muted\">({_e(s.source or '')})</span>" if s.said else '<span class="muted">nothing recorded</span>'
        same = bool(s.rebuilt and s.said and s.said.startswith(s.rebuilt))
        tail = ["rebuilt from the bundle: the same sentence"] if same else []
        tail += [n.removesuffix(" — supporting evidence only") for n in s.notes]
        agrees = f' — <span class="muted">{_e("; ".join(tail))}</span>' if tail else ""
        w(f'<p class="said"><span class="lbl">The scheduler said</span> {said}{agrees}</p>\n')
        if not same:
            rebuilt = f"<code>{_e(s.rebuilt)}</code>" if s.rebuilt else '<span class="muted">not rebuilt for this target</span>'
            comparison = f' <span class="muted">({_e(s.comparison)})</span>' if s.comparison else ""
            w(f'<p class="said"><span class="lbl">Rebuilt from the bundle</span> {rebuilt}{comparison}</p>\n')
    if row.nearest is not None:
        if row.nearest:
            items = "".join(f"<li><b class=\"mono\">{_e(n.node)}</b>: {_e(n.reason)}</li>" for n in row.nearest)
            w(f'<div class="near"><b>Nearest nodes</b> (one change away):<ul>{items}</ul></div>\n')
        else:
            w('<div class="near"><b>Nearest nodes:</b> none — no node would take it after one change.</div>\n')
    w(f'<div class="src">source: <code>{_e(row.source)}</code></div></div>\n')


def _occupancy(data: ReportData, w: Write) -> None:
    w('<h2 id="occupancy">GPU occupancy</h2>\n')
    if data.occupancy_note:
        w(f'<p class="warn">{_e(data.occupancy_note)}</p>\n')
    if not data.pools:
        return
    w('<div class="legend"><span><i class="sw u"></i>used</span><span><i class="sw f"></i>free for the waiting pods</span>'
      '<span><i class="sw t"></i>free, behind a taint no waiting pod tolerates</span>'
      '<span><i class="sw x"></i>capacity not allocatable</span><span class="muted">per node and accelerator resource; '
      'used = requests of pods bound to the node and not finished</span></div>\n')
    for pool in data.pools:
        _pool(pool, w)


def _queues(data: ReportData, w: Write) -> None:
    if not data.queues:
        return
    w('<h2 id="queues">Queues</h2>\n<p class="muted">Kueue\'s ClusterQueues per flavor and GPU resource: the nominal '
      'quota, what admitted workloads reserve (beyond the nominal: borrowed from the cohort) and how many wait</p>\n')
    w("<table><tr><th>ClusterQueue</th><th>Cohort</th><th>Flavor</th><th>Resource</th><th>Nominal</th>"
      "<th>Reserved</th><th>Borrowed</th><th>Reserved by</th><th>Waiting</th></tr>\n")
    for r in data.queues:
        left = f'<span class="warn">{r.reserved}</span>' if r.alert else str(r.reserved)
        w(f"<tr><td><code>{_e(r.cluster_queue)}</code></td><td>{_e(r.cohort)}</td><td>{_e(r.flavor)}</td>"
          f"<td><code>{_e(r.resource)}</code></td><td>{r.nominal}</td><td>{left}</td><td>{r.borrowed or ''}</td>"
          f"<td>{_e(r.held_by)}</td><td>{r.waiting or ''}</td></tr>\n")
    w("</table>\n")


def _autoscalers(data: ReportData, w: Write) -> None:
    if not data.autoscalers:
        return
    w('<h2 id="autoscalers">Autoscalers</h2>\n<p class="muted">cluster-autoscaler\'s node groups (its status '
      'ConfigMap), Karpenter\'s NodePools (limits against usage) and the NodeClaims still on their way; GPU ones '
      'first (a group is marked GPU when a GPU pod\'s scale-up named it)</p>\n')
    w("<table><tr><th>Kind</th><th>Name</th><th>GPU</th><th>Size or limits</th><th>State</th></tr>\n")
    for r in data.autoscalers:
        state = f'<span class="warn">{_e(r.state)}</span>' if r.alert else _e(r.state)
        w(f"<tr><td>{_e(r.kind)}</td><td><code>{_e(r.name)}</code></td><td>{'yes' if r.gpu else ''}</td>"
          f"<td>{_e(r.size)}</td><td>{state}</td></tr>\n")
    w("</table>\n")


def _pool(pool: Pool, w: Write) -> None:
    totals = "; ".join(f"<code>{_e(_resource(r))}</code> <b>{free} free</b>" + (f", {behind} behind a taint" if behind else "")
                       + f", {used} used, of {alloc}" for r, alloc, used, free, behind in pool.totals())
    states = ", ".join(f"{n} {_e(s)}" for s, n in pool.state_counts())
    state = f' — <span class="warn">{states}</span>' if states else ""
    opened = " open" if len(pool.nodes) <= OPEN_POOL else ""
    w(f'<details class="pool"{opened}><summary>Pool <b>{_e(pool.name)}</b>: {len(pool.nodes)} node(s){state} — {totals}</summary>\n')
    w('<table><tr><th>Node</th><th>State</th><th>Resource</th><th>Used / free</th><th>Allocatable</th><th>Used</th>'
      '<th>Free</th><th>Held by</th><th title="pending pods asking for this resource whose nodeSelector matches the node">Waiting for it</th></tr>\n')
    for node in pool.nodes:
        _node(node, w)
    w("</table></details>\n")


def _resource(name: str) -> str:
    """DRA devices per DeviceClass read as the class (the implicit resource name is long and says less)."""
    return f"DeviceClass {name[len(IMPLICIT_EXTENDED_PREFIX):]}" if name.startswith(IMPLICIT_EXTENDED_PREFIX) else name


def _node(node: NodeRow, w: Write) -> None:
    """One row per resource; the node's name and its states span them (a taint is the node's, not the MIG profile's)."""
    span = len(node.resources)
    rs = f' rowspan="{span}"' if span > 1 else ""
    states = "".join(_state(s) for s in node.states)
    for bar in node.resources:
        prefix = f"{_resource(bar.resource)}: " if span > 1 else ""
        states += "".join(_state(prefix + s) for s in bar.states)
    for i, bar in enumerate(node.resources):
        w("<tr>")
        if i == 0:
            stuck = "".join(f'<br><span class="state bad">not started: {_e(p)}</span>' for p in node.not_started)
            stuck += "".join(f'<br><span class="muted">{_e(line)}</span>' for line in node.shared_cards)
            w(f'<td class="nn"{rs}>{_e(node.name)}</td><td class="st"{rs}>{states or READY}{stuck}</td>')
        sharing = f' <span class="muted">({_e(bar.sharing)})</span>' if bar.sharing else ""
        w(f"<td class=\"rs\"><code>{_e(_resource(bar.resource))}</code>{sharing}</td><td>{_bar(bar)}</td>{_numbers(bar)}"
          f"<td class=\"held\">{_holders(bar)}</td><td class=\"held\">{_waiting(bar)}</td></tr>\n")


def _waiting(bar: ResourceBar) -> str:
    """The waiting pods by name; one that a taint keeps out is marked so."""
    if not bar.wanting:
        return ""
    out = []
    for k in bar.wanting[:HOLDERS_OPEN + 1]:
        keeps_out = bar.behind_taint and k not in bar.tolerating
        out.append(f"<code>{_e(k)}</code>" + (' <span class="muted">(taint not tolerated)</span>' if keeps_out else ""))
    return ", ".join(out) + and_more(len(bar.wanting) - len(out))


def _state(text: str) -> str:
    bad = not text.startswith("tainted")
    return f'<span class="state{" bad" if bad else ""}">{_e(text)}</span>'


def _numbers(bar: ResourceBar) -> str:
    if bar.capacity is None and bar.allocatable is None:
        return '<td class="n muted">—</td><td class="n">' + (str(bar.used) if bar.used else "") + '</td><td class="n muted">—</td>'
    alloc = str(bar.allocatable or 0)
    if bar.capacity is not None and bar.capacity != (bar.allocatable or 0):
        alloc += f' <span class="muted">of {bar.capacity}</span>'
    free = f"<b>{bar.usable}</b>" + (f'<br><span class="muted">+{bar.behind_taint} behind the taint</span>' if bar.behind_taint else "")
    return f'<td class="n">{alloc}</td><td class="n">{bar.used}</td><td class="n">{free}</td>'


def _bar(bar: ResourceBar) -> str:
    """allocatable = used + free, drawn to the scale of capacity so 'capacity 4, allocatable 0' shows grey."""
    alloc = bar.allocatable or 0
    scale = max(bar.capacity or 0, alloc, bar.used)
    label = f"{bar.used} used, {bar.usable} free, {bar.behind_taint} behind a taint, of {alloc} allocatable"
    if scale == 0:
        return f'<svg class="bar" width="{BAR_W}" height="{BAR_H}" role="img" aria-label="not reported"><rect class="bg" x=".5" y=".5" width="{BAR_W - 1}" height="{BAR_H - 1}"/></svg>'
    parts = [f'<svg class="bar" width="{BAR_W}" height="{BAR_H}" role="img" aria-label="{label}">'
             f'<rect class="bg" x=".5" y=".5" width="{BAR_W - 1}" height="{BAR_H - 1}"/>']
    x = 0.0
    for cls, units in (("u", min(bar.used, scale)), ("f", bar.usable), ("t", bar.behind_taint),
                       ("x", max(0, (bar.capacity or 0) - max(alloc, bar.used)))):
        if units > 0:
            width = BAR_W * units / scale
            parts.append(f'<rect class="{cls}" x="{x:.1f}" y="1" width="{width:.1f}" height="{BAR_H - 2}"/>')
            x += width
    parts.append("</svg>")
    return "".join(parts)


def _holders(bar: ResourceBar) -> str:
    """Two holders inline; more fold into <details> so a node with 16 MIG slices keeps its row short."""
    if not bar.holders:
        return ""
    items = [f"<code>{_e(h.key)}</code> {h.units}" for h in bar.holders]
    total = len(items) + bar.holders_more
    more = f"<li class=\"muted\">+{bar.holders_more} more</li>" if bar.holders_more else ""
    if total <= HOLDERS_OPEN:
        return ", ".join(items)
    return (", ".join(items[:HOLDERS_OPEN]) + f"<details><summary>{total} pods</summary><ul>"
            + "".join(f"<li>{x}</li>" for x in items) + more + "</ul></details>")


FORMAT = RenderFunction("html", REPORT, render)

__all__ = ["CSP", "FORMAT", "render"]
