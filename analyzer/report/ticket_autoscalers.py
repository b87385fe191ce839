"""The autoscalers' state as report rows, beside the GPU occupancy picture (autoscalers.md): cluster-autoscaler's
node groups (min / max / target / registered, scale-up state and backoff), Karpenter's NodePools (limits against
usage) and the NodeClaims still on their way. Built from the model (model/autoscalers.py); nothing is judged here."""

from __future__ import annotations

import re

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.autoscalers import Autoscalers
from analyzer.model.quantity import format_units
from analyzer.report.ticket_records import AutoscalerRow

_GROUP = re.compile(r"\{(\S+) \d+->\d+ \(max: \d+\)\}")


def autoscaler_rows(a: Autoscalers | None, config: AcceleratorConfig) -> list[AutoscalerRow]:
    if a is None:
        return []
    asked = {g for said in a.said.values() for s in said if s.reason == "TriggeredScaleUp"
             for g in _GROUP.findall(s.message)}
    rows = []
    for g in (a.ca.groups.values() if a.ca is not None else ()):
        size = f"min {g.min_size} / max {g.max_size} / target {g.target} / registered {g.registered}" + (
            f" (+{g.unregistered} unregistered)" if g.unregistered else "")
        state = g.scale_up + (f": {g.backoff}" if g.backoff else "") + ("; at max" if g.at_max else "")
        rows.append(AutoscalerRow(kind="node group", name=g.name, size=size, state=state or "unknown",
                                  gpu=g.name in asked, alert=g.at_max or g.scale_up == "Backoff"))
    for p in (a.nodepools or {}).values():
        limited = config.resource_order(set(p.limits)) if p.limits else []
        size = "; ".join(f"{r}: {format_units(r, p.usage.get(r, 0))} of limit {format_units(r, p.limits[r])}"
                         for r in limited) or "no limits"
        full = [r for r in limited if p.usage.get(r, 0) >= p.limits[r]]
        gpu = any(config.is_accelerator(r) and (p.limits.get(r) or p.usage.get(r)) for r in {*p.limits, *p.usage})
        rows.append(AutoscalerRow(kind="NodePool", name=p.name, size=size,
                                  state=f"limit reached: {', '.join(full)}" if full else "room left", gpu=gpu,
                                  alert=bool(full)))
    for c in (a.nodeclaims or {}).values():
        missing = c.gpu_missing
        if (c.arrived or c.launch_failed) and missing is None:
            continue  # only those still on their way, or whose GPU never came
        rows.append(AutoscalerRow(kind="NodeClaim", name=c.name, size=f"{c.instance_type or '?'} in NodePool {c.nodepool}",
                                  state=c.state + (f", created {c.created[:19]}Z" if c.created else ""),
                                  gpu=missing is not None or "gpu" in c.instance_type, alert=missing is not None))
    rows.sort(key=lambda r: (r.kind != "node group", r.kind != "NodePool", not r.gpu, r.name))
    return rows
