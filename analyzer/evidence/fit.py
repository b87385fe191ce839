"""For `exhausted`: each candidate's allocatable, used (and by which pods), free and requested;
whether the shortage is fragmentation or the too-large sub-case (causes.md, row 14)."""

from __future__ import annotations

from analyzer.model.quantity import format_units
from analyzer.model.views import Cluster
from analyzer.rules import dra_devices
from analyzer.rules.checks import PodFacts, available, shortages
from analyzer.rules.funnel_result import FunnelResult
from analyzer.verdict import Fit

MAX_USED_BY = 20  # pods listed per candidate node; the totals stay exact
DEVICES = "devices"  # a claim's devices short on the node (their steps are in the verdict's `devices` evidence)


def fit_evidence(c: Cluster, facts: PodFacts, funnel: FunnelResult) -> Fit:
    wanted = c.config.resource_order([r for r, v in facts.wants.items() if v > 0] + ["pods"])
    rows = []
    free_sum: dict[str, int] = {}
    short_everywhere: set[str] | None = None
    devices_too_large = True
    for node in funnel.fit_candidates:
        used = c.usage.get(node.name) or {}
        short = [s.resource for s in shortages(facts, node, c)]
        devices = dra_devices.outcome(facts.claims, node, c)
        if devices is not None and devices.stage in ("free", "enough"):
            short.append(DEVICES)
            devices_too_large = devices_too_large and devices.too_large
        short_everywhere = set(short) if short_everywhere is None else short_everywhere & set(short)
        resources = {}
        for r in wanted:
            want = 1 if r == "pods" else facts.wants.get(r, 0)
            alloc, held, device_class = available(facts, node, c, r, used)
            free = alloc - held
            free_sum[r] = free_sum.get(r, 0) + max(free, 0)
            resources[r] = {"allocatable": format_units(r, alloc), "used": format_units(r, held),
                            "free": format_units(r, free), "requested": format_units(r, want)}
            if device_class is not None:
                resources[r]["served_by"] = f"DeviceClass {device_class} (devices in ResourceSlices)"
        # The pods holding what is short, largest first; capped per node, so a pod that is short of
        # memory on 5,000 nodes does not list every pod of the cluster.
        first = short[0] if short else None
        held = [r for r in short if r != DEVICES]
        on = c.pods_on.get(node.name, ())
        if len(held) == 1:  # the usual case, without a generator per pod on the node
            only = held[0]
            holders = [h for h in on if h.requests.get(only)]
        else:
            holders = [h for h in on if any(h.requests.get(r) for r in held)]
        holders.sort(key=lambda h: -(h.requests.get(first, 0) if first else 0))
        used_by = [{"pod": h.key, "phase": h.phase,
                    "requests": {r: format_units(r, h.requests[r]) for r in held if h.requests.get(r)}}
                   for h in holders[:MAX_USED_BY]]
        row: dict = {"node": node.name, "resources": resources, "short": short, "used_by": used_by}
        if len(holders) > MAX_USED_BY:
            row["used_by_more"] = len(holders) - MAX_USED_BY
        if node.name in c.unknown_usage:
            row["unknown_usage"] = str(c.unknown_usage[node.name])
        rows.append(row)
    # Fragmented: enough free units summed over the candidates, and a node big enough to hold it once
    # freed, but no single node with enough free now. A request above every candidate's allocatable is
    # not fragmentation: waiting cannot help (too_large).
    fragmented = False
    too_large = []
    if DEVICES in (short_everywhere or ()) and devices_too_large:
        too_large.append(DEVICES)  # a claim asks more devices than any candidate has even when all are free
    for r in short_everywhere or ():
        if r == DEVICES:
            continue
        want = 1 if r == "pods" else facts.wants.get(r, 0)
        biggest = max((available(facts, node, c, r, {})[0] for node in funnel.fit_candidates), default=0)
        if biggest < want:
            too_large.append(r)
        elif free_sum.get(r, 0) >= want:
            fragmented = True
    return Fit(rows=rows, fragmented=fragmented, too_large=too_large)
