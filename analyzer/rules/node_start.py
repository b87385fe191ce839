"""`image-pull`, `volume-mount`, `numa-unaligned`, `node-runtime`, `node-side` (causes.md; node-start.md): a bound
pod the node will not start, and the kubelet's rejections.

Decided from the pod's own status (the kubelet's admission rejection, its container states); the kubelet's and
the attach/detach controller's events are the cross-check and the detail (newest first, with time and count).
  7 image-pull    a container waits because its image cannot be pulled
  8 volume-mount  no container started and the latest node events say a volume could not be attached or mounted
    numa-unaligned the kubelet's Topology Manager rejected it (TopologyAffinityError): no NUMA placement (rules/numa.py)
  9 node-runtime  the kubelet rejected it for its devices (UnexpectedAdmissionError), or the sandbox or a container
                  could not be created or started for a runtime reason (a pod that ended Failed so is a target too)
 10 node-side     bound and not started for none of these (node gone or NotReady, nothing reported, a missing
                  ConfigMap or Secret, another admission rejection)
A rejection `OutOf<resource>` found the node full: `exhausted`, with the rejection named.
"""

from __future__ import annotations

import re

from analyzer import words
from analyzer.rules import node_start_prose  # noqa: F401  (registers how this evidence reads)
from analyzer.model import pod_status as ns
from analyzer.model.node_start import PodEvent
from analyzer.model.quantity import format_units
from analyzer.rules import numa
from analyzer.rules.case import Case, Decision
from analyzer.rules.image_pull import image_action
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule
from analyzer.model.target import Target

SHOWN_EVENTS = 5
_MISSING_OBJECT = re.compile(r'(configmap|secret) "([^"]+)" not found|'
                             r"couldn't find key (\S+) in (ConfigMap|Secret) (\S+)", re.IGNORECASE)


def decide(case: Case) -> Decision | None:
    t, c = case.target, case.cluster
    if t.kind != "Pod" or not t.created or not t.node_name:
        return None
    status = t.status or {}
    rejected = ns.kubelet_rejected(status)
    failed_start = ns.failed_start(status, (t.spec or {}).get("restartPolicy"))
    if not (t.phase == "Pending" or rejected or failed_start or ns.never_started(status)):
        return None
    start = c.node_start
    events = start.of(t.namespace, t.name) if start is not None else []
    ev = case.evidence
    ev["nodeName"] = t.node_name
    ev["phase"] = t.phase
    ev.update(_node_evidence(case))
    if events:
        ev["node_events"] = [e.as_data() for e in events[:SHOWN_EVENTS]]
        if len(events) > SHOWN_EVENTS:
            ev["node_events_more"] = len(events) - SHOWN_EVENTS
    if rejected:
        return _rejected(case, events)
    states = _container_states(status)
    if states:
        ev["containers"] = states
        waiting = [{"container": s["container"], **s["waiting"]} for s in states if s.get("waiting")]
        if waiting:
            ev["waiting"] = waiting
    if failed_start:
        return _failed_start(case, states, events)
    return (_image_pull(case, states, events) or _by_container(case, states, events) or _by_events(case, states, events)
            or _nothing_said(case, states, events))


# -- the kubelet's admission rejection ---------------------------------------------------------------------

def _rejected(case: Case, events: list[PodEvent]) -> Decision:
    t, c, ev = case.target, case.cluster, case.evidence
    reason = str(t.status.get("reason"))
    message = str(t.status.get("message") or "")
    ev["rejection"] = {"reason": reason, "message": message}
    said = next((e for e in events if e.reason == reason), None)
    if said is not None:
        ev["rejection"]["event"] = said.as_data()
    replaced = _replacement(t, c.newest_pod)
    tail = ""
    if replaced is not None:
        ev["replaced_by"] = replaced
        tail = f"; replaced by {replaced['pod']} ({replaced['phase'] or 'no phase'})"
    head = f"the kubelet on {t.node_name} rejected it before any container ran: {reason}: \"{message}\""
    if reason.startswith(ns.OUT_OF):
        resource = reason.removeprefix(ns.OUT_OF)
        ev["placement"] = _placement(case, resource)
        return Decision(word=words.EXHAUSTED, reason=head + tail)
    if reason == "UnexpectedAdmissionError":
        return Decision(word=words.NODE_RUNTIME, reason=head + tail, action=_admission_error_action(t, message, replaced))
    if reason == ns.TOPOLOGY_AFFINITY:
        ev["numa"] = numa.layout(case)
        return Decision(word=words.NUMA_UNALIGNED, reason=head + "; " + numa.sentence(ev["numa"]) + tail)
    return Decision(word=words.NODE_SIDE, reason=head + tail,
                    action=f"look at the kubelet on {t.node_name}: it rejected the pod ({reason}){_after_rejection(t, replaced)}")


