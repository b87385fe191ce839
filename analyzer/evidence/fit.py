"""For `exhausted`: each candidate's allocatable, used (and by which pods), free and requested;
whether the shortage is fragmentation or the too-large sub-case (causes.md `exhausted`).

Bounded by default: fit rows for the `limit` candidates closest to fitting (fewest short resources, then the
smallest shortfall relative to the request, then nodes.json order), and for the rest counts (how many are short
of each resource, the largest free amount anywhere). `why` asks for every candidate (limit None). Fragmentation
and too-large are judged over every candidate either way. The aggregates come from the node columns
(rules/columnar.shortfalls), a claim's devices from each node's own (rules/dra_devices.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyzer.model.matching import names_required, only_name
from analyzer.model.nodes import NodeView
from analyzer.model.quantity import format_units
from analyzer.model.views import BoundPod, Cluster
from analyzer.rules import columnar, dra_devices
from analyzer.model.nominated import NOMINATED, NominatedPod
from analyzer.rules.checks import PodFacts, available, holders_on, used_on
from analyzer.rules.funnel_result import FunnelResult
from analyzer.rules.funnel_text import FRAGMENTED, TOO_LARGE, sub_case
from analyzer.text import some_names
from analyzer.verdict import Fit, FitSize

MAX_USED_BY = 20  # pods listed per candidate node; the totals stay exact
DEVICES = "devices"  # a claim's devices short on the node (their steps are in the verdict's `devices` evidence)
CLOSEST = 10  # candidates with a fit row in `analyze` (the closest to fitting); `why` shows every one


class _Facts:
    """Per candidate (in fit_at order): what is short, and per resource free and allocatable."""

    def __init__(self, wanted: list[str], n: int, rows: list[tuple[str, int, np.ndarray, np.ndarray, np.ndarray]] | None = None) -> None:
        """Zeros to fill, or the columns' rows (columnar.shortfalls: one per wanted resource)."""
        if rows is None:
            self.short: dict[str, np.ndarray] = {r: np.zeros(n, dtype=bool) for r in wanted}
            self.free: dict[str, list[int] | np.ndarray] = {r: [0] * n for r in wanted}
            self.alloc: dict[str, list[int] | np.ndarray] = {r: [0] * n for r in wanted}
        else:
            self.short = {r: short for r, _, _, _, short in rows}
            self.free = {r: free for r, _, _, free, _ in rows}
            self.alloc = {r: alloc for r, _, alloc, _, _ in rows}
        self.short[DEVICES] = np.zeros(n, dtype=bool)
        self.devices_too_large = True


def _want(facts: PodFacts, r: str) -> int:
    return 1 if r == "pods" else facts.wants.get(r, 0)


def facts_of(c: Cluster, facts: PodFacts, at: np.ndarray, wanted: list[str]) -> _Facts:
    """Per candidate of `at`: what is short, free and allocatable (the columns), and whether its devices are."""
    out = _Facts(wanted, len(at), columnar.shortfalls(facts, c, at))
    if facts.claims is not None:
        nodes = columnar.columns_of(c).nodes
        for j, i in enumerate(at.tolist()):
            devices = dra_devices.outcome(facts.claims, nodes[i], c)
            if devices is not None and devices.stage in ("free", "enough"):
                out.short[DEVICES][j] = True
                out.devices_too_large = out.devices_too_large and devices.too_large
    return out


def _closest(f: _Facts, facts: PodFacts, wanted: list[str], n: int, limit: int | None) -> list[int]:
    """Candidates (indexes into fit_at) in the order closest to fitting; the first `limit` of them."""
    if limit is None or n <= limit:
        return list(range(n))
    count = sum(f.short[r].astype(np.int64) for r in f.short)
    worst = np.zeros(n, dtype=float)
    for r in wanted:
        want = max(_want(facts, r), 1)
        gap = (want - np.asarray(f.free[r], dtype=float)) / float(want)
        worst = np.maximum(worst, np.where(f.short[r], gap, 0.0))
    return np.lexsort((np.arange(n), worst, count))[:limit].tolist()


