"""The ticket report's data built from an analysis: ONE adapter (`report_data`) to the records in
ticket_records.py; shapes.py groups the rows.

Everything the report needs from the analysis is read in `report_data` and its private helpers below;
the formats (html.py, markdown.py) read nothing but the records.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Iterable

from analyzer import __version__
from analyzer import prose
from analyzer.kube import UNSCHEDULABLE_TAINT_KEY
from analyzer.model.dra.extended import IMPLICIT_EXTENDED_PREFIX
from analyzer.model.matching import only_name
from analyzer.model.podspec import required_terms
from analyzer.text import PODS_NAMED_PER_NODE_RESOURCE, some_names

from analyzer.occupancy.from_analysis import occupancy_of
from analyzer.report.ticket_autoscalers import autoscaler_rows
from analyzer.occupancy.queues import queue_rows
from analyzer.report.shapes import group_rows, pattern_of, summarise
from analyzer.report.ticket_records import (Header, NearNode, NodeRow, Pool, ReportData, ResourceBar,
                                            SchedulerLines, TargetRow)

if TYPE_CHECKING:  # only for the adapter's signature; nothing else of the pipeline is imported
    from analyzer.model.target import Target
    from analyzer.pipeline import Analysis

MAX_EVIDENCE_NODES = 5  # nodes named per evidence line; the rest are counted
MAX_LINE = 400  # one evidence line; a hostile bundle's 10 MB string must not become a 10 MB page


MAX_PROBLEMS = 50
ASKS = "requests: "  # the evidence line of a pod's requests: shown beside its name, not as evidence


_ABSENT = "is not in the bundle"  # loaded.missing's reason for a kind whose file is simply not there
_REQUIRED = ("pods", "nodes")


def _completeness(analysis: "Analysis") -> str:
    """One line: who collected the bundle, how many kinds it holds, which are absent (the optional ones named);
    the kinds that failed or are unreadable are listed under it."""
    from analyzer.bundle.catalog import KINDS

    missing = analysis.loaded.missing
    absent = sorted(k for k, why in missing.items() if why.endswith(_ABSENT))
    other = [k for k, why in missing.items() if not why.endswith(_ABSENT)]
    present = sum(1 for k in KINDS if analysis.loaded.has(k.name))
    how = "collected with a manifest (manifest.json)" if analysis.bundle.manifest else "collected by hand: no manifest"
    required = [k for k in absent if k in _REQUIRED]
    optional = [k for k in absent if k not in _REQUIRED]
    parts = [how, f"{present} kinds present"]
    if required:
        parts.append(f"required and absent: {', '.join(required)}")
    if optional:
        parts.append(f"{len(optional)} optional kinds absent ({', '.join(optional)})")
    if other:
        parts.append(f"{len(other)} not collected or unreadable (below)")
    return parts[0] + "; " + ", ".join(parts[1:])


# -- the adapter: the only code that reads the analysis ---------------------------------------------------

def report_data(analysis: "Analysis") -> ReportData:
    """The analysis, and the occupancy picture of its bundle, as report rows."""
    verdicts = analysis.verdicts
    owners = _owners(analysis, verdicts)
    evidence_by_shape: dict[tuple[str, str, str | None], tuple[tuple[str, ...], SchedulerLines | None]] = {}
    footnotes: dict[str, None] = {}
    rows = []
    for v in verdicts:
        t = v.target
        owner = owners.get(v.key) if t.kind == "Pod" else (None if t.kind == "Attempt" else f"{t.kind} {t.namespace}/{t.name}")
        node = _own_node(t) if owner and t.kind == "Pod" else ""
        pattern = pattern_of(v.reason, v.next_action or "", node) if node else ""
        shape = (v.word, pattern or v.reason, owner)
        if shape not in evidence_by_shape:
            # Evidence is read once per shape (a shape shows its first target's): 150 replicas of one Deployment,
            # or a DaemonSet's 5,000 pods each on its own node, cost one to_dict().
            d = v.to_dict()
            evidence_by_shape[shape] = (_not_the_reason(evidence_lines(d), v.reason), _scheduler(d))
            for footnote in _footnotes(d):
                footnotes[footnote] = None
        ev, sched = evidence_by_shape[shape]
        nearest = v.evidence.get("nearest") if isinstance(v.evidence, dict) else None
        asks = next((x[len(ASKS):] for x in ev if x.startswith(ASKS)), "")
        rows.append(TargetRow(word=v.word, reason=_clip(v.reason), next_action=v.next_action, kind=t.kind,
                              owner=owner, names=(v.key,), source=t.source,
                              evidence=tuple(x for x in ev if not x.startswith(ASKS)), scheduler=sched,
                              nearest=_nearest(nearest), asks=asks, refused=v.refused, pattern=pattern))
    grouped = group_rows(rows)
    manifest = analysis.bundle.manifest or {}
    version = analysis.loaded.version or {}
    kubectl = _dict(manifest.get("kubectl"))
    server = kubectl.get("serverVersion") or (version.get("serverVersion") or {}).get("gitVersion")
    collector = _dict(manifest.get("collector"))
    fmt = analysis.bundle.format
    header = Header(
        bundle=_own_name(analysis.label),
        context=_text(manifest.get("context")),
        server_version=_text(server),
        collected=_text(manifest.get("completed") or manifest.get("created")),
        collector=_text(" ".join(str(x) for x in (collector.get("name"), collector.get("version")) if x)) or None,
        missing=tuple(_clip(f"{kind}: {why}") for kind, why in sorted(analysis.loaded.missing.items())
                      if not why.endswith(_ABSENT)),
        completeness=_completeness(analysis),
        problems=tuple(_clip(p) for p in analysis.problems[:MAX_PROBLEMS]),
        problem_count=analysis.problem_count,
        notes=tuple(_clip(n) for n in analysis.notes),
        version=__version__,
        edited=tuple(_clip(n) for n in analysis.changed),
        archive=None if fmt is None else f"{fmt.name} {fmt.version or '(version not recorded)'}",
        archive_lacks=None if fmt is None else fmt.lacks_line,
    )
    pools, note = _pools(occupancy_of(analysis))
    scalers = autoscaler_rows(analysis.cluster.autoscalers, analysis.cluster.config)
    return ReportData(header=header, summary=tuple(summarise(grouped)), rows=tuple(grouped), pools=tuple(pools),
                      occupancy_note=note, footnotes=tuple(footnotes), autoscalers=tuple(scalers),
                      queues=tuple(queue_rows(analysis.cluster.queues, analysis.cluster.config)))


def _own_node(t: "Target") -> str:
    """The node a pod is bound to, or the one its required node affinity names (a DaemonSet's pod): "" else."""
    if t.node_name:
        return t.node_name
    return (only_name(required_terms(t.spec)) or "") if isinstance(t.spec, dict) else ""


def _dict(value: object) -> dict:
    """A manifest's field that should be an object; anything else (a hand-edited manifest) reads as empty."""
    return value if isinstance(value, dict) else {}


def _own_name(label: str) -> str:
    """The bundle's own name (`prod-gpu-20261129T164658Z.tar.gz`): the path it had on this machine stays here."""
    return PurePath(label.rstrip("/\\")).name or label


def _not_the_reason(lines: list[str], reason: str) -> tuple[str, ...]:
    """Evidence lines that add to the reason: a line the reason already says (a removed node's reason) is left out."""
    out = []
    for line in lines:
        tail = line.split(": ", 1)[-1]
        if line in reason or (len(tail) > 12 and tail in reason):
            continue
        out.append(_clip(line))
    return tuple(out)


# The preemption hint's explanation is the same for every pod: the page says it once (PREEMPTION_NOTE).
_PREEMPTION_WHY = re.compile(r" \(what stops the pod there[^)]*\)")
PREEMPTION_NOTE = ("the scheduler's preemption tail: 'not helpful' on a node means what stops the pod there (a taint, a "
                   "selector, something the node can never give) is not a pod to evict; 'no preemption victims' means "
                   "pods hold what it needs, but none has a lower priority")


def _footnotes(d: dict) -> list[str]:
    """What the scheduler's sentences hide, said once for the page (not in every card)."""
    s = d.get("scheduler")
    if not isinstance(s, dict):
        return []
    out = []
    if s.get("conflation"):
        out.append(_clip(str(s["conflation"]).split("; the bundle says:", 1)[0].strip()))
    if s.get("preemption"):
        out.append(PREEMPTION_NOTE)
    return out


def _owners(analysis: "Analysis", verdicts: list) -> dict[str, str]:
    """Target key -> "Kind namespace/name" of its controller (kept on each pod target by the model)."""
    wanted = {v.key for v in verdicts if v.target.kind == "Pod"}
    out: dict[str, str] = {}
    if not wanted:
        return out
    for t in analysis.cluster.pod_targets:
        if t.key in wanted and t.controller:
            out[t.key] = t.controller
    return out


def _scheduler(d: dict) -> SchedulerLines | None:
    s = d.get("scheduler")
    if not isinstance(s, dict):
        return None
    notes = [_PREEMPTION_WHY.sub("", str(x)) for x in (s.get("preemption"),) if x]
    rebuilt = s.get("rebuilt") if "rebuilt" in s else None
    if "rebuilt" in s and not rebuilt:
        rebuilt = "(some node fits now)"
    return SchedulerLines(said=_text(s.get("message")), source=_text(s.get("source")), rebuilt=_text(rebuilt),
                          comparison=_text(s.get("comparison")), notes=tuple(_clip(str(n)) for n in notes))


def _nearest(value: Any) -> tuple[NearNode, ...] | None:
    """causes.md's nearest nodes, once the classifier puts them in the evidence as [{node, reason}]."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, dict) and item.get("node") is not None:
            out.append(NearNode(node=str(item["node"]), reason=_clip(str(item.get("reason", "")))))
    return tuple(out)


def evidence_lines(d: dict) -> list[str]:
    """The deciding evidence of one verdict (its JSON form, schemas/verdicts.schema.json) in short lines: each
    evidence key as its family says it (analyzer/prose.py), then the funnel and the fit rows."""
    ev = d.get("evidence") or {}
    out: list[str] = []
    if ev.get("requests"):
        out.append(ASKS + ", ".join(f"{q} {r}" for r, q in ev["requests"].items()))
    out += prose.lines(ev, skip=_SAID_ELSEWHERE)
    out += _funnel_lines(d.get("funnel"))
    fit = d.get("fit") or []
    for row in fit[:MAX_EVIDENCE_NODES]:
        out.append(_fit_line(row))
    if len(fit) > MAX_EVIDENCE_NODES:
        out.append(f"… {len(fit) - MAX_EVIDENCE_NODES} more candidate node(s), each short too")
    if d.get("too_large"):
        out.append("Too large: it asks more " + ", ".join(d["too_large"]) + " than any candidate can ever offer.")
    elif d.get("fragmented"):
        out.append("Fragmented: enough free units summed over the candidates, but no single node has enough.")
    return out


# Said beside the evidence: the pod's requests next to its name, the nearest nodes in their own list.
_SAID_ELSEWHERE = ("requests", "nearest", "nearest_more", "nearest_none")


def _funnel_lines(funnel: Any) -> list[str]:
    if not isinstance(funnel, list) or not funnel:
        return []
    out = ["nodes left after each check: " + " · ".join(f"{s['stage']} {s['nodes_in']}→{s['nodes_out']}" for s in funnel)]
    last = funnel[-1]
    if last.get("stage") == "fit":
        return out  # the fit rows below say more than the removal reasons
    for group in last.get("removed") or ():
        out.append(f"{some_names(group['nodes'], MAX_EVIDENCE_NODES)}: {group['reason']}")
    return out


def _fit_line(row: dict) -> str:
    parts = []
    for r, q in row["resources"].items():
        if r in row.get("short", ()):
            parts.append(f"{r} {q['free']} free of {q['allocatable']} (used {q['used']}), requested {q['requested']}")
    holders = [f"{u['pod']} {' '.join(str(x) for x in u['requests'].values())}".rstrip() for u in row.get("used_by") or ()]
    more = row.get("used_by_more", 0)
    line = f"{row['node']}: " + "; ".join(parts or ["short"])
    if holders:
        line += " — held by " + ", ".join(holders[:MAX_EVIDENCE_NODES])
        hidden = len(holders) - MAX_EVIDENCE_NODES + more
        if hidden > 0:
            line += f" (+{hidden} more)"
    return line


def _text(value: Any) -> str | None:
    return None if value is None else _clip(str(value))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"


_NODE_STATES = {"not-ready": "not ready", "cordoned": "cordoned"}


def _pools(occupancy: Any) -> tuple[list[Pool], str | None]:
    """Occupancy rows (display order: free first, then broken, then full) -> pools of nodes."""
    if occupancy is None:
        return [], "no occupancy picture: it needs nodes.json and pods.json"
    by_node: dict[str, list] = {}
    for r in occupancy.rows:
        by_node.setdefault(r.node, []).append(r)
    pools: dict[str, list[NodeRow]] = {}
    cards: dict[str, list] = {}
    for card in occupancy.shared:
        cards.setdefault(card.node, []).append(card)
    for node, rows in by_node.items():
        first = rows[0]
        states = [_NODE_STATES[s] for s in first.states if s in _NODE_STATES]
        states += ["unhealthy: " + c for c in first.conditions]  # the node's condition, named
        taints = [t for t in first.taints if not t.startswith(UNSCHEDULABLE_TAINT_KEY + ":") and not t.startswith(UNSCHEDULABLE_TAINT_KEY + "=")]
        if "tainted" in first.states and taints:
            states.append("tainted " + ", ".join(taints))
        bars = tuple(ResourceBar(resource=r.resource, capacity=r.capacity, allocatable=r.allocatable, used=r.used,
                                 free=r.free, holders=r.holders[:PODS_NAMED_PER_NODE_RESOURCE],
                                 holders_more=max(0, len(r.holders) - PODS_NAMED_PER_NODE_RESOURCE), states=tuple(_bar_states(r)),
                                 wanting=r.wanting, behind_taint=r.behind_taint, tolerating=r.tolerating,
                                 sharing=r.sharing) for r in rows)
        if first.mig_state:
            states.append(f"MIG config {first.mig_state}: wait for the MIG manager")
        stuck = tuple(f"{key}: {word}" for key, word in occupancy.not_started.get(node, ())[:PODS_NAMED_PER_NODE_RESOURCE])
        pool = first.pool if first.pool != "-" else "(no pool label)"
        pools.setdefault(pool, []).append(NodeRow(name=node, pool=pool, states=tuple(states), resources=bars,
                                                  not_started=stuck, shared_cards=shared_lines(cards.get(node, ()))))
    out = [Pool(name=name, nodes=tuple(nodes)) for name, nodes in pools.items()]
    out.sort(key=lambda p: (p.name == "(no pool label)", p.name))
    note = None
    if occupancy.problems:
        note = f"{len(occupancy.problems)} item(s) could not be read; the picture leaves them out: {_clip(occupancy.problems[0])}"
    elif not out:
        note = "no node offers or looks like it should offer an accelerator resource"
    return out, note


def shared_lines(cards: Iterable[Any]) -> tuple[str, ...]:
    """A node's shared cards (occupancy SharedCard) in prose: the scheduler's problem with the node once, then per
    card its memory and cores used and free, the split count used, health, and the handshake's age. Healthy cards
    nothing holds, alike, are one sentence naming each (a node of 8 idle cards reads as one line, not 8)."""
    out: list[str] = []
    idle: dict[tuple, list[str]] = {}
    for c in cards:
        if c.problem and not out:
            out.append(_clip(f"{c.scheduler} sees no device on this node: {c.problem}"))
        if c.card == "-":
            continue
        age = "" if c.handshake_age is None else f"; handshake {c.handshake_age} s ago"
        if c.healthy and not c.pods and not c.memory_used and not c.cores_used and not c.shares_used:
            idle.setdefault((c.scheduler, c.type, c.memory, c.cores, c.shares, age), []).append(c.card)
            continue
        held = f" (by {some_names(list(c.pods), PODS_NAMED_PER_NODE_RESOURCE)})" if c.pods else ""
        out.append(_clip(f"{c.scheduler} card {c.card} ({c.type}): memory {c.memory_used} MiB used, {c.memory_free} MiB "
                         f"free of {c.memory} MiB; cores {c.cores_used}% used, {c.cores_free}% free; "
                         f"{c.shares_used} of {c.shares} shares used{held}; "
                         f"{'healthy' if c.healthy else 'unhealthy'}{age}"))
    for (scheduler, kind, memory, cores, shares, age), names in idle.items():
        which = f"card {names[0]}" if len(names) == 1 else f"{len(names)} cards {', '.join(names)}"
        out.append(_clip(f"{scheduler} {which} ({kind}): nothing held, {memory} MiB and {cores}% cores free"
                         f"{' each' if len(names) > 1 else ''}, 0 of {shares} shares used; healthy{age}"))
    return tuple(out)


def _bar_states(r: Any) -> list[str]:
    out = []
    for s in r.states:
        if s == "no-plugin" and r.resource.startswith(IMPLICIT_EXTENDED_PREFIX):
            out.append("no device of the class published (no ResourceSlice)")
        elif s == "no-plugin":
            out.append(f"no plugin: no {r.resource} in status.capacity" if r.capacity is None else f"no plugin: capacity {r.capacity}")
        elif s == "allocatable-zero":
            out.append(f"allocatable 0 of capacity {r.capacity}")
        elif s == "overcommitted":
            out.append(f"overcommitted: {r.used} used of {r.allocatable or 0} allocatable")
        elif s == "usage-unknown":
            out.append("usage unknown: a pod bound here could not be read")
    return out
