"""What the pod's own spec and binding say before any node is looked at (causes.md).

no-gpu-request: GPU intent, but no accelerator asked for (neither a limit, nor a resource claim, nor a GPU asked
  the way a sharing scheduler reads it: model/gpu_sharing.py);
scheduling-gated: the scheduler does not consider it yet.
(A bound pod the node will not start is rules/node_start.py.)
"""

from __future__ import annotations

from analyzer import words
from analyzer import prose
from analyzer.kube import TERMINATED
from analyzer.model.gpu_sharing import sharing_request
from analyzer.model.podspec import accelerator_requests, gpu_intent, gpu_stack
from analyzer.model.quantity import format_units
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule


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
    shared = sharing_request(spec, t.annotations)
    if shared:
        case.evidence["gpu_sharing_request"] = shared
    stack = gpu_stack(spec) if intent and not accel and not claims and not shared else None
    if stack is not None:
        case.evidence["gpu_stack"] = stack
        return None
    if intent and not accel and not claims and not shared:
        first = next((c.get("name") for c in spec.get("containers") or () if isinstance(c, dict)), None)
        return Decision(word=words.NO_GPU_REQUEST, action=(
            f"add the accelerator limit to container {first} (resources.limits, e.g. nvidia.com/gpu: 1), or a resource "
            "claim" if first else None),
                        reason=f"GPU intent ({intent}) but no container requests an accelerator and no resource claim")
    return None


def running_pod(case: Case) -> Decision:
    """A bound pod past Pending, asked for by name (no target of the order): what it requests is the one fact its
    ticket needs (the pod runs, but does it ask for a GPU?); a pod that ran and ended says so. Leaves the verdict's
    evidence in `case.evidence`."""
    t = case.target
    decision = no_gpu_request(case)
    if decision is not None:
        case.evidence = {"phase": t.phase, "nodeName": t.node_name, **case.evidence}
        return Decision(word=decision.word, reason=f"{t.phase} on {t.node_name}, {decision.reason}")
    accel = accelerator_requests(t.spec or {}, case.cluster.config)
    claims = case.evidence.get("resource_claims")
    asks = (", ".join(f"{format_units(r, q)} {r}" for r, q in accel.items()) if accel else
            f"resource claim(s) {', '.join(claims)}" if claims else "no accelerator")
    seen = case.evidence
    case.evidence = {"phase": t.phase, "nodeName": t.node_name, **seen, "accelerator_requests": accel}
    if t.phase in TERMINATED:
        return Decision(word=words.RUNNING,
                        reason=f"{t.phase} on {t.node_name}: it ran and ended (it asked for {asks}); nothing waits to "
                               "be scheduled",
                        action="nothing to fix at scheduling: it has finished; read its logs and exit code for how it "
                               "ended, and recreate it to run again")
    intent = seen.get("gpu_intent")
    said = f"; GPU intent: {intent}" if intent and not accel and not claims else ""
    if "gpu_stack" in seen:
        said = f"; it is {seen['gpu_stack']}"
    return Decision(word=words.RUNNING,
                    reason=f"{t.phase} on {t.node_name}, asking for {asks}{said}: not a scheduling problem",
                    action=None if accel or claims or "gpu_stack" in seen else
                    "nothing to fix at scheduling; it asks for no accelerator, so no GPU is given to it: add the "
                    "accelerator limit if it needs one")


def scheduling_gated(case: Case) -> Decision | None:
    gates = [g.get("name") for g in (case.spec or {}).get("schedulingGates") or ()]
    if not gates:
        return None
    case.evidence["schedulingGates"] = gates
    named = ", ".join(map(str, gates))
    return Decision(word=words.SCHEDULING_GATED, reason="scheduling gates: " + named,
                    action=f"look at the controller that owns the gate {named}: the scheduler waits until it is removed")


@prose.says("gpu_intent")
def _say_intent(value: object) -> list[str]:
    return [f"The pod shows GPU intent: {value}."]


@prose.says("accelerator_requests")
def _say_accelerators(value: object) -> list[str]:
    if not isinstance(value, dict) or not value:
        return ["No container asks for an accelerator resource."]
    return ["It asks for " + ", ".join(f"{q} {r}" for r, q in value.items()) + "."]


@prose.says("resource_claims")
def _say_claims(value: object) -> list[str]:
    return ["It names the resource claim(s) " + ", ".join(map(str, value)) + "." if isinstance(value, list) else ""]


@prose.says("gpu_sharing_request")
def _say_sharing(value: object) -> list[str]:
    asks = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return [f"It asks for a GPU the way a GPU-sharing scheduler reads it: {asks}."]


@prose.says("schedulingGates")
def _say_gates(value: object) -> list[str]:
    names = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return [f"Its scheduling gates: {names}; the scheduler does not look at it until they are removed."]


@prose.says("gpu_stack")
def _say_stack(value: object) -> list[str]:
    return [f"It is part of the GPU stack, {value}: it serves the GPUs and asks for none, as it should."]


FAMILY: Family = Plain(name="intent", kinds=(catalog.PODS, catalog.NODES), rules=(
    Rule(rows="7", words=(words.NO_GPU_REQUEST,), decide=no_gpu_request),
    Rule(rows="11", words=(words.SCHEDULING_GATED,), decide=scheduling_gated),))
