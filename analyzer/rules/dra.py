"""The Dynamic Resource Allocation family (causes.md `quota-exceeded`, `no-resourceclaim`,
`no-deviceclass` and the claim parts of `no-gpu-node`, `device-selector-mismatch`, `untolerated-taint`, `exhausted`; dra.md).

Here, before the funnel: a claim the claim controller could not create because of quota (`quota-exceeded`), a claim or template
that does not exist (`no-resourceclaim`), a DeviceClass that does not exist (`no-deviceclass`). In the funnel (rules/dra_devices.py, whose
checks rules/checks.py calls), per node, the device steps
of dra.md (model/dra/allocate.py) map to stages: no device of the class offered (`no-gpu-node`), none
passes the request's selectors or constraints even with every device free (`device-selector-mismatch`), every device that could
serve carries an untolerated device taint (`untolerated-taint`), too few of them unallocated (`exhausted`; too-large
when even an empty node has too few). A device or expression the model cannot judge leaves the node a candidate
marked unknown: if only such nodes are left, the answer is `unclassified`, naming why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.bundle import catalog
from analyzer.bundle.catalog import RESOURCECLAIMS, RESOURCECLAIMTEMPLATES
from analyzer import words
from analyzer import prose
from analyzer.model.podspec import names_claims
from analyzer.rules import dra_devices
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Family, Answered, Plain, Rule

if TYPE_CHECKING:
    from analyzer.model.dra.outcomes import Resolution
    from analyzer.model.events import SchedulerSaid
    from analyzer.model.views import Cluster
    from analyzer.rules.funnel_result import FunnelResult


def claims_of(case: Case):  # -> PodClaims | None
    t = case.target
    spec = case.spec if isinstance(case.spec, dict) else {}
    if not names_claims(spec, t.status if isinstance(t.status, dict) else {}):
        return None
    from analyzer.model.dra.reading import pod_claims  # only a pod with claims needs the DRA model

    return pod_claims({"metadata": {"namespace": t.namespace, "name": t.name}, "spec": spec, "status": t.status})


def claim_quota(case: Case) -> Decision | None:
    """`quota-exceeded` for claims: the claim controller could not create the pod's ResourceClaim (its quota said no)."""
    t = case.target
    said = case.cluster.claim_events.get((t.namespace, t.name)) if t.created else None
    if said is None or "exceeded quota" not in said.message:
        return None
    case.evidence["claim_creation"] = {"source": said.source, "message": said.message}
    return Decision(word=words.QUOTA_EXCEEDED, reason=f"the pod's ResourceClaim could not be created: {said.message}")


def _claims_evidence(res: Resolution) -> list[dict]:
    return [{"claim": rc.pod_claim, "from": rc.owner, "allocated": rc.allocated} for rc in res.claims]


def claims_exist(case: Case) -> Decision | None:
    """`no-resourceclaim` and `no-deviceclass`: every claim (or template) the pod names exists, and every DeviceClass its requests name."""
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
        file = RESOURCECLAIMS.file if m.kind == RESOURCECLAIMS.item_kind else RESOURCECLAIMTEMPLATES.file
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


@prose.says("claims")
def _claims_says(value: object) -> list[str]:
    return [f"Pod claim {c.get('claim')} is {c.get('from')}, " + ("allocated." if c.get("allocated") else "not allocated yet.")
            for c in value if isinstance(c, dict)] if isinstance(value, list) else []


@prose.says("missing_claims")
def _missing_claims_says(value: object) -> list[str]:
    return [f"Pod claim {c.get('claim')} names {c.get('kind')} {c.get('name')}, which is not in the bundle."
            for c in value if isinstance(c, dict)] if isinstance(value, list) else []


@prose.says("missing_classes")
def _missing_classes_says(value: object) -> list[str]:
    return [f"{c.get('from')} request {c.get('request')} names DeviceClass {c.get('deviceClassName')}, which is not "
            "in the bundle." for c in value if isinstance(c, dict)] if isinstance(value, list) else []


@prose.says("claim_creation")
def _claim_creation_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [f"The resource claim controller could not create its ResourceClaim ({value.get('source')}): "
            f"\"{value.get('message')}\"."]


