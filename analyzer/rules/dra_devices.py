"""The DRA family's checks inside the funnel (dra.md "Which devices a request can use on a node"): per node, the
device steps of the pod's claims (model/dra/allocate.py) as Reasons the funnel's stages return: no device of the
class (`no-gpu-node`), none passing the selectors or constraints (`device-selector-mismatch`), all tainted
(`untolerated-taint`), too few free (`exhausted`). Apart from
rules/dra.py (the rows before the funnel) because the checks are called by rules/checks.py, which the rule
modules build on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules.reason import Check, Reason

if TYPE_CHECKING:  # the DRA model is imported only by a bundle that has DRA objects (model/dra/world.py)
    from analyzer.model.dra.outcomes import ExtendedOffer, NodeOutcome, RequestEvidence, Resolution

# The scheduler's DynamicResources filter (pkg/scheduler/framework/plugins/dynamicresources): one sentence for
# every cause, which is why this family exists.
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"  # an allocated claim whose nodeSelector excludes the node
UNKNOWN_STAGES = ("unmodelled", "unevaluable", "taints-unknown")


SHOWN = 120  # characters of an expression shown in a reason or the evidence: bundles are untrusted, a 1 MB one is named


def shown(expression: str) -> str:
    """An expression as the reason and the evidence quote it: whole when short, else its start and its size."""
    if len(expression) <= SHOWN:
        return expression
    return f"{expression[:SHOWN]}… ({len(expression)} characters)"


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


def _tainted(r: RequestEvidence | None, shown_devices: int = 3) -> str:
    """The devices the taints step removed and the taints that did it (a DeviceTaintRule's taint names the rule)."""
    if r is None or not r.tainted:
        return ""
    text = "; ".join(f"{t.device} {t.text}" for t in r.tainted[:shown_devices])
    return text + (f"; … and {len(r.tainted) - shown_devices} more" if len(r.tainted) > shown_devices else "")


def no_devices(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None:
        return None
    if o.stage == "pinned":
        return Reason(check=Check.CLAIM_PINNED, text=f"claim {o.pinned_by} is allocated to another node",
                      scheduler=(NOT_AVAILABLE,))
    if o.stage == "class":
        r = _short_request(o, "class")
        what = _names(r) if r else "a claim"
        return Reason(check=Check.NO_DEVICES, text=f"no ResourceSlice offers a device for {what}", scheduler=(CANNOT_ALLOCATE,))
    return None


def device_selectors(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in ("selectors", "constraints"):
        return None
    if o.stage == "constraints":
        return Reason(check=Check.DEVICE_CONSTRAINTS, text="no set of devices satisfies the claim's matchAttribute constraints",
                      scheduler=(CANNOT_ALLOCATE,))
    r = _short_request(o, "selectors")
    errors = "; ".join(sorted({e.error for e in r.cel_errors}))[:200] if r else ""
    text = (f"{_names(r)}: {r.left.get('class', 0)} device(s) of the class, {r.left.get('selectors', 0)} pass its "
            f"selectors, {r.needed} needed" if r else "no device passes the claim's selectors")
    return Reason(check=Check.DEVICE_SELECTORS, text=text + (f" (CEL: {errors})" if errors else ""), scheduler=(CANNOT_ALLOCATE,))


def device_taints(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage != "taints":
        return None
    r = _short_request(o, "taints")
    what = _names(r) if r else "the claim"
    tainted = _tainted(r)
    return Reason(check=Check.DEVICE_TAINT, text=f"every device that could serve {what} has an untolerated device taint"
                  + (f": {tainted}" if tainted else ""), scheduler=(CANNOT_ALLOCATE,))


def devices_free(claims: Resolution | None, node: NodeView, cluster: Cluster) -> Reason | None:
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in ("free", "enough"):
        return None
    r = _short_request(o, "free")
    if r is None:
        return Reason(check=Check.DEVICES, text="too few free devices for the claims", scheduler=(CANNOT_ALLOCATE,))
    held = ", ".join(f"{h.device} by {h.claim}" + (f" ({', '.join(h.pods)})" if h.pods else "") for h in r.holders[:3])
    if o.too_large:
        text = f"{_names(r)}: needs {r.needed}, the node has {r.left.get('taints', 0)} matching device(s) even when empty"
    else:
        text = f"{_names(r)}: {r.left.get('free', 0)} of {r.left.get('taints', 0)} matching device(s) free, {r.needed} needed"
    tainted = _tainted(r)
    text += (f"; held: {held}" if held else "") + (f"; tainted: {tainted}" if tainted else "")
    return Reason(check=Check.DEVICES, text=text, scheduler=(CANNOT_ALLOCATE,))


def unknown(claims: Resolution | None, node: NodeView, cluster: Cluster) -> str | None:
    """Why the model cannot judge the claims on this node (a device or expression it does not model), or None."""
    o = outcome(claims, node, cluster)
    if o is None or o.stage not in UNKNOWN_STAGES:
        return None
    if o.stage == "unevaluable":
        return f"CEL expression {shown(o.unevaluable)!r} cannot be evaluated ({o.unevaluable_why})"
    if o.stage == "taints-unknown":
        return str(o.unmodelled)
    return f"not modelled: {o.unmodelled}"


def outcome_evidence(o: NodeOutcome) -> dict:
    """One node's device steps, as plain data (evidence: what 'cannot allocate all claims' hides)."""
    out: dict = {"node": o.node, "stage": o.stage, "requests": [
        {"from": r.owner, "request": r.request, "deviceClassName": r.device_class, "needed": r.needed,
         "left_after": dict(r.left), "chosen": list(r.chosen),
         "held_by": [{"device": h.device, "claim": h.claim, "pods": list(h.pods)} for h in r.holders[:20]],
         "cel_errors": [{"device": e.device, "expression": shown(e.expression), "error": e.error} for e in r.cel_errors[:5]],
         "tainted": [{"device": t.device, "taints": list(t.taints), **({"taints_more": t.more} if t.more else {})}
                     for t in r.tainted[:20]]}
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
    return cluster.dra.extended_offer(resource, node)
