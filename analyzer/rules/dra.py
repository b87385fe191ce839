"""The Dynamic Resource Allocation family (causes.md v2 rows 2, 6, 7 and the claim parts of 9, 10, 12, 14; dra.md).

Before the funnel: a claim the claim controller could not create because of quota (row 2), a claim or template
that does not exist (row 6), a DeviceClass that does not exist (row 7). In the funnel, per node, the device steps
of dra.md (model/dra/allocate.py) map to stages: no device of the class offered (row 9, `no-gpu-node`), none
passes the request's selectors or constraints even with every device free (row 10), every device that could
serve carries an untolerated device taint (row 12), too few of them unallocated (row 14, `exhausted`; too-large
when even an empty node has too few). A device or expression the model cannot judge leaves the node a candidate
marked unknown: if only such nodes are left, the answer is `unclassified`, naming why.
"""

from __future__ import annotations

from analyzer import words
from analyzer.model.dra.outcomes import ExtendedOffer, NodeOutcome, RequestEvidence, Resolution
from analyzer.model.dra.reading import pod_claims
from analyzer.model.views import Cluster, NodeView
from analyzer.rules.case import Case, Decision, Reason

# The scheduler's DynamicResources filter (pkg/scheduler/framework/plugins/dynamicresources): one sentence for
# every cause, which is why this family exists.
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"  # an allocated claim whose nodeSelector excludes the node
UNKNOWN_STAGES = ("unmodelled", "unevaluable")


SHOWN = 120  # characters of an expression shown in a reason or the evidence: bundles are untrusted, a 1 MB one is named


def shown(expression: str) -> str:
    """An expression as the reason and the evidence quote it: whole when short, else its start and its size."""
    if len(expression) <= SHOWN:
        return expression
    return f"{expression[:SHOWN]}… ({len(expression)} characters)"


def claims_of(case: Case):  # -> PodClaims | None
    t = case.target
    spec = case.spec if isinstance(case.spec, dict) else {}
    return pod_claims({"metadata": {"namespace": t.namespace, "name": t.name}, "spec": spec, "status": t.status})


def claim_quota(case: Case) -> Decision | None:
    """Row 2 for claims: the claim controller could not create the pod's ResourceClaim (its quota said no)."""
    t = case.target
    said = case.cluster.claim_events.get((t.namespace, t.name)) if t.created else None
    if said is None or "exceeded quota" not in said.message:
        return None
    case.evidence["claim_creation"] = {"source": said.source, "message": said.message}
    return Decision(word=words.QUOTA_EXCEEDED, reason=f"the pod's ResourceClaim could not be created: {said.message}")


def _claims_evidence(res: Resolution) -> list[dict]:
    return [{"claim": rc.pod_claim, "from": rc.owner, "allocated": rc.allocated} for rc in res.claims]


def claims_exist(case: Case) -> Decision | None:
    """Rows 6 and 7: every claim (or template) the pod names exists, and every DeviceClass its requests name."""
    pc = claims_of(case)
    dra = case.cluster.dra
    if pc is None or dra is None:
        return None  # no claims; or no nodes.json, which the funnel rule names
    ev = case.evidence
    if dra.missing:
        kind, why = next(iter(dra.missing.items()))
        ev["missing"] = f"{kind}.json"
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"the pod has resource claims, but {why}")
    res = dra.world.resolve(pc)
    ev["claims"] = _claims_evidence(res)
    if res.unreadable:
        first = res.unreadable[0]
        ev["missing"] = first.file
        ev["invalid"] = [str(p) for p in res.unreadable[:20]]
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason=f"a DRA object the pod needs is unreadable: {first}")
    if res.missing_claims:
        ev["missing_claims"] = [{"claim": m.pod_claim, "kind": m.kind, "name": f"{m.namespace}/{m.name}"}
                                for m in res.missing_claims]
        m = res.missing_claims[0]
        file = "resourceclaims.json" if m.kind == "ResourceClaim" else "resourceclaimtemplates.json"
        return Decision(word=words.NO_RESOURCECLAIM,
                        reason=f"{m.kind} {m.namespace}/{m.name} (pod claim {m.pod_claim!r}) is not in {file}")
    if res.missing_classes:
        ev["missing_classes"] = [{"from": m.owner, "request": m.request, "deviceClassName": m.device_class}
                                 for m in res.missing_classes]
        m = res.missing_classes[0]
        return Decision(word=words.NO_DEVICECLASS,
                        reason=f"{m.owner} request {m.request!r} names DeviceClass {m.device_class!r}, "
                               f"which is not in deviceclasses.json")
    # Only a complete resolution goes on to the funnel (DraWorld.evaluate refuses the others): set it last, so
    # the scheduler-message rebuild of an insufficient-evidence pod never evaluates an incomplete one.
    case.claims = res
    return None


