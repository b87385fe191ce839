"""`diff -o markdown`: GitHub-flavoured Markdown for a ticket. Every name from a bundle goes through md():
control characters escaped, HTML neutralised, Markdown syntax (pipes, emphasis, links, code) backslashed."""

from __future__ import annotations

from typing import Sequence, TextIO

from analyzer.diff.formats import not_collected_lines, quota_pair, triple
from analyzer.diff.records import Diff
from analyzer.output_format import DIFF, RenderFunction
from analyzer.text import markdown_text, value_text


def md(text: str) -> str:
    """Safe inside a table cell or a list item: one line, no HTML (quotes as entities too), no Markdown syntax."""
    return markdown_text(text, quote=True)


def _table(out: TextIO, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    out.write("| " + " | ".join(header) + " |\n")
    out.write("|" + "|".join("---" for _ in header) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(r) + " |\n")


def render(d: Diff, out: TextIO) -> None:
    c = d.collection
    w = out.write
    w("## gpu-triage diff\n\n")
    _table(out, ("", "bundle", "collected", "context"), [
        ("old", md(c.old_label), md(c.old_created or "unknown (no manifest)"), md(c.old_context or "-")),
        ("new", md(c.new_label), md(c.new_created or "unknown (no manifest)"), md(c.new_context or "-"))])
    w("\n")
    if not (c.only_old or c.only_new or c.status_changed or c.not_collected):
        w("Both bundles collected the same files.\n")
    for line in not_collected_lines(c.not_collected):
        w(f"- {md(line)}\n")
    for f in c.only_old:
        w(f"- {md(f)} collected only in the old bundle\n")
    for f in c.only_new:
        w(f"- {md(f)} collected only in the new bundle\n")
    for f, a, b in c.status_changed:
        w(f"- {md(f)}: {md(a)} in the old bundle, {md(b)} in the new\n")

    w(f"\n### Targets\n\n{len(d.appeared)} appeared, {len(d.resolved)} resolved, {len(d.changed)} changed word.\n\n")
    rows = [("appeared", md(t.key), "-", md(t.after or "-"), md(t.why)) for t in d.appeared]
    rows += [("resolved", md(t.key), md(t.before or "-"), "-", md(t.why)) for t in d.resolved]
    rows += [("changed", md(t.key), md(t.before or "-"), md(t.after or "-"), md(t.why)) for t in d.changed]
    if rows:
        _table(out, ("change", "target", "old word", "new word", "why"), rows)

    w("\n### GPU nodes\n\n")
    node_rows = []
    for n in d.nodes:
        if n.kind != "changed":
            node_rows.append((md(n.node), n.kind, "", ""))
        for ch in n.changes:
            node_rows.append((md(n.node), md(ch.field), md(value_text(ch.before)), md(value_text(ch.after))))
    if node_rows:
        _table(out, ("node", "what", "old", "new"), node_rows)
    else:
        w("No GPU node changed.\n")

    w("\n### GPU per pool (allocatable/used/free)\n\n")
    if d.pools:
        _table(out, ("pool", "resource", "old", "new", ""), [
            (md(r.pool), md(r.resource), triple(r.before), triple(r.after), "changed" if r.changed else "")
            for r in d.pools])
    else:
        w("No accelerator nodes in either bundle.\n")

    w("\n### Quotas\n\n")
    if d.quotas is None:
        w("resourcequotas.json is in neither bundle.\n")
    elif not d.quotas:
        w("No quota changed.\n")
    else:
        _table(out, ("namespace/quota", "key", "old", "new"), [
            (f"{md(q.namespace)}/{md(q.quota)}", md(q.key), md(quota_pair(q.before)), md(quota_pair(q.after)))
            for q in d.quotas])


FORMAT = RenderFunction("markdown", DIFF, render)