def _after_rejection(t: Target, replaced: dict | None) -> str:
    """What becomes of a pod the kubelet rejected: it stays Failed and is never retried; its controller's
    replacement, when there is one, is the pod to watch."""
    if replaced is not None:
        return f"; {replaced['pod']} ({replaced['phase'] or 'no phase'}) already replaces this pod, which can be deleted"
    return f"; then delete {t.key} and create it again (a rejected pod is never retried)"


# devicemanager/manager.go devicesToAllocate: "requested number of devices unavailable for %s. Requested: …" and
# "no healthy devices present; cannot allocate unhealthy devices %s"
_UNAVAILABLE_FOR = re.compile(r"(?:devices unavailable for|cannot allocate unhealthy devices) ([\w./-]+?)[.,]? ")


def _admission_error_action(t: Target, message: str, replaced: dict | None) -> str:
    """UnexpectedAdmissionError: the kubelet's device manager found fewer devices than the node advertised when the
    pod came (its plugin's devices went unhealthy or re-registered fewer): that plugin on that node is the repair."""
    m = _UNAVAILABLE_FOR.search(message + " ")
    what = f"the device plugin for {m.group(1)}" if m else "the GPU stack (driver, container toolkit, device plugin or DRA driver)"
    return f"repair {what} on {t.node_name}{_after_rejection(t, replaced)}"


def _replacement(t: Target, newest: dict[str, tuple[str, str, str, str]]) -> dict | None:
    """The controller's newest pod, when it is another one created no earlier (node-start.md: same owner, later)."""
    if not t.controller_uid:
        return None
    found = newest.get(t.controller_uid)
    if found is None:
        return None
    created, name, phase, node = found
    if name == t.name or (t.created_at and created < t.created_at):
        return None
    return {"pod": f"{t.namespace}/{name}", "phase": phase or None, "nodeName": node or None, "created": created or None,
            "owner": t.controller}


def _placement(case: Case, resource: str) -> dict:
    """How the pod came to a full node: the kubelet counts what the scheduler counts, so a pod the scheduler bound
    meets `OutOf…` only when the node's devices shrank after binding; otherwise spec.nodeName placed it."""
    t, c = case.target, case.cluster
    node = c.nodes_by_name.get(t.node_name)
    out: dict = {"resource": resource,
                 "how": ("placed with spec.nodeName (bypassing the scheduler), or bound before the node's device "
                         "plugin re-registered fewer devices")}
    if node is not None:
        alloc = node.allocatable.get(resource, 0)
        used = (c.usage.get(node.name) or {}).get(resource, 0)
        out.update({"allocatable": format_units(resource, alloc), "used": format_units(resource, used),
                    "free": format_units(resource, alloc - used)})
    return out


# -- what the containers say ------------------------------------------------------------------------------

def _container_states(status: dict) -> list[dict]:
    out = []
    for cs in ns.container_statuses(status):
        state = cs.get("state") if isinstance(cs.get("state"), dict) else {}
        last = cs.get("lastState") if isinstance(cs.get("lastState"), dict) else {}
        row: dict = {"container": cs.get("name")}
        waiting = state.get("waiting")
        if isinstance(waiting, dict):
            row["waiting"] = {"reason": waiting.get("reason"), "message": waiting.get("message")}
        if state.get("running"):
            row["running"] = True
        for key, part in (("terminated", state), ("last_terminated", last)):
            term = part.get("terminated")
            if isinstance(term, dict):
                row[key] = {"reason": term.get("reason"), "exitCode": term.get("exitCode"), "message": term.get("message")}
        out.append(row)
    return out