# -- per node, inside the funnel --------------------------------------------------------------------

def outcome(claims: Resolution | None, node: NodeView, cluster: Cluster) -> NodeOutcome | None:
    if claims is None or cluster.dra is None:
        return None
    return cluster.dra.world.evaluate(claims, node)


def _short_request(o: NodeOutcome, step: str) -> RequestEvidence | None:
    """The first request whose devices run out at this step (or the first request at all)."""
    for r in o.requests:
        need = r.left.get("taints", 0) if r.needed == "All" else r.needed
        if r.left.get(step, 0) < max(int(need) if isinstance(need, int) else 1, 1):
            return r
    return o.requests[0] if o.requests else None


def _names(r: RequestEvidence) -> str:
    return f"{r.owner} request {r.request!r} (class {r.device_class})"


def no_devices(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None:
        return None
    if o.stage == "pinned":
        return Reason(check="claim-pinned", text=f"claim {o.pinned_by} is allocated to another node",
                      scheduler=(NOT_AVAILABLE,))
    if o.stage == "class":
        r = _short_request(o, "class")
        what = _names(r) if r else "a claim"
        return Reason(check="no-devices", text=f"no ResourceSlice offers a device for {what}", scheduler=(CANNOT_ALLOCATE,))
    return None


def device_selectors(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in ("selectors", "constraints"):
        return None
    if o.stage == "constraints":
        return Reason(check="device-constraints", text="no set of devices satisfies the claim's matchAttribute constraints",
                      scheduler=(CANNOT_ALLOCATE,))
    r = _short_request(o, "selectors")
    errors = "; ".join(sorted({e.error for e in r.cel_errors}))[:200] if r else ""
    text = (f"{_names(r)}: {r.left.get('class', 0)} device(s) of the class, {r.left.get('selectors', 0)} pass its "
            f"selectors, {r.needed} needed" if r else "no device passes the claim's selectors")
    return Reason(check="device-selectors", text=text + (f" (CEL: {errors})" if errors else ""), scheduler=(CANNOT_ALLOCATE,))


def device_taints(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage != "taints":
        return None
    r = _short_request(o, "taints")
    what = _names(r) if r else "the claim"
    return Reason(check="device-taint", text=f"every device that could serve {what} has an untolerated device taint",
                  scheduler=(CANNOT_ALLOCATE,))


def devices_free(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in ("free", "enough"):
        return None
    r = _short_request(o, "free")
    if r is None:
        return Reason(check="devices", text="too few free devices for the claims", scheduler=(CANNOT_ALLOCATE,))
    held = ", ".join(f"{h.device} by {h.claim}" + (f" ({', '.join(h.pods)})" if h.pods else "") for h in r.holders[:3])
    if o.too_large:
        text = f"{_names(r)}: needs {r.needed}, the node has {r.left.get('taints', 0)} matching device(s) even when empty"
    else:
        text = f"{_names(r)}: {r.left.get('free', 0)} of {r.left.get('taints', 0)} matching device(s) free, {r.needed} needed"
    return Reason(check="devices", text=text + (f"; held: {held}" if held else ""), scheduler=(CANNOT_ALLOCATE,))


def unknown(claims: Resolution | None, node: NodeView, cluster: Cluster) -> str | None:
    """Why the model cannot judge the claims on this node (a device or expression it does not model), or None."""
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in UNKNOWN_STAGES:
        return None
    if o.stage == "unevaluable":
        return f"CEL expression {shown(o.unevaluable)!r} cannot be evaluated ({o.unevaluable_why})"
    return f"not modelled: {o.unmodelled}"


def outcome_evidence(o: NodeOutcome) -> dict:
    """One node's device steps, as plain data (evidence: what 'cannot allocate all claims' hides)."""
    out: dict = {"node": o.node, "stage": o.stage, "requests": [
        {"from": r.owner, "request": r.request, "deviceClassName": r.device_class, "needed": r.needed,
         "left_after": dict(r.left), "chosen": list(r.chosen),
         "held_by": [{"device": h.device, "claim": h.claim, "pods": list(h.pods)} for h in r.holders[:20]],
         "cel_errors": [{"device": e.device, "expression": shown(e.expression), "error": e.error} for e in r.cel_errors[:5]]}
        for r in o.requests]}
    if o.too_large:
        out["too_large"] = True
    for k in ("pinned_by", "unmodelled", "unevaluable"):
        if getattr(o, k):
            out[k] = shown(getattr(o, k)) if k == "unevaluable" else getattr(o, k)
    return out


def extended_offer(resource: str, node: NodeView, cluster: Cluster) -> ExtendedOffer | None:
    """A DeviceClass serving this extended resource on a node that does not advertise it (dra.md)."""
    if cluster.dra is None:
        return None
    return cluster.dra.world.extended_offer(resource, node)