def _row(c: Cluster, facts: PodFacts, node: NodeView, wanted: list[str], short: list[str]) -> dict:
    used = used_on(facts, node, c)
    resources = {}
    for r in wanted:
        alloc, held, device_class = available(facts, node, c, r, used)
        resources[r] = {"allocatable": format_units(r, alloc), "used": format_units(r, held),
                        "free": format_units(r, alloc - held), "requested": format_units(r, _want(facts, r))}
        if device_class is not None:
            resources[r]["served_by"] = f"DeviceClass {device_class} (devices in ResourceSlices)"
    # The pods holding what is short, largest first; capped per node, so a pod that is short of
    # memory on 5,000 nodes does not list every pod of the cluster.
    first = short[0] if short else None
    held = [r for r in short if r != DEVICES]
    on = holders_on(facts, node, c)
    if len(held) == 1:  # the usual case, without a generator per pod on the node
        only = held[0]
        holders = [h for h in on if h.requests.get(only)]
    else:
        holders = [h for h in on if any(h.requests.get(r) for r in held)]
    holders.sort(key=lambda h: -(h.requests.get(first, 0) if first else 0))
    used_by = [_holder(h, held) for h in holders[:MAX_USED_BY]]
    row: dict = {"node": node.name, "resources": resources, "short": short, "used_by": used_by}
    nominated = [h for h in holders if isinstance(h, NominatedPod)]
    if nominated:  # a promise of room, not a running pod: say so, or the node looks fuller than `kubectl` shows
        row["nominated"] = [f"{NOMINATED}: {h.pod} holds "
                            + ", ".join(f"{format_units(r, h.requests[r])} {r}" for r in held if h.requests.get(r))
                            for h in nominated]
    if len(holders) > MAX_USED_BY:
        row["used_by_more"] = len(holders) - MAX_USED_BY
    if node.name in c.unknown_usage:
        row["unknown_usage"] = str(c.unknown_usage[node.name])
    return row


def _holder(h: BoundPod | NominatedPod, held: list[str]) -> dict:
    requests = {r: format_units(r, h.requests[r]) for r in held if h.requests.get(r)}
    if isinstance(h, NominatedPod):
        return {"pod": h.pod, "phase": h.phase, "nominated": True, "requests": requests}
    return {"pod": h.key, "phase": h.phase, "requests": requests}


def fit_evidence(c: Cluster, facts: PodFacts, funnel: FunnelResult, limit: int | None = CLOSEST, *,
                 facts_at: Callable[[Cluster, PodFacts, np.ndarray, list[str]], _Facts] = facts_of) -> Fit:
    """`facts_at`: how the candidates' amounts are read (the tests' reference reads them node by node)."""
    wanted = c.config.resource_order([r for r, v in facts.wants.items() if v > 0] + ["pods"])
    at = funnel.fit_at if funnel.fit_at is not None else np.zeros(0, dtype=np.int64)
    nodes = c.nodes or []
    f = facts_at(c, facts, at, wanted)
    n = len(at)
    order = [r for r in wanted if r in f.short] + [DEVICES]
    rows = []
    for j in _closest(f, facts, wanted, n, limit):
        short = [r for r in order if f.short[r][j]]
        rows.append(_row(c, facts, nodes[int(at[j])], wanted, short))
    short_everywhere = {r for r in order if n and bool(f.short[r].all())}
    # The sub-cases (rules/funnel_text.sub_case, the same rule the reason line names them by).
    fragmented = False
    too_large = []
    sizes: dict[str, FitSize] = {}
    if DEVICES in short_everywhere and f.devices_too_large:
        too_large.append(DEVICES)  # a claim asks more devices than any candidate has even when all are free
    for r in order:
        if r not in short_everywhere or r == DEVICES:
            continue
        want = _want(facts, r)
        alloc, free = np.asarray(f.alloc[r], dtype=object), np.asarray(f.free[r], dtype=object)
        biggest = int(alloc.max()) if len(alloc) else 0
        most = int(np.argmax(free)) if len(free) else 0
        sizes[r] = FitSize(requested=format_units(r, want), largest_allocatable=format_units(r, biggest),
                           largest_free=format_units(r, max(int(free[most]), 0)) if len(free) else "0",
                           largest_free_on=nodes[int(at[most])].name if len(free) else "",
                           free_total=format_units(r, int(np.maximum(free, 0).sum())), candidates=n)
        case = sub_case(want, alloc, free)
        if case == TOO_LARGE:
            too_large.append(r)
        elif case == FRAGMENTED:
            fragmented = True
    rest = None
    if len(rows) < n:
        rest = {"candidates": n, "shown": len(rows),
                "short": {r: int(np.count_nonzero(f.short[r])) for r in order if np.any(f.short[r])},
                "largest_free": {r: format_units(r, int(np.asarray(f.free[r], dtype=object).max())) for r in wanted}}
    return Fit(rows=rows, fragmented=fragmented, too_large=too_large, rest=rest, sizes=sizes)


