"""The volume family (causes.md `no-volumeclaim`, `volume-unbound`, `volume-node-conflict`; filters.md).

Before the funnel, as the scheduler's VolumeBinding PreFilter: a claim the pod names that is not in the bundle, or
whose StorageClass is not (`no-volumeclaim`); a claim that nothing binds at scheduling time: Immediate and
still Pending, or bound to a PersistentVolume that is not in the bundle (`volume-unbound`). In the funnel,
one stage (`volume-node-conflict`): a bound volume's node affinity (VolumeBinding) or zone labels
(VolumeZone), and a WaitForFirstConsumer claim no available volume and no provisioner can serve on the node.

Sources: kubernetes pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go} (PreFilter,
FindPodVolumes, checkBoundClaims, findMatchingVolumes, checkVolumeProvisions, hasEnoughCapacity),
component-helpers/storage/volume (FindMatchingVolume, CheckNodeAffinity), plugins/volumezone/volume_zone.go.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import words
from analyzer import prose
from analyzer.bundle.catalog import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES
from analyzer.model.matching import term_matches
from analyzer.model.nodes import NodeView
from analyzer.model.pod_filters import ClaimUse, pod_filters
from analyzer.model.views import Cluster
from analyzer.model.volumes import (
    NO_PROVISIONER,
    WFFC,
    ZONE_LABELS,
    Claim,
    Storage,
    Volume,
)
from analyzer.bundle import catalog
from analyzer.model.events import SchedulerSaid
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Family, Answered, Plain, Rule
from analyzer.rules.checks import PodFacts
from analyzer.text import some_names
from analyzer.rules.reason import Check, Reason

# volumebinding.ErrReason…: the v1.34+ text for a PersistentVolume's node affinity, the older one before.
PV_AFFINITY = "node(s) didn't match PersistentVolume's node affinity"
PV_AFFINITY_OLD = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NO_VOLUME_ZONE = "node(s) had no available volume zone"  # volumezone.ErrReasonConflict
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"  # a PreFilter sentence


# -- no-volumeclaim, volume-unbound: before the funnel----------------------------------------------------------

def decide(case: Case) -> Decision | None:
    t, c, ev = case.target, case.cluster, case.evidence
    spec = case.spec if isinstance(case.spec, dict) else {}
    st = c.storage
    case.filters = pod_filters(namespace=t.namespace, name=t.name, labels=t.labels, spec=spec, storage=st,
                               placement=c.placement)
    uses = case.filters.claims
    if not uses or st is None:
        return None
    if PERSISTENTVOLUMECLAIMS.name in st.missing:
        ev["missing"] = PERSISTENTVOLUMECLAIMS.file
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"the pod uses PersistentVolumeClaim {uses[0].name!r}, but "
                               f"{st.missing[PERSISTENTVOLUMECLAIMS.name]} (collected by an older collector?)")
    for use in uses:
        found = _missing_claim(use, t.uid)
        if found is not None:
            ev["volume_claims"] = [_claim_evidence(u, st) for u in uses]
            ev["prefilter"] = f'persistentvolumeclaim "{use.name}" not found' if use.claim is None else found
            return Decision(word=words.NO_VOLUMECLAIM, reason=found)
    for use in uses:
        claim = use.claim
        if claim is None or claim.bound:  # (an ephemeral volume's claim the controller has not made yet)
            continue
        cls = st.class_of(claim)
        if cls and STORAGECLASSES.name in st.missing:
            ev["missing"] = STORAGECLASSES.file
            return Decision(word=words.INSUFFICIENT_EVIDENCE,
                            reason=f"claim {claim.key} is unbound and names StorageClass {cls!r}, but "
                                   f"{st.missing[STORAGECLASSES.name]}")
        if cls and cls not in st.classes:
            ev["volume_claims"] = [_claim_evidence(u, st) for u in uses]
            ev["prefilter"] = UNBOUND_IMMEDIATE  # a missing class counts as Immediate (seen on v1.36.2)
            return Decision(word=words.NO_VOLUMECLAIM,
                            reason=f"claim {claim.key} names StorageClass {cls!r}, which is not in {STORAGECLASSES.file}")
    for use in uses:
        claim = use.claim
        decision = _unbound(claim, st, ev, uses) if claim is not None else None
        if decision is not None:
            return decision
    return None


def _missing_claim(use: ClaimUse, pod_uid: str) -> str | None:
    if use.claim is None:
        if use.ephemeral:
            return None  # the ephemeral volume controller makes it; the scheduler waits for it
        return f"PersistentVolumeClaim {use.key} (volume {use.volume!r}) is not in {PERSISTENTVOLUMECLAIMS.file}"
    if use.ephemeral and pod_uid and pod_uid not in use.claim.owners:
        # ephemeral.VolumeIsForPod: a claim of that name owned by someone else
        return f"PVC {use.key} was not created for the pod (generic ephemeral volume {use.volume!r})"
    return None


def _unbound(claim: Claim, st: Storage, ev: dict, uses: tuple[ClaimUse, ...]) -> Decision | None:
    if claim.bound:
        if PERSISTENTVOLUMES.name in st.missing:
            ev["missing"] = PERSISTENTVOLUMES.file
            return Decision(word=words.INSUFFICIENT_EVIDENCE,
                            reason=f"claim {claim.key} is bound to {claim.volume_name!r}, but {st.missing[PERSISTENTVOLUMES.name]}")
        if claim.volume_name not in st.volumes:
            ev["volume_claims"] = [_claim_evidence(u, st) for u in uses]
            return Decision(word=words.VOLUME_UNBOUND,
                            reason=f"claim {claim.key} is bound to PersistentVolume {claim.volume_name!r}, "
                                   f"which is not in {PERSISTENTVOLUMES.file}",
                            action=f"recreate PersistentVolume {claim.volume_name} (claim {claim.key} is bound to it), "
                                   f"or replace the claim")
        return None
    cls = st.classes.get(st.class_of(claim))
    if cls is not None and cls.binding_mode == WFFC and not claim.volume_name:
        return None  # bound when the scheduler picks a node: the funnel's volume stage
    ev["volume_claims"] = [_claim_evidence(u, st) for u in uses]
    ev["prefilter"] = UNBOUND_IMMEDIATE
    what = (f"is pre-bound to {claim.volume_name!r} but not bound" if claim.volume_name
            else f"is Pending with {'no StorageClass' if cls is None else f'StorageClass {cls.name!r} (Immediate)'}")
    provisioner = f", provisioner {cls.provisioner}" if cls is not None else ""
    fitting = [v.name for v in st.by_class.get(cls.name, ()) if _fits_anywhere(claim, v)] if cls is not None else []
    if claim.volume_name:
        action = f"look at PersistentVolume {claim.volume_name}, which claim {claim.key} names: it must exist and be Available"
    elif fitting:  # the PV controller binds an Immediate claim to a fitting Available volume at once
        action = (f"look at kube-controller-manager's persistent volume binder: {some_names(fitting)} "
                  f"{'is' if len(fitting) == 1 else 'are'} Available and fit{'s' if len(fitting) == 1 else ''} claim "
                  f"{claim.key}, yet it is not bound")
    elif cls is not None and cls.provisioner not in ("", NO_PROVISIONER):
        action = f"look at provisioner {cls.provisioner} (StorageClass {cls.name}): it has not made a volume for claim {claim.key}"
    else:
        action = (f"create a PersistentVolume that claim {claim.key} can bind (" +
                  ("no StorageClass provisions it" if cls is None else f"StorageClass {cls.name} has no provisioner") + ")")
    return Decision(word=words.VOLUME_UNBOUND, reason=f"claim {claim.key} {what}{provisioner}: nothing binds it "
                                                      f"at scheduling time", action=action)


def _claim_evidence(use: ClaimUse, st: Storage) -> dict:
    c = use.claim
    out: dict = {"volume": use.volume, "claim": use.key, "exists": c is not None}
    if c is not None:
        cls = st.classes.get(st.class_of(c))
        out.update({"storageClassName": st.class_of(c), "bound_to": c.volume_name or None, "bound": c.bound,
                    "accessModes": list(c.access_modes), "source": c.source})
        if cls is not None:
            out.update({"provisioner": cls.provisioner, "volumeBindingMode": cls.binding_mode})
        if st.events.get((c.namespace, c.name)):
            out["events"] = st.events[(c.namespace, c.name)]
    return out


# -- volume-node-conflict: the funnel's volume stage-------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class _Bound:
    claim: Claim
    volume: Volume


@dataclass(frozen=True, kw_only=True)
class _Delayed:
    claim: Claim
    candidates: tuple[Volume, ...]  # volumes of the class that fit the claim anywhere (node affinity aside)
    provisioner: str  # "" when the class cannot provision
    class_name: str
    allowed: list[dict]
    capacity_tracked: bool


def state(pod: PodFacts, cluster: Cluster) -> tuple[list[_Bound], list[_Delayed]]:
    """Per pod shape, once: each claim's bound volume, or the volumes and class that could serve it."""
    cached = pod.state.volumes
    if cached is not None:
        return cached
    bound: list[_Bound] = []
    delayed: list[_Delayed] = []
    st = cluster.storage
    for use in (pod.filters.claims if pod.filters is not None else ()):
        c = use.claim
        if c is None or st is None:
            continue
        if c.bound:
            if c.volume_name in st.volumes:
                bound.append(_Bound(claim=c, volume=st.volumes[c.volume_name]))
            continue
        cls = st.classes.get(st.class_of(c))
        if cls is None or cls.binding_mode != WFFC or c.volume_name:
            continue  # decided before the funnel
        fits = tuple(v for v in st.by_class.get(cls.name, ()) if _fits_anywhere(c, v))
        provisioner = "" if cls.provisioner in ("", NO_PROVISIONER) else cls.provisioner
        delayed.append(_Delayed(claim=c, candidates=fits, provisioner=provisioner, class_name=cls.name,
                                allowed=cls.allowed_topologies, capacity_tracked=bool(st.drivers.get(cls.provisioner))))
    found = pod.state.volumes = (bound, delayed)
    return found


