"""Rows 3-5 of causes.md: what the pod's own spec and binding say before any node is looked at.

3 no-gpu-request: GPU intent, but no accelerator asked for (neither a limit nor a resource claim);
4 scheduling-gated: the scheduler does not consider it yet;
5 node-side: bound to a node and still Pending.
"""

from __future__ import annotations

from analyzer import words
from analyzer.model.podspec import accelerator_requests, gpu_intent
from analyzer.rules.case import Case, Decision


def no_gpu_request(case: Case) -> Decision | None:
    spec, t, c = case.spec or {}, case.target, case.cluster
    intent = gpu_intent(spec, c.runtimeclasses, c.config, (t.namespace, t.name))
    accel = accelerator_requests(spec, c.config)
    claims = [str(rc.get("name")) for rc in spec.get("resourceClaims") or () if isinstance(rc, dict)]
    if intent:
        case.evidence["gpu_intent"] = intent
    if accel or intent:
        case.evidence["accelerator_requests"] = accel
    if claims:
        case.evidence["resource_claims"] = claims
    if intent and not accel and not claims:
        return Decision(word=words.NO_GPU_REQUEST,
                        reason=f"GPU intent ({intent}) but no container requests an accelerator and no resource claim")
    return None


def scheduling_gated(case: Case) -> Decision | None:
    gates = [g.get("name") for g in (case.spec or {}).get("schedulingGates") or ()]
    if not gates:
        return None
    case.evidence["schedulingGates"] = gates
    return Decision(word=words.SCHEDULING_GATED, reason="scheduling gates: " + ", ".join(map(str, gates)))


def node_side(case: Case) -> Decision | None:
    t, c = case.target, case.cluster
    if not (t.created and t.node_name and t.phase == "Pending"):
        return None
    ev: dict = {"nodeName": t.node_name, "phase": t.phase,
                "node_in_bundle": t.node_name in c.nodes_by_name if c.nodes is not None else None}
    waiting = []
    for cs in (t.status.get("initContainerStatuses") or []) + (t.status.get("containerStatuses") or []):
        w = (cs.get("state") or {}).get("waiting")
        if w:
            waiting.append({"container": cs.get("name"), "reason": w.get("reason"), "message": w.get("message")})
    if waiting:
        ev["waiting"] = waiting
    case.evidence.update(ev)
    return Decision(word=words.NODE_SIDE, reason=f"bound to {t.node_name} but still Pending: the node could not start it")