def _quote(row: dict, part: str = "waiting") -> str:
    w = row.get(part) or {}
    text = f"container {row.get('container')} {'waits with' if part == 'waiting' else 'last ended with'} {w.get('reason')}"
    return text + (f": \"{w.get('message')}\"" if w.get("message") else "")


def _cross_check(case: Case, events: list[PodEvent], reasons: tuple[str, ...]) -> PodEvent | None:
    found = next((e for e in events if e.reason in reasons), None)
    if found is not None:
        case.evidence["cross_check"] = (f"the {found.component}'s latest {found.reason} event agrees (at "
                                        f"{found.time or 'unknown time'}, count {found.count}): \"{found.message}\"")
    elif case.cluster.node_start is not None and case.cluster.node_start.events_read:
        case.evidence["cross_check"] = "no kubelet event in the bundle says more (events expire after an hour by default)"
    else:
        case.evidence["cross_check"] = "events.json is not in the bundle"
    return found


def _image_pull(case: Case, states: list[dict], events: list[PodEvent]) -> Decision | None:
    row = next((s for s in states if (s.get("waiting") or {}).get("reason") in ns.IMAGE_REASONS), None)
    if row is None:
        return None
    said = _cross_check(case, events, ns.IMAGE_EVENTS)
    return Decision(word=words.IMAGE_PULL, reason=_quote(row),
                    action=image_action(case.spec or {}, case.target.node_name, row,
                                        said.message if said is not None else ""))


def _missing_action(text: str, namespace: str) -> str | None:
    """Create the object the kubelet could not find, or fix its name in the pod spec (the pod waits until then)."""
    m = _MISSING_OBJECT.search(text or "")
    if m is None:
        return None
    if m.group(1):
        kind = "ConfigMap" if m.group(1).lower() == "configmap" else "Secret"
        return f"create {kind} {namespace}/{m.group(2)}, or fix the name in the pod spec; the kubelet retries on its own"
    return (f"add key {m.group(3)} to {m.group(4)} {namespace}/{m.group(5)}, or fix the key in the pod spec; the kubelet "
            f"retries on its own")


def _missing_object(text: str) -> str | None:
    m = _MISSING_OBJECT.search(text or "")
    if m is None:
        return None
    if m.group(1):
        return f"{m.group(1).lower()} {m.group(2)!r} not found"
    return f"key {m.group(3)} not found in {m.group(4)} {m.group(5)}"


def _by_container(case: Case, states: list[dict], events: list[PodEvent]) -> Decision | None:
    """`image-pull` from a container's own state; a missing ConfigMap or Secret is `volume-mount`, named."""
    for row in states:
        w = row.get("waiting") or {}
        reason = w.get("reason")
        if reason == ns.CONFIG_WAITING:
            missing = _missing_object(str(w.get("message") or ""))
            case.evidence["missing_object"] = missing or w.get("message")
            _cross_check(case, events, ("Failed",))
            return Decision(word=words.NODE_SIDE, reason=_quote(row) + " (create it, or fix the name in the pod spec)",
                            action=_missing_action(str(w.get("message") or ""), case.target.namespace))
        if reason in ns.RUNTIME_WAITING:
            _cross_check(case, events, ("Failed",) + ns.RUNTIME_EVENTS)
            return Decision(word=words.NODE_RUNTIME, reason=_quote(row))
        last = row.get("last_terminated") or row.get("terminated") or {}
        if reason == ns.CRASH_LOOP and last.get("reason") in ns.START_ERROR:
            _cross_check(case, events, ("Failed",) + ns.RUNTIME_EVENTS)
            part = "last_terminated" if row.get("last_terminated") else "terminated"
            return Decision(word=words.NODE_RUNTIME, reason=f"{_quote(row)}; it never started: {_quote(row, part)} "
                                                            f"(exit code {last.get('exitCode')})")
    return None