@prose.says("devices")
def _devices_says(value: object) -> list[str]:
    """Per node, how many devices are left after each step of dra.md, and who holds them."""
    out = []
    for d in value if isinstance(value, list) else []:
        if not isinstance(d, dict):
            continue
        for r in d.get("requests") or ():
            if not isinstance(r, dict):
                continue
            left = r.get("left_after") or {}
            steps = ", ".join(f"{left.get(k, 0)} after {k}" for k in ("class", "selectors", "taints", "free"))
            out.append(f"On node {d.get('node')}, request {r.get('request')} of {r.get('from')} needs {r.get('needed')} "
                       f"device(s) of class {r.get('deviceClassName')}: {steps}"
                       + (" (too large: not even an empty node has enough)" if d.get("too_large") else "") + ".")
            held = ", ".join(f"{h.get('device')} by claim {h.get('claim')}" + (f" ({', '.join(h.get('pods') or ())})"
                                                                                if h.get("pods") else "")
                             for h in (r.get("held_by") or ())[:5] if isinstance(h, dict))
            if held:
                out.append(f"Held on {d.get('node')}: {held}.")
    return out


MAX_DEVICE_NODES = 20


def _devices_evidence(cluster: Cluster, funnel: FunnelResult) -> list[dict]:
    """What `cannot allocate all claims` hides: for the nodes the last stage answered (the candidates at that
    stage, at most 20), each claim request's devices left after class, selectors, taints and free."""
    claims = funnel.facts.claims
    out = []
    for node in (funnel.last.kept or [n for n in funnel.fit_candidates] or
                 [cluster.nodes_by_name[name] for name, _ in funnel.last.removed_nodes(limit=MAX_DEVICE_NODES)
                  if name in cluster.nodes_by_name]):
        o = dra_devices.outcome(claims, node, cluster)
        if o is not None:
            out.append(dra_devices.outcome_evidence(o))
        if len(out) >= MAX_DEVICE_NODES:
            break
    if not out:  # the last stage removed them all: show those
        for name, _ in funnel.last.removed_nodes(limit=MAX_DEVICE_NODES):
            removed = cluster.nodes_by_name.get(name)
            o = dra_devices.outcome(claims, removed, cluster) if removed is not None else None
            if o is not None:
                out.append(dra_devices.outcome_evidence(o))
    return out


def _held_action(devices: list[dict]) -> str | None:
    """`exhausted` by a claim's devices, all held (not too large: the fit's action says that one): the pods to wait
    for and the class to add, from the first node whose devices run out at the free step."""
    for d in devices:
        for r in d.get("requests") or ():
            left, need = r.get("left_after") or {}, r.get("needed")
            if d.get("too_large") or not r.get("held_by") or not isinstance(need, int) or left.get("free", 0) >= need:
                continue
            pods = sorted({p for h in r["held_by"] for p in h.get("pods") or ()} or {h["claim"] for h in r["held_by"]})
            shown = ", ".join(pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
            return (f"wait for {shown} to release the {r.get('deviceClassName')} devices on {d.get('node')}, or add "
                    f"a node with devices of class {r.get('deviceClassName')}")
    return None


class DraFamily(Plain):
    def evidence(self, answered: Answered) -> None:
        """A pod with claims that reached the funnel: its claims' devices on the nodes the funnel's last stage
        answered (one list per shape)."""
        case, shape = answered.case, answered.shape
        if shape is None or case.claims is None or case.funnel is None:
            return
        if shape.devices is None:
            shape.devices = _devices_evidence(case.cluster, case.funnel)
        if shape.devices:
            case.evidence["devices"] = shape.devices
        if answered.action is None and answered.word == words.EXHAUSTED:
            answered.action = _held_action(shape.devices)

    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        if answered.word == words.NO_DEVICECLASS:
            missing = answered.case.evidence["missing_classes"][0]
            # A PreFilter failure: no per-node count (seen on a real v1.36.2 scheduler, dra_devices.md).
            return {"rebuilt": f"0/{len(answered.cluster.nodes or ())} nodes are available: request "
                               f"{missing['request']}: device class {missing['deviceClassName']} does not exist."}
        if answered.word == words.NO_RESOURCECLAIM:
            return {"rebuilt": None,
                    "comparison": "the scheduler never queues a pod whose ResourceClaim or template is missing: "
                                  "no PodScheduled condition and no event are expected"}
        return None


FAMILY: Family = DraFamily(name="dra", kinds=(
    catalog.RESOURCECLAIMS, catalog.RESOURCECLAIMTEMPLATES, catalog.RESOURCESLICES, catalog.DEVICECLASSES,
    catalog.DEVICETAINTRULES, catalog.EVENTS), rules=(
    Rule(rows="6", words=(words.QUOTA_EXCEEDED,), decide=claim_quota),  # a pod's ResourceClaim refused by quota
    Rule(rows="18-19", words=(words.NO_RESOURCECLAIM, words.NO_DEVICECLASS), decide=claims_exist),))