def _fits_anywhere(c: Claim, v: Volume) -> bool:
    """FindMatchingVolume without the node: pre-bound to this claim, or free, Available, big enough, the modes
    and the selector right."""
    if v.claim_ref is not None:
        ns, name, uid = v.claim_ref
        return (ns, name) == (c.namespace, c.name)
    if v.phase != "Available" or not set(c.access_modes) <= set(v.access_modes):
        return False
    if c.request is not None and (v.capacity or 0) < c.request:
        return False
    return c.selector is None or c.selector.matches(v.labels)


def volume_usable(v: Volume, node: NodeView) -> bool:
    return v.terms is None or any(term_matches(t, node.labels, node.name) for t in v.terms)


def zone_problem(v: Volume, node: NodeView) -> str | None:
    """VolumeZone: every zone/region label of the volume must be on the node with one of its values
    (`a__b` lists several: volumehelpers.LabelZonesToSet). Returns the failing label."""
    for key in ZONE_LABELS:
        if key in v.labels and node.labels.get(key) not in v.labels[key].split("__"):
            return f"{key}={v.labels[key]}"
    return None


def allowed(allowed: list[dict], node: NodeView) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match every node; terms ORed, expressions ANDed."""
    if not allowed:
        return True
    return any(all(node.labels.get(e.get("key")) in (e.get("values") or ()) for e in t.get("matchLabelExpressions") or ())
               for t in allowed)


def capacity_ok(d: _Delayed, node: NodeView, cluster: Cluster) -> bool:
    """hasEnoughCapacity: some CSIStorageCapacity of the class, visible from the node, holds the request."""
    if not d.capacity_tracked or d.claim.request is None or cluster.storage is None:
        return True
    for cap in cluster.storage.capacities:
        if cap.storage_class != d.class_name or not cap.topology.matches(node.labels):
            continue
        size = d.claim.request
        if (cap.maximum is None or cap.maximum >= size) and (cap.capacity or 0) >= size:
            return True
    return False


def binding_failures(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[tuple[str, str]]:
    """(scheduler reason, text) of every VolumeBinding failure on this node, in FindPodVolumes' order."""
    bound, delayed = state(pod, cluster)
    out: list[tuple[str, str]] = []
    for b in bound:
        if not volume_usable(b.volume, node):
            text = PV_AFFINITY if cluster.server_minor is None or cluster.server_minor >= 34 else PV_AFFINITY_OLD
            out.append((text, f"PersistentVolume {b.volume.name} (claim {b.claim.key}) has node affinity "
                              f"{terms_text(b.volume.terms)}"))
            break
    for d in delayed:
        if d.claim.selected_node and d.claim.selected_node != node.name:
            out.append((BIND_CONFLICT, f"claim {d.claim.key} is being provisioned for node {d.claim.selected_node}"))
            break
        if any(volume_usable(v, node) for v in d.candidates):
            continue
        none = (f"no available PersistentVolume of class {d.class_name} for claim {d.claim.key} here"
                + (f" ({', '.join(f'{v.name}: {terms_text(v.terms)}' for v in d.candidates[:3])})" if d.candidates else ""))
        if not d.provisioner:
            out.append((BIND_CONFLICT, none + f", and StorageClass {d.class_name} has no provisioner"))
            break
        if not allowed(d.allowed, node):
            out.append((BIND_CONFLICT, none + f", and StorageClass {d.class_name}'s allowedTopologies exclude the node"))
            break
        if not capacity_ok(d, node, cluster):
            out.append((NOT_ENOUGH_SPACE, none + f", and no CSIStorageCapacity of {d.class_name} visible here holds "
                                                 f"{d.claim.request} bytes"))
            break
    return out


