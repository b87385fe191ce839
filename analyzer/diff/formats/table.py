"""`diff -o table`: sections in a fixed order; every name from a bundle through printable()."""

from __future__ import annotations

from typing import TextIO

from analyzer.diff.formats import not_collected_lines, quota_pair, triple
from analyzer.diff.records import Diff
from analyzer.output_format import DIFF, RenderFunction
from analyzer.text import printable as p, value_text


def render(d: Diff, out: TextIO) -> None:
    c = d.collection
    w = out.write
    w(f"OLD  {p(c.old_label)}  collected {p(c.old_created or 'unknown (no manifest)')}  context {p(c.old_context or '-')}\n")
    w(f"NEW  {p(c.new_label)}  collected {p(c.new_created or 'unknown (no manifest)')}  context {p(c.new_context or '-')}\n")
    if not (c.only_old or c.only_new or c.status_changed or c.not_collected):
        w("Collected: the same files in both.\n")
    for line in not_collected_lines(c.not_collected):
        w(f"Collected: {p(line)}\n")
    for f in c.only_old:
        w(f"Collected: {p(f)} only in OLD\n")
    for f in c.only_new:
        w(f"Collected: {p(f)} only in NEW\n")
    for f, a, b in c.status_changed:
        w(f"Collected: {p(f)} {p(a)} in OLD, {p(b)} in NEW\n")

    w(f"\nTargets: {len(d.appeared)} appeared, {len(d.resolved)} resolved, {len(d.changed)} changed word\n")
    for t in d.appeared:
        w(f"  appeared  {p(t.key)}  {t.after}: {p(t.why)}\n")
    for t in d.resolved:
        w(f"  resolved  {p(t.key)}  was {t.before}: {p(t.why)}\n")
    for t in d.changed:
        w(f"  changed   {p(t.key)}  {t.before} -> {t.after}: {p(t.why)}\n")

    w(f"\nGPU nodes: {len(d.nodes)} changed\n")
    for n in d.nodes:
        if n.kind != "changed":
            w(f"  {p(n.node)}  {n.kind}\n")
        for ch in n.changes:
            w(f"  {p(n.node)}  {ch.field}: {p(value_text(ch.before))} -> {p(value_text(ch.after))}\n")

    w("\nGPU per pool (allocatable/used/free)\n")
    if not d.pools:
        w("  no accelerator nodes in either bundle\n")
    for r in d.pools:
        mark = "  changed" if r.changed else ""
        w(f"  {p(r.pool)}  {p(r.resource)}  {triple(r.before)} -> {triple(r.after)}{mark}\n")

    if d.quotas is None:
        w("\nQuotas: resourcequotas.json in neither bundle\n")
    else:
        w(f"\nQuotas: {len(d.quotas)} changed\n")
        for q in d.quotas:
            w(f"  {p(q.namespace)}/{p(q.quota)}  {p(q.key)}  {p(quota_pair(q.before))} -> {p(quota_pair(q.after))}\n")


FORMAT = RenderFunction("table", DIFF, render)
