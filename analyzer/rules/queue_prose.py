"""The queue family's evidence as sentences (queues.md, Evidence): who holds the pod, what the queue's own
controller said, the message rebuilt from the queue's objects beside it, and the flavors tried; and the action when
the bundle lacks the queue's objects (collect_action)."""

from __future__ import annotations

from analyzer import prose

__all__: list[str] = []


def _amounts(value: object) -> str:
    return ", ".join(f"{v} {r}" for r, v in value.items()) if isinstance(value, dict) and value else "nothing"


def _kueue(q: dict) -> list[str]:
    out = []
    where = f"LocalQueue {q.get('localQueue')}"
    if q.get("clusterQueue"):
        where += f", ClusterQueue {q['clusterQueue']}"
    cohort = q.get("cohort")
    if isinstance(cohort, list) and cohort:
        where += f", cohort {' -> '.join(str(c) for c in cohort)}"
    held = f"Held by Kueue in {where}"
    out.append(held + (f"; its Workload is {q['workload']}." if q.get("workload") else "; it has no Workload yet."))
    said = q.get("kueue_said")
    if isinstance(said, dict) and said.get("message"):
        out.append(f"Kueue's {said.get('condition')} condition ({said.get('reason')}) says: \"{said['message']}\".")
    if q.get("clusterQueue_said"):
        out.append(f"The ClusterQueue's Active condition says: \"{q['clusterQueue_said']}\".")
    rebuilt = q.get("rebuilt")
    if rebuilt:
        agrees = q.get("agrees")
        check = (" That is what Kueue says." if agrees is True else
                 " Kueue's own message differs (it may be older than the objects)." if agrees is False else "")
        out.append(f"Rebuilt from the queue's objects: \"{rebuilt}\".{check}")
    if q.get("asked"):
        out.append(f"Pod set {q.get('podSet')} asks for {_amounts(q['asked'])} in all.")
    for f in q.get("flavors") or ():
        if not isinstance(f, dict):
            continue
        if f.get("ruled_out"):
            out.append(f"ResourceFlavor {f.get('flavor')} is ruled out: {f['ruled_out']}.")
            continue
        for r in f.get("resources") or ():
            if not isinstance(r, dict) or not r.get("short"):
                continue
            holders = list(r.get("reserved_by") or ())
            more = r.get("reserved_by_more") or 0
            by = f" (by {', '.join(holders)}{f' and {more} more' if more else ''})" if holders else ""
            limit = "" if r.get("borrowing_limit") is None else f", borrowing limit {r['borrowing_limit']}"
            out.append(f"ResourceFlavor {f.get('flavor')}, {r.get('resource')}: nominal quota {r.get('nominal')}"
                       f"{limit}, reserved {r.get('reserved')}{by}, free now {r.get('free')}, the most it could ever "
                       f"give {r.get('most')}; asked {r.get('asked')}.")
    return out


def _volcano(q: dict) -> list[str]:
    out = [f"Held by Volcano: PodGroup {q.get('podGroup')} (phase {q.get('phase') or 'unknown'}, minMember "
           f"{q.get('minMember')}) in Queue {q.get('queue')}."]
    if q.get("volcano_said"):
        out.append(f"Volcano says: \"{q['volcano_said']}\".")
    if q.get("capability") is not None:
        out.append(f"The Queue's capability is {_amounts(q['capability'])}; allocated {_amounts(q.get('allocated'))}; "
                   f"the PodGroup's minResources {_amounts(q.get('minResources'))}.")
    if q.get("rebuilt"):
        out.append(f"Rebuilt from the objects: \"{q['rebuilt']}\".")
    return out


@prose.says("queue")
def _says_queue(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    return _volcano(value) if value.get("system") == "Volcano" else _kueue(value)


def collect_action(kinds: list[str], command: str, shows: str) -> str:
    """scheduling-gated when the bundle lacks the queue's objects: collect them (the word stays the gate's; what holds
    the pod is named, why needs those objects)."""
    return (f"collect {', '.join(kinds)} (gpu-triage collect gathers them where it may list them) and run again; "
            f"meanwhile `{command}` shows {shows}")