def zone_failure(pod: PodFacts, node: NodeView, cluster: Cluster) -> str | None:
    for b in state(pod, cluster)[0]:
        bad = zone_problem(b.volume, node)
        if bad is not None:
            return f"PersistentVolume {b.volume.name} (claim {b.claim.key}) is in {bad}, the node is not"
    return None


def terms_text(terms: list[dict] | None) -> str:
    parts = []
    for t in terms or ():
        exprs = [f"{e.get('key')} {str(e.get('operator', '')).lower()} ({','.join(map(str, e.get('values') or ()))})"
                 for e in (t.get("matchExpressions") or []) + (t.get("matchFields") or [])]
        parts.append(" and ".join(exprs) or "(empty term)")
    return " or ".join(parts) if parts else "(none)"


def volumes_apply(pod: PodFacts, cluster: Cluster) -> bool:
    return pod.filters is not None and bool(pod.filters.claims) and not pod.pin


def check_volume_topology(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """`volume-node-conflict`: VolumeBinding and VolumeZone as one funnel stage (a pod with spec.nodeName bypasses both)."""
    if not volumes_apply(pod, cluster):
        return None
    found = binding_failures(pod, node, cluster)
    if found:
        return Reason(check=Check.VOLUME_TOPOLOGY, text=found[0][1], scheduler=tuple(r for r, _ in found))
    zone = zone_failure(pod, node, cluster)
    return Reason(check=Check.VOLUME_ZONE, text=zone, scheduler=(NO_VOLUME_ZONE,)) if zone else None


# The scheduler's two filters, in its order (VolumeBinding, then VolumeZone).
def check_volume_binding(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.filters is None or not pod.filters.claims:
        return None
    st = cluster.storage
    if st is not None and any(u.claim is not None and u.claim.bound and u.claim.volume_name not in st.volumes
                              for u in pod.filters.claims):
        return Reason(check=Check.VOLUME_BINDING, text="a claim is bound to a missing PersistentVolume", scheduler=(PV_NOT_EXIST,))
    found = binding_failures(pod, node, cluster)
    return Reason(check=Check.VOLUME_BINDING, text=found[0][1], scheduler=tuple(r for r, _ in found)) if found else None


def check_volume_zone(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.filters is None or not pod.filters.claims:
        return None
    zone = zone_failure(pod, node, cluster)
    return Reason(check=Check.VOLUME_ZONE, text=zone, scheduler=(NO_VOLUME_ZONE,)) if zone else None


@prose.says("volume_claims")
def _volume_claims_says(value: object) -> list[str]:
    out = []
    for c in value if isinstance(value, list) else []:
        if not isinstance(c, dict):
            continue
        if not c.get("exists"):
            out.append(f"Volume {c.get('volume')} uses PersistentVolumeClaim {c.get('claim')}, which is not in the bundle.")
            continue
        bound = f"bound to PersistentVolume {c['bound_to']}" if c.get("bound") else "not bound"
        cls = (f"StorageClass {c.get('storageClassName')}" if c.get("storageClassName") else "no StorageClass")
        how = (f" (provisioner {c.get('provisioner')}, volumeBindingMode {c.get('volumeBindingMode')})"
               if c.get("provisioner") else "")
        modes = ", ".join(map(str, c.get("accessModes") or ())) or "no access mode"
        out.append(f"Claim {c.get('claim')} (volume {c.get('volume')}) is {bound}; {cls}{how}; {modes}.")
        for e in (c.get("events") or ())[:3]:
            out.append(f"Claim event: \"{e.get('message') if isinstance(e, dict) else e}\".")
    return out


class VolumesFamily(Plain):
    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        evidence = answered.case.evidence
        if "prefilter" not in evidence or answered.word not in (words.NO_VOLUMECLAIM, words.VOLUME_UNBOUND):
            return None
        # The volume plugin's PreFilter sentence replaces the per-node counts (filters.md).
        return {"rebuilt": answered.makers.prefilter(evidence.pop("prefilter"))}


FAMILY: Family = VolumesFamily(name="volumes", kinds=(
    catalog.PERSISTENTVOLUMECLAIMS, catalog.PERSISTENTVOLUMES, catalog.STORAGECLASSES, catalog.CSINODES,
    catalog.CSIDRIVERS, catalog.CSISTORAGECAPACITIES, catalog.VOLUMEATTACHMENTS), rules=(
    Rule(rows="20-21", words=(words.NO_VOLUMECLAIM, words.VOLUME_UNBOUND), decide=decide),))
