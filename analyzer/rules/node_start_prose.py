"""How the node-start evidence reads (the words image-pull, volume-mount, numa-unaligned, node-runtime, node-side):
the renderers of the keys rules/node_start.py writes, registered with the sentences' registry when it imports this."""

from __future__ import annotations

from analyzer import prose

def _event_text(e: dict) -> str:
    when = e.get("time") or "unknown time"
    count = e.get("count")
    times = f", {count} times" if isinstance(count, int) and count > 1 else ""
    return f"{e.get('type') or 'Event'} {e.get('reason')} from the {e.get('component') or 'unknown component'} at {when}{times}: \"{e.get('message')}\""


@prose.says("nodeName")
def _node_name_says(value: object) -> list[str]:
    return [f"It is bound to node {value}."] if value else ["It is bound to no node."]


@prose.says("phase")
def _phase_says(value: object) -> list[str]:
    return [f"Its phase is {value}."] if value else []


@prose.says("node_in_bundle")  # said by `node`
def _node_in_bundle_says(value: object) -> list[str]:
    return []


@prose.says("node")
def _node_says(value: object) -> list[str]:
    if not isinstance(value, dict) or value.get("in_bundle") is None:
        return ["nodes.json is not in the bundle: the node cannot be checked."]
    if value.get("in_bundle") is False:
        return ["Its node is not in nodes.json (deleted, or not collected)."]
    ready = value.get("ready")
    if ready is None:
        return ["Its node is in nodes.json and reports no Ready condition."]
    why = f" ({value['ready_reason']}" + (f": {value['ready_message']}" if value.get("ready_message") else "") + ")" \
        if value.get("ready_reason") else ""
    return [f"Its node is {'Ready' if ready == 'True' else f'not Ready (Ready={ready})'}{why}."]


@prose.says("node_events")
def _node_events_says(value: object) -> list[str]:
    events = [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
    lead = "Event (newest first)" if len(events) > 1 else "Event"
    return [f"{lead}: {_event_text(e)}." for e in events]


@prose.says("node_events_more")
def _node_events_more_says(value: object) -> list[str]:
    return [f"… and {value} older events on the pod."]


@prose.says("containers")
def _containers_says(value: object) -> list[str]:
    out = []
    for row in value if isinstance(value, list) else []:
        if not isinstance(row, dict):
            continue
        name = row.get("container")
        if row.get("waiting"):
            w = row["waiting"]
            out.append(f"Container {name} waits: {w.get('reason')}" + (f", \"{w.get('message')}\"" if w.get("message") else "") + ".")
        if row.get("running"):
            out.append(f"Container {name} is running.")
        for key, when in (("terminated", "ended"), ("last_terminated", "last ended")):
            term = row.get(key)
            if isinstance(term, dict):
                out.append(f"Container {name} {when}: {term.get('reason')}, exit code {term.get('exitCode')}"
                           + (f", \"{term.get('message')}\"" if term.get("message") else "") + ".")
    return out


@prose.says("waiting")  # each waiting container is said once, by `containers`
@prose.says("deciding_event")  # the reason quotes it, and it is among the node's events
def _said_elsewhere(value: object) -> list[str]:
    return []


@prose.says("rejection")
def _rejection_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    out = [f"The kubelet rejected it: {value.get('reason')}, \"{value.get('message')}\"."]
    e = value.get("event")
    if isinstance(e, dict):  # its text is among the pod's events (node_events): named here, not quoted again
        out.append(f"The {e.get('component') or 'unknown component'}'s {e.get('reason')} event at "
                   f"{e.get('time') or 'an unknown time'} agrees.")
    return out


@prose.says("replaced_by")
def _replaced_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    where = f"on node {value['nodeName']}" if value.get("nodeName") else "not bound to a node yet"
    return [f"Its owner {value.get('owner')} made pod {value.get('pod')} since (created {value.get('created')}): "
            f"{value.get('phase') or 'no phase'}, {where}."]


@prose.says("placement")
def _placement_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    numbers = (f"; the node has {value['allocatable']} allocatable, {value['used']} in use, {value['free']} free"
               if "allocatable" in value else "")
    return [f"It met a full node for {value.get('resource')}{numbers}: it was {value.get('how')}."]


@prose.says("cross_check")
def _cross_check_says(value: object) -> list[str]:
    return [f"Cross-check: {value}."] if value else []


@prose.says("multi_attach")
def _multi_attach_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    holders = ", ".join(map(str, value.get("attached_to") or ())) or "no node the bundle names"
    claim = f" (claim {value['claim']})" if value.get("claim") else ""
    return [f"Volume {value.get('volume')}{claim} is attached to {holders} by its VolumeAttachment."]


@prose.says("missing_object")
def _missing_object_says(value: object) -> list[str]:
    return [f"Missing: {value}."] if value else []
