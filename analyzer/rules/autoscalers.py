"""`scaling-up` and `scale-up-blocked` (causes.md; autoscalers.md): a node is coming, or the autoscaler says no
node can help. They refine the funnel's answer and never replace an earlier word: this rule runs
after the funnel decided, reading only the funnel's word.

- `scaling-up` refines any funnel word (the autoscaler simulated the scheduler on the new node: the pod fits there).
- `scale-up-blocked` refines only the capacity words, no-gpu-node and exhausted; any other word is the pod's own to fix, and
  the refusal goes into its evidence.
- The newest fact wins: an autoscaler's event older than the pod's latest scheduling failure is history, unless
  its objects say it is current (a group still InProgress, a NodeClaim still launching, a NodePool still full).
  Events are compared at whole seconds (the scheduler writes microseconds, cluster-autoscaler seconds); on a tie
  the autoscaler's event is the later one (it reacts to the scheduler's failure).
- Objects confirm events: the status ConfigMap's groups, NodePool limits against usage plus the request, NodeClaim
  conditions, ProvisioningRequest conditions. A NodeClaim that launched but whose GPU never registered is not a
  node on its way: the pod is no-gpu-node, naming it.
- An autoscaler present that said nothing about the pod: the funnel's word stands, and the evidence says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from analyzer import words
from analyzer import prose
from analyzer.kube import PROVREQ_ANNOTATIONS
from analyzer.model.autoscalers import (
    CA,
    KARPENTER,
    Autoscalers,
    NodePool,
    Said,
    seconds_between,
)
from analyzer.model.quantity import format_units
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule

CAPACITY = (words.NO_GPU_NODE, words.EXHAUSTED)
# processors/status/eventing_scale_up_processor.go: "pod triggered scale-up: %v" of []ScaleUpInfo, each
# printed as {<group> <current>-><new> (max: <max>)}.
_SCALE_UP = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: (\d+)\)\}")
_NOMINATED = re.compile(r"nodeclaim/([^,\s]+)")
# Karpenter's errors behind "Failed to schedule pod, <err>" (scheduling/scheduler.go, nodeclaim.go, taints.go).
_KARPENTER_KINDS = (("exceed limits for nodepool", "limits"), ("node limits have been exhausted", "limits"),
                    ("no instance type", "instance-type"), ("incompatible", "incompatible"),
                    ("did not tolerate", "incompatible"))


@dataclass(kw_only=True)
class _Finding:
    kind: str  # coming | blocked | gpu-missing | history
    reason: str  # for the verdict's reason line
    evidence: dict = field(default_factory=dict)
    action: str | None = None  # the pod's next action with the node group, NodeClaim or NodePool named


def _whole(t: str) -> str:
    return t[:19]  # YYYY-MM-DDTHH:MM:SS of a normalised instant


def _shown(t: str) -> str:
    return t[:19] + "Z" if t.endswith(".000000Z") else t


def _ago(t: str, a: Autoscalers) -> str:
    """When, and how long before the bundle was collected (manifest.json)."""
    seconds = seconds_between(t, a.collected or "")
    if seconds is None:
        return f"at {_shown(t)} (collection time unknown: no manifest.json)" if t else "at an unknown time"
    parts, rest = [], max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, rest = divmod(rest, size)
        if n or (unit == "s" and not parts):
            parts.append(f"{n}{unit}")
    return f"at {_shown(t)}, {''.join(parts[:2])} before collection"


def _requests(case: Case) -> dict[str, int]:
    return {r: v for r, v in case.funnel.facts.requests if v} if case.funnel is not None else {}


def _said(s: Said, a: Autoscalers) -> dict:
    return {"component": s.component, "reason": s.reason, "message": s.message, "time": s.time,
            "when": _ago(s.time, a), "source": s.source}


def _group_failures(name: str, a: Autoscalers, since: str = "") -> list[Said]:
    """cluster-autoscaler's failures for one group on its status ConfigMap, no older than `since` (whole seconds):
    ScaleUpFailed "Failed adding %v nodes to group %v due to %v; source errors: %v" (clusterstate/clusterstate.go)
    and FailedToScaleUpGroup "Scale-up failed for group %s: %v" (core/scaleup/orchestrator/executor.go)."""
    return [s for s in a.group_events
            if (f" to group {name} due to " in s.message or s.message.startswith(f"Scale-up failed for group {name}: "))
            and _whole(s.time) >= _whole(since)]


def _scale_up_failed(groups: list, ev: dict, a: Autoscalers) -> None:
    """The latest failure event of each group in Backoff, quoted (the cloud's message is in it)."""
    for g in groups:
        said = _group_failures(g.name, a)
        if said:
            ev.setdefault("scale_up_failed", []).append(_said(said[-1], a))


def _ca_triggered(s: Said, current: bool, a: Autoscalers) -> _Finding:
    ups = [(g, int(cur), int(new), int(mx)) for g, cur, new, mx in _SCALE_UP.findall(s.message)]
    groups = [a.ca.groups.get(g) if a.ca is not None else None for g, *_ in ups]
    ev = {"node_groups": [{"name": g, "from": cur, "to": new, "max": mx} for g, cur, new, mx in ups]}
    if a.ca is not None:
        ev["status"] = [g.as_data() for g in groups if g is not None]
    named = ", ".join(f"{g} {cur}->{new} (max {mx})" for g, cur, new, mx in ups) or s.message
    failed = [g for g in groups if g is not None and g.scale_up == "Backoff"]
    _scale_up_failed(failed, ev, a)
    if failed:
        said = ev.get("scale_up_failed") or [{}]
        quoted = f"; cluster-autoscaler: {said[-1]['message']!r}" if said[-1].get("message") else ""
        return _Finding(kind="blocked", evidence=ev, reason=f"cluster-autoscaler's scale-up of {failed[0].name} failed: "
                        f"the group is in Backoff ({failed[0].backoff or 'no error recorded'}){quoted}")
    # The cloud refused the increase after the trigger, whatever the status now says (it may not be collected).
    refused = [(g, found[-1]) for g, *_ in ups if (found := _group_failures(g, a, s.time))]
    if refused:
        group, said = refused[0]
        ev["scale_up_failed"] = [_said(x, a) for _, x in refused]
        return _Finding(kind="blocked", evidence=ev, reason=f"cluster-autoscaler's scale-up of {group} failed "
                        f"{_ago(said.time, a)}: {said.reason}: {said.message!r}")
    flying = [g for g in groups if g is not None and g.in_flight]
    unknown = a.ca is None or any(g is None for g in groups)
    if flying or (current and unknown):
        return _Finding(kind="coming", evidence=ev, reason=f"cluster-autoscaler is adding a node: group {named}, "
                        f"asked {_ago(s.time, a)}",
                        action=f"wait for the new node of group {', '.join(g for g, *_ in ups) or '?'}, "
                               f"asked {_ago(s.time, a)}")
    why = "the scheduler failed again later" if not current else "the status shows no scale-up in flight"
    return _Finding(kind="history", evidence=ev, reason=f"cluster-autoscaler's scale-up ({named}) is over: {why}")


def _ca_refused(s: Said, current: bool, a: Autoscalers) -> _Finding:
    text = s.message.removeprefix("pod didn't trigger scale-up: ")
    # Reasons per node group, counted, in Go-map order: a set.
    reasons = sorted({re.sub(r"^\d+ ", "", part.strip()) for part in text.split(", ") if part.strip()})
    ev: dict = {"reasons": reasons}
    confirm = []
    if a.ca is not None:
        confirm = [g for g in a.ca.groups.values() if g.at_max or g.scale_up == "Backoff"]
        ev["status"] = [g.as_data() for g in confirm]
    _scale_up_failed([g for g in confirm if g.scale_up == "Backoff"], ev, a)
    if any(r.startswith("Insufficient ") for r in reasons):
        ev["template"] = ("a node group's template offers none of it; Cluster API scale-from-zero needs both "
                          "capacity.cluster-autoscaler.kubernetes.io/gpu-count and gpu-type annotations")
    if current or confirm:
        return _Finding(kind="blocked", evidence=ev, reason=f"cluster-autoscaler: {s.message!r}")
    return _Finding(kind="history", evidence=ev, reason=f"cluster-autoscaler's refusal ({s.message!r}) is older than "
                                                          "the scheduler's latest failure")


def _karpenter_nominated(s: Said, current: bool, a: Autoscalers) -> _Finding:
    m = _NOMINATED.search(s.message)
    name = m.group(1) if m else ""
    claim = a.nodeclaims.get(name) if a.nodeclaims is not None else None
    ev: dict = {"nodeclaim": name}
    if claim is not None:
        ev.update(nodepool=claim.nodepool, instance_type=claim.instance_type, state=claim.state,
                  created=claim.created, node=claim.node_name, source=claim.source)
        missing = claim.gpu_missing
        if missing is not None:
            return _Finding(kind="gpu-missing", evidence=ev, reason=f"Karpenter's NodeClaim {name} launched node "
                            f"{claim.node_name or '?'}, but {missing.message or 'a requested resource never registered'}")
        failed = claim.launch_failed
        if failed is not None:
            why = ": ".join(x for x in (failed.reason, repr(failed.message) if failed.message else "") if x)
            return _Finding(kind="blocked", evidence=ev, reason=f"Karpenter's NodeClaim {name} (NodePool "
                            f"{claim.nodepool or '?'}) failed to launch: Launched {failed.status}"
                            + (f" ({why})" if why else ""))
        if claim.arrived:
            return _Finding(kind="history", evidence=ev, reason=f"Karpenter's NodeClaim {name} is no longer on its "
                            f"way: {claim.state}")
        return _Finding(kind="coming", evidence=ev, reason=f"Karpenter is launching NodeClaim {name} (NodePool "
                        f"{claim.nodepool}, {claim.instance_type or 'instance type not chosen'}, {claim.state}), "
                        f"asked {_ago(claim.created or s.time, a)}",
                        action=f"wait for NodeClaim {name} (NodePool {claim.nodepool}), asked "
                               f"{_ago(claim.created or s.time, a)}")
    ice = a.claim_events.get(name)
    if ice:  # lifecycle/launch.go: the insufficient-capacity event, then the NodeClaim deleted
        ev["launch_failed"] = _said(ice[-1], a)
        return _Finding(kind="blocked", evidence=ev, reason=f"Karpenter's NodeClaim {name} failed to launch and was "
                        f"deleted {_ago(ice[-1].time, a)}: {ice[-1].reason}: {ice[-1].message!r}")
    if a.nodeclaims is not None:
        return _Finding(kind="history", evidence=ev, reason=f"Karpenter nominated NodeClaim {name}, which no longer "
                                                            "exists")
    if current:
        return _Finding(kind="coming", evidence=ev, reason=f"Karpenter nominated NodeClaim {name}, asked "
                                                           f"{_ago(s.time, a)} (nodeclaims not in the bundle)",
                        action=f"wait for NodeClaim {name}, asked {_ago(s.time, a)}")
    return _Finding(kind="history", evidence=ev, reason=f"Karpenter's nomination of {name} is older than the "
                                                        "scheduler's latest failure")


def _pool_line(pool: NodePool, over: list[str], requests: dict[str, int]) -> str:
    return "; ".join(f"NodePool {pool.name} {r}: limit {format_units(r, pool.limits[r])}, in use "
                     f"{format_units(r, pool.usage.get(r, 0))}, this pod asks {format_units(r, requests.get(r, 1))}"
                     for r in over)


def _karpenter_refused(s: Said, current: bool, a: Autoscalers, requests: dict[str, int]) -> _Finding:
    err = s.message.removeprefix("Failed to schedule pod, ")
    kind = next((k for needle, k in _KARPENTER_KINDS if needle in err), "other")
    ev: dict = {"error": err, "kind": kind}
    full = []
    if kind == "limits" and a.nodepools is not None:
        full = [(p, p.over(requests)) for p in a.nodepools.values() if p.over(requests)]
        ev["nodepools"] = [{"name": p.name, "limits": p.limits, "usage": {r: p.usage.get(r, 0) for r in p.limits},
                            "over": over, "source": p.source} for p, over in full]
        if not full:
            return _Finding(kind="history", evidence=ev, reason=f"Karpenter said {err!r}, but every NodePool now has "
                                                                "room for the pod")
    if current or full:
        limit = "; " + "; ".join(_pool_line(p, over, requests) for p, over in full) if full else ""
        action = ("raise the limits of NodePool " + ", ".join(f"{p.name} ({', '.join(over)})" for p, over in full)
                  + ", or shrink the request") if full else None
        return _Finding(kind="blocked", evidence=ev, reason=f"Karpenter: {s.message!r}{limit}", action=action)
    return _Finding(kind="history", evidence=ev, reason=f"Karpenter's refusal ({err!r}) is older than the scheduler's "
                                                        "latest failure")


def _provisioning_request(case: Case, a: Autoscalers) -> _Finding | None:
    name = next((case.target.annotations[k] for k in PROVREQ_ANNOTATIONS if k in case.target.annotations), None)
    if name is None or a.provreqs is None:
        return None
    req = a.provreqs.get((case.target.namespace, name))
    ev = {"provisioning_request": f"{case.target.namespace}/{name}"}
    if req is None:
        return _Finding(kind="history", evidence=ev, reason=f"the pod consumes ProvisioningRequest {name}, which is "
                                                            "not in the bundle")
    ev["conditions"] = {k: f"{c.status} {c.reason}".strip() for k, c in req.conditions.items()}
    ev["source"] = req.source
    cond = req.conditions
    if (c := cond.get("Failed")) is not None and c.status == "True":
        return _Finding(kind="blocked", evidence=ev, reason=f"ProvisioningRequest {name} Failed: {c.reason}: {c.message}")
    if (c := cond.get("Provisioned")) is not None and c.status == "True":
        return _Finding(kind="history", evidence=ev, reason=f"ProvisioningRequest {name} is Provisioned")
    if (c := cond.get("Accepted")) is not None and c.status == "True":
        return _Finding(kind="coming", evidence=ev, reason=f"ProvisioningRequest {name} ({req.class_name}) is Accepted "
                                                           f"and not yet Provisioned, accepted {_ago(c.since, a)}")
    return None


def _finding(case: Case, a: Autoscalers) -> _Finding | None:
    """What the autoscalers say about this pod now: its ProvisioningRequest (an object decides), else the newest
    of their events on it, judged against the pod's latest scheduling failure and confirmed by the objects."""
    found = _provisioning_request(case, a)
    if found is not None and found.kind != "history":
        return found
    key = (case.target.namespace, case.target.name)
    said = a.said.get(key)
    if not said:
        return found
    last = said[-1]
    failed = a.scheduler_failed.get(key, "")
    current = not failed or _whole(last.time) >= _whole(failed)
    if last.component == CA and last.reason == "TriggeredScaleUp":
        found = _ca_triggered(last, current, a)
    elif last.component == CA and last.reason == "NotTriggerScaleUp":
        found = _ca_refused(last, current, a)
    elif last.component == KARPENTER and last.reason == "Nominated":
        found = _karpenter_nominated(last, current, a)
    elif last.component == CA and last.reason == "FailedScaleUp":  # GKE's: the cloud refused the group's increase
        found = _Finding(kind="blocked", reason=f"cluster-autoscaler: FailedScaleUp: {last.message!r}")
    elif last.component == KARPENTER and last.reason == "FailedScheduling":
        found = _karpenter_refused(last, current, a, _requests(case))
    else:
        return found
    found.evidence = {"said": _said(last, a), **found.evidence}
    if failed:
        found.evidence["scheduler_failed_at"] = failed
    return found


def refine(case: Case, decision: Decision) -> Decision | None:
    """`scaling-up` or `scale-up-blocked` over the funnel's decision; None leaves it as it is."""
    a = case.cluster.autoscalers
    funnel = case.funnel
    if a is None or not a.present or funnel is None or funnel.word is None or decision.word != funnel.word:
        return None
    ev = case.evidence
    base = funnel.word
    found = _finding(case, a) if case.target.kind == "Pod" else None
    if found is None:
        ev["autoscaler"] = {"present": list(a.present), "said": "nothing about this pod: the funnel's word stands"}
        return None
    ev["autoscaler"] = {"present": list(a.present), "finding": found.kind, **found.evidence}
    if found.kind == "coming":
        word = words.SCALING_UP
    elif found.kind == "blocked" and base in CAPACITY:
        word = words.SCALE_UP_BLOCKED
    elif found.kind == "gpu-missing" and base in CAPACITY:
        word = words.NO_GPU_NODE
    else:
        ev["autoscaler"]["note"] = (f"{found.reason}; the funnel's word stands" if found.kind != "blocked" else
                                    f"{found.reason}; but {base} is the pod's own to fix, so its word stands")
        return None
    ev["without_new_node"] = base
    return Decision(word=word, reason=f"{found.reason}; without a new node: {base}", underlying=base,
                    action=found.action)


@prose.says("autoscaler")
def _autoscaler_says(value: object) -> list[str]:
    """What the autoscaler said about the pod and what its objects confirm, one fact a line."""
    if not isinstance(value, dict):
        return [f"Autoscaler: {value}."]
    present = ", ".join(map(str, value.get("present") or ())) or "no autoscaler"
    said = value.get("said")
    out = []
    if isinstance(said, dict):
        out.append(f"The {said.get('component')}'s latest {said.get('reason')} event on the pod "
                   f"({said.get('when') or said.get('time') or 'time unknown'}) says: \"{said.get('message')}\".")
    elif said:
        out.append(f"Present: {present}; it said {said}.")
    for g in value.get("node_groups") or ():
        out.append(f"Node group {g.get('name')}: {g.get('from')} -> {g.get('to')} nodes asked (maximum {g.get('max')}).")
    for g in value.get("status") or ():
        parts = [f"{k.replace('_', '-')} {v}" for k, v in g.items() if k != "name" and v not in (None, "")]
        out.append(f"cluster-autoscaler-status says of group {g.get('name')}: " + ", ".join(parts) + ".")
    for f in value.get("scale_up_failed") or ():
        if isinstance(f, dict):
            out.append(f"ScaleUpFailed ({f.get('when') or f.get('time')}): \"{f.get('message')}\".")
    if value.get("nodeclaim"):
        bits = [f"{k} {value[k]}" for k in ("nodepool", "instance_type", "state", "created", "node") if value.get(k)]
        out.append(f"NodeClaim {value['nodeclaim']}" + (": " + ", ".join(b.replace("_", " ") for b in bits) if bits else
                                                         " (not in the bundle)") + ".")
    for p in value.get("nodepools") or ():
        if isinstance(p, dict):
            usage = p.get("usage") or {}
            limits = ", ".join(f"{r} limit {q}, in use {usage.get(r, 0)}" for r, q in (p.get("limits") or {}).items())
            out.append(f"NodePool {p.get('name')}: {limits}; over: {', '.join(map(str, p.get('over') or ()))}.")
    if value.get("provisioning_request"):
        conds = ", ".join(f"{k} {v}" for k, v in (value.get("conditions") or {}).items())
        out.append(f"ProvisioningRequest {value['provisioning_request']}" + (f": {conds}" if conds else "") + ".")
    if value.get("template"):
        out.append(f"{value['template']}.")
    if value.get("scheduler_failed_at"):
        out.append(f"The scheduler last failed to place it at {value['scheduler_failed_at']}.")
    if value.get("note"):
        out.append(f"{value['note']}.")
    return out


@prose.says("without_new_node")
def _without_says(value: object) -> list[str]:
    return [f"Without a new node the answer would be {value}."]


FAMILY: Family = Plain(name="autoscalers", kinds=(
    catalog.NODEPOOLS, catalog.NODECLAIMS, catalog.PROVISIONINGREQUESTS, catalog.CA_STATUS_CONFIGMAP, catalog.EVENTS),
    rules=(Rule(rows="34-35", words=(words.SCALING_UP, words.SCALE_UP_BLOCKED), refine=refine),))