def pinned_to(facts: PodFacts) -> tuple[str, str] | None:
    """The one node a pod may run on by name, and what names it: spec.nodeName, or a required node affinity
    naming one node (matchFields metadata.name: the DaemonSet controller pins each of its pods so)."""
    if facts.pin:
        return facts.pin, "spec.nodeName"
    name = only_name(facts.terms)
    return (name, "its required node affinity (matchFields metadata.name)") if name is not None else None


def action(fit: Fit, facts: PodFacts | None = None, controller: str | None = None) -> str | None:
    """`exhausted`'s action for this pod by its sub-case (causes.md): too large waits for nothing, fragmented
    waits for one node, otherwise the shortage is named. A pod pinned to one node by name is told about that
    node: another node cannot help it (a new node gets a DaemonSet's own new pod, never this one)."""
    sizes = fit.sizes or {}
    pinned = pinned_to(facts) if facts is not None and len(fit.rows) == 1 else None
    if pinned is not None and not fit.fragmented and DEVICES not in fit.too_large:
        return _pinned_action(fit, sizes, pinned, controller or "")
    named_nodes = names_required(facts.terms) if facts is not None and not facts.pin else None
    if named_nodes and DEVICES not in fit.too_large and not fit.fragmented:
        found = _named_action(fit, sizes, sorted(named_nodes))
        if found is not None:
            return found
    for r in fit.too_large:
        if r == DEVICES:
            return ("no node has enough devices for its claims even with every device free; shrink the claim's "
                    "count, or add a node with more devices")
        s = sizes[r]
        return (f"no node has {s.requested} {r} even empty: the largest has {s.largest_allocatable}; "
                f"shrink the request, or add a node with {s.requested}")
    if fit.fragmented:
        r, s = next((r, s) for r, s in sizes.items() if r not in fit.too_large)
        return (f"no single node has {s.requested} {r} free: {s.free_total} are free over {s.candidates} nodes, "
                f"at most {s.largest_free} on one ({s.largest_free_on}); wait for pods to finish there, or move "
                f"pods to make room on one node")
    if sizes:
        named = ", ".join(f"{s.requested} {r}" for r, s in sizes.items())
        return f"wait for {named} to be free on one node, or add capacity"
    return None


def _named_action(fit: Fit, sizes: dict[str, FitSize], names: list[str]) -> str | None:
    """A pod whose required node affinity names its nodes (matchFields metadata.name, two or more): a new node
    would not be one of them, so it is never told to add capacity."""
    allowed = f"{some_names(names)}, the only nodes its required node affinity (matchFields metadata.name) allows"
    for r in fit.too_large:
        s = sizes[r]
        return (f"no node of {allowed}, has {s.requested} {r} even empty: the largest has {s.largest_allocatable}; "
                f"shrink the request, or change that affinity to allow a larger node")
    if not sizes:
        return None
    wanted = ", ".join(f"{s.requested} {r}" for r, s in sizes.items())
    return f"wait for {wanted} to be free on one of {allowed}, or change that affinity"


def _pinned_action(fit: Fit, sizes: dict[str, FitSize], pinned: tuple[str, str], controller: str) -> str | None:
    node, by = pinned
    daemonset = controller if controller.startswith("DaemonSet ") else ""
    # Only the DaemonSet controller's own affinity is beyond a person's reach; an affinity someone wrote, or
    # spec.nodeName, can name another node.
    if by == "spec.nodeName":
        other = "remove spec.nodeName so the scheduler chooses a node"
    else:
        other = "" if daemonset else "change that affinity to allow another node"
    for r in fit.too_large:
        s = sizes[r]
        whose = f" in {daemonset}" if daemonset else ""
        return (f"shrink the {r} request{whose} to fit {node}: {by} allows only that node, which has "
                f"{s.largest_allocatable} allocatable even empty, and the pod asks {s.requested}"
                + (f"; or {other}" if other else ""))
    if not sizes:
        return None
    named = ", ".join(f"{s.requested} {r}" for r, s in sizes.items())
    if by == "spec.nodeName":  # the kubelet admits such a pod or rejects it: no scheduler, no preemption
        return f"free {named} on {node} (the pods holding it are listed there), or {other}"
    # DaemonSet pods are placed by kube-scheduler (node affinity on their node's name, kubernetes#63223), so
    # preemption applies.
    if not daemonset:
        return f"free {named} on {node}, the only node {by} allows (the pods holding it are listed there), or {other}"
    return (f"free {named} on {node}, the only node {by} allows (the pods holding it are listed there), or give "
            f"{daemonset} a priority class above theirs so the scheduler preempts for it; another node cannot help "
            f"this pod")