def _failed_start(case: Case, states: list[dict], events: list[PodEvent]) -> Decision:
    """Ended Failed under restartPolicy Never, no container ever started (causes.md, targets): the runtime's
    message verbatim (StartError: `nvidia-container-cli: initialization error: …`, unresolvable CDI devices)."""
    row = next(s for s in states if (s.get("terminated") or s.get("last_terminated") or {}).get("reason") in ns.START_ERROR)
    part = "terminated" if (row.get("terminated") or {}).get("reason") in ns.START_ERROR else "last_terminated"
    _cross_check(case, events, ("Failed",) + ns.RUNTIME_EVENTS)
    code = (row.get(part) or {}).get("exitCode")
    replaced = _replacement(case.target, case.cluster.newest_pod)  # a Job's next pod is a target of its own
    tail = ""
    if replaced is not None:
        case.evidence["replaced_by"] = replaced
        tail = f"; replaced by {replaced['pod']} ({replaced['phase'] or 'no phase'})"
    return Decision(word=words.NODE_RUNTIME, reason=f"on {case.target.node_name} no container could start and the pod "
                    f"ended Failed (restartPolicy Never): {_quote(row, part)}"
                    + (f" (exit code {code})" if code is not None else "") + tail)


def _started(states: list[dict]) -> bool:
    return any(s.get("running") or s.get("terminated") or s.get("last_terminated") for s in states)


def _by_events(case: Case, states: list[dict], events: list[PodEvent]) -> Decision | None:
    """`volume-mount` or `node-runtime` from the latest volume or runtime event, when the containers only wait to be created."""
    latest = next((e for e in events if e.reason in ns.VOLUME_EVENTS + ns.RUNTIME_EVENTS), None)
    if latest is None or _started(states):
        return None
    said = f"latest {latest.reason} event from the {latest.component} (at {latest.time or 'unknown time'}, " \
           f"count {latest.count}): \"{latest.message}\""
    case.evidence["deciding_event"] = latest.as_data()
    if latest.reason in ns.VOLUME_EVENTS:
        multi = _multi_attach(case, events)
        if multi is not None:
            return multi
        missing = _missing_object(latest.message)
        if missing is not None:
            case.evidence["missing_object"] = missing
            return Decision(word=words.NODE_SIDE, reason=f"{missing}: {said}",
                            action=_missing_action(latest.message, case.target.namespace))
        return Decision(word=words.VOLUME_MOUNT, reason=said)
    return Decision(word=words.NODE_RUNTIME, reason=said)


# The attach/detach controller's words (kubernetes pkg/controller/volume/attachdetach/reconciler/reconciler.go,
# reportMultiAttachError: GenerateMsgDetailed("Multi-Attach error", …) names the volume in quotes).
_MULTI_ATTACH = re.compile(r'Multi-Attach error for volume "([^"]+)"')


def _multi_attach(case: Case, events: list[PodEvent]) -> Decision | None:
    """volume-mount for a volume attached elsewhere: the kubelet's later FailedMount only times out waiting for it,
    so the Multi-Attach event is the reason, and the VolumeAttachment names the node holding the volume."""
    said = next((e for e in events if e.reason in ns.VOLUME_EVENTS and _MULTI_ATTACH.search(e.message)), None)
    if said is None:
        return None
    t, c = case.target, case.cluster
    match = _MULTI_ATTACH.search(said.message)
    assert match is not None  # `said` is the first event it matches
    volume = match.group(1)
    storage = c.storage
    holders = [n for n in (storage.attached.get(volume, []) if storage is not None else []) if n != t.node_name]
    claim = next((f"{ns_}/{cl.name}" for (ns_, _), cl in (storage.claims.items() if storage is not None else ())
                  if cl.volume_name == volume and ns_ == t.namespace), None)
    case.evidence["deciding_event"] = said.as_data()
    case.evidence["multi_attach"] = {"volume": volume, "claim": claim, "attached_to": holders}
    named = f"volume {volume}" + (f" (claim {claim})" if claim else "")
    where = (f"attached to node {', '.join(holders)} (VolumeAttachment)" if holders else
             "attached to another node (no VolumeAttachment in the bundle names it)")
    reason = (f"Multi-Attach: {named} is {where}, and {t.node_name} cannot attach it too: the "
              f"{said.component}'s {said.reason} at {said.time or 'unknown time'}: \"{said.message}\"")
    action = (f"detach {named} from node {', '.join(holders)}: stop the pod using it there (or delete its stale "
              f"VolumeAttachment), or use a ReadWriteMany volume" if holders else
              f"detach {named} from the other node, or use a ReadWriteMany volume")
    return Decision(word=words.VOLUME_MOUNT, reason=reason, action=action)


def _nothing_said(case: Case, states: list[dict], events: list[PodEvent]) -> Decision:
    t, ev = case.target, case.evidence
    node = ev.get("node") or {}
    look = f"look at the kubelet and the container runtime on {t.node_name} (kubectl describe node {t.node_name}, their logs there)"
    if node.get("in_bundle") is False:
        why = f"its node {t.node_name} is not in the bundle (deleted, or not collected)"
        action = (f"if node {t.node_name} is gone, delete {t.key} so its controller makes another; if not, collect "
                  f"the bundle again with nodes")
    elif node.get("ready") not in (None, "True"):
        cond = node.get("ready_reason") or ""
        why = f"its node {t.node_name} is NotReady (Ready={node.get('ready')}{': ' + cond if cond else ''})"
        action = f"bring node {t.node_name} back to Ready ({look.removeprefix('look at ')}), or delete {t.key} so its controller places another"
    elif not states and not events:
        why = f"the kubelet on {t.node_name} has reported nothing for it (no container status, no event)"
        action = f"{look}: they have reported nothing for {t.key}"
    elif (init := _init_running(case.spec or {}, states)) is not None:
        # The kubelet starts the app containers only when every ordinary init container has completed (sidecars,
        # restartPolicy Always, run beside them): one still running is where the pod waits, not the node.
        why = (f"still Pending on {t.node_name}: its init container {init} is still running, and the app containers "
               f"start only once it completes")
        action = (f"look at what init container {init} waits for (kubectl logs -n {t.namespace} {t.name} -c {init}); "
                  f"the pod starts once it exits 0")
    else:
        waiting = next((s for s in states if s.get("waiting")), None)
        why = (f"still Pending on {t.node_name}: " + (_quote(waiting) if waiting else "no container has started")
               + "; nothing the node reports names a cause")
        action = f"{look}: nothing they report names a cause"
    return Decision(word=words.NODE_SIDE, reason=why, action=action)


def _init_running(spec: dict, states: list[dict]) -> str | None:
    """The ordinary init container (not a sidecar) that is running while the pod is Pending, if any."""
    ordinary = {c.get("name") for c in spec.get("initContainers") or ()
                if isinstance(c, dict) and c.get("restartPolicy") != "Always"}
    return next((str(s["container"]) for s in states if s.get("running") and s.get("container") in ordinary), None)


def _node_evidence(case: Case) -> dict:
    t, c = case.target, case.cluster
    if c.nodes is None:
        return {"node": {"in_bundle": None}}
    out: dict = {"in_bundle": t.node_name in c.nodes_by_name}
    cond = c.node_start.ready.get(t.node_name) if c.node_start is not None else None
    if cond is not None:
        out["ready"] = cond.ready or None
        if cond.reason:
            out["ready_reason"] = cond.reason
        if cond.message and cond.ready != "True":
            out["ready_message"] = cond.message
    return {"node": out, "node_in_bundle": out["in_bundle"]}


# (also exhausted, for a kubelet rejection OutOf<resource>: listed with the funnel, at its place)
FAMILY: Family = Plain(name="node-start", kinds=(catalog.PODS, catalog.NODES, catalog.EVENTS), rules=(
    Rule(rows="13-17", words=(words.IMAGE_PULL, words.VOLUME_MOUNT, words.NUMA_UNALIGNED, words.NODE_RUNTIME,
                              words.NODE_SIDE), decide=decide),))
