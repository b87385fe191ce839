"""Evidence for the volume, inter-pod and spread stages (filters.md "Evidence"), made once per pod shape: where
the pod's volumes can be used beside where the candidates are, each inter-pod term with the pods it counts per
domain, each spread constraint's count per domain and the skew the pod would make; and the PreFilter sentence of
the volume plugin as the server version writes it.
"""

from __future__ import annotations

import numpy as np

from analyzer import prose
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.model.volumes import ZONE_LABELS, Volume
from analyzer.rules import columnar, interpod, spread
from analyzer.rules.checks import PodFacts
from analyzer.rules.funnel_result import FunnelResult
from analyzer.rules.in_use import check_in_use
from analyzer.rules.interpod import check_interpod
from analyzer.rules.reason import Reason
from analyzer.rules.spread import check_spread
from analyzer.rules.volume_columns import usable_any
from analyzer.rules.volumes import check_volume_topology, terms_text
from analyzer.rules.volumes import state as volume_state

NAMES = 20  # nodes or pods named per item; the rest counted


def prefilter_message(cluster: Cluster, sentence: str) -> str:
    """A PreFilter rejection replaces the per-node counts. On v1.36 the DRA plugin's PostFilter then fails on
    its missing state and the message ends in a bare `not found` (seen on a real v1.36.2 scheduler)."""
    n = len(cluster.nodes or ())
    tail = " not found" if cluster.server_minor is None or cluster.server_minor >= 36 else ""
    return f"0/{n} nodes are available: {sentence}.{tail}"


def _candidates(funnel: FunnelResult, stage: str) -> list[str]:
    for st in funnel.stages:
        if st.name == stage:
            return [n.name for n in st.judged()]
    return []


def _zones(cluster: Cluster, names: list[str]) -> dict[str, int]:
    """How many of these nodes are in each zone (topology.kubernetes.io/zone), "(no zone)" for the rest."""
    out: dict[str, int] = {}
    for name in names:
        node = cluster.nodes_by_name.get(name)
        zone = node.labels.get(ZONE_LABELS[0], "(no zone)") if node is not None else "(no zone)"
        out[zone] = out.get(zone, 0) + 1
    return out


def _volumes(cluster: Cluster, funnel: FunnelResult) -> list[dict]:
    bound, delayed = volume_state(funnel.facts, cluster)
    candidates = _candidates(funnel, "volumes")
    out = []
    cols = columnar.columns_of(cluster)

    def usable_on(*volumes: Volume) -> list[str]:  # the masks the funnel judged with (rules/volume_columns.py)
        return [cols.names[i] for i in np.flatnonzero(usable_any(cluster, cols, volumes)).tolist()]

    for b in bound:
        usable = usable_on(b.volume)
        zones = {k: v for k, v in b.volume.labels.items() if k in ZONE_LABELS}
        out.append({"claim": b.claim.key, "volume": b.volume.name, "node_affinity": terms_text(b.volume.terms),
                    "zone_labels": zones, "usable_on": usable[:NAMES], "usable_on_count": len(usable),
                    "candidates": candidates[:NAMES], "candidates_by_zone": _zones(cluster, candidates)})
    for d in delayed:
        usable = sorted(usable_on(*d.candidates))
        out.append({"claim": d.claim.key, "storageClassName": d.class_name, "provisioner": d.provisioner or None,
                    "available_volumes": [{"volume": v.name, "node_affinity": terms_text(v.terms)}
                                          for v in d.candidates[:NAMES]],
                    "usable_on": usable[:NAMES], "usable_on_count": len(usable),
                    "candidates": candidates[:NAMES], "candidates_by_zone": _zones(cluster, candidates)})
    return out


def _inter_pod(cluster: Cluster, funnel: FunnelResult) -> dict:
    s = interpod.state(funnel.facts, cluster)
    out: dict = {}
    if s.affinity:
        out["affinity"] = [{"term": str(t), "pods_per_domain": dict(sorted(c.items())[:NAMES]),
                            "some": {k: v for k, v in sorted(n.items())[:NAMES]}} for t, c, n in s.affinity]
        out["first_of_group"] = not s.affinity_anywhere and s.self_match
    if s.anti:
        out["anti_affinity"] = [{"term": str(t), "pods_per_domain": dict(sorted(c.items())[:NAMES]),
                                 "some": {k: v for k, v in sorted(n.items())[:NAMES]}} for t, c, n in s.anti]
    if s.forbidden:
        out["existing_anti_affinity"] = [{"domain": f"{k}={v}", "pods": pods, "term": term}
                                         for (k, v), (pods, term) in sorted(s.forbidden.items())[:NAMES]]
    if s.unknown:
        out["not_judged"] = s.unknown
    return out


def filter_evidence(cluster: Cluster, funnel: FunnelResult) -> dict:
    f = funnel.facts.filters
    out: dict = {}
    if f is None:
        return out
    if f.claims and any(st.name == "volumes" and st.groups for st in funnel.stages):
        out["volume_topology"] = _volumes(cluster, funnel)
    if (f.affinity or f.anti or cluster.placement is not None and cluster.placement.anti) and \
            any(st.name == "pod-affinity" and st.groups for st in funnel.stages):
        out["inter_pod"] = _inter_pod(cluster, funnel)
    if f.spread and any(st.name == "topology-spread" for st in funnel.stages):
        out["topology_spread"] = spread.evidence(funnel.facts, cluster)
    return out


# The funnel's stages after the checks before fit, in its order.
STAGE_CHECKS = (check_volume_topology, check_interpod, check_spread, check_in_use)


def nearest_failures(pod: PodFacts, node: NodeView, cluster: Cluster, room: int) -> list[Reason]:
    """The volume, inter-pod, spread and in-use checks this node fails (at most `room`), worded for the
    nearest-nodes list: "only <what>"."""
    out: list[Reason] = []
    if pod.filters is None:
        return out
    for check in STAGE_CHECKS:
        r = check(pod, node, cluster)
        if r is not None:
            out.append(Reason(check=r.check, text=f"only {r.text}"))
            if len(out) >= room:
                break
    return out


def _some(names: object, limit: int = 5) -> str:
    names = [str(n) for n in names] if isinstance(names, list) else []
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more or "none"


@prose.says("volume_topology")
def _volume_topology_says(value: object) -> list[str]:
    out = []
    for v in value if isinstance(value, list) else []:
        if not isinstance(v, dict):
            continue
        made = (f"StorageClass {v.get('storageClassName')} provisions with {v['provisioner']}" if v.get("provisioner")
                else f"StorageClass {v.get('storageClassName')} has no provisioner")
        pvs = "; ".join(f"PersistentVolume {a.get('volume')} only on {a.get('node_affinity')}"
                        for a in v.get("available_volumes") or () if isinstance(a, dict)) or "no available PersistentVolume"
        out.append(f"Claim {v.get('claim')}: {made}; {pvs}.")
        out.append(f"Its volume can be used on {v.get('usable_on_count', 0)} node(s) ({_some(v.get('usable_on'))}); "
                   f"the pod's candidates are {_some(v.get('candidates'))}.")
        zones = v.get("candidates_by_zone")
        if isinstance(zones, dict) and zones:
            out.append("Candidates per zone: " + ", ".join(f"{z} {n}" for z, n in zones.items()) + ".")
    return out


@prose.says("inter_pod")
def _inter_pod_says(value: object) -> list[str]:
    out = []
    for kind, label in (("affinity", "affinity"), ("anti_affinity", "anti-affinity")):
        for term in (value or {}).get(kind) or () if isinstance(value, dict) else ():
            if not isinstance(term, dict):
                continue
            counts = ", ".join(f"{d} {n}" for d, n in (term.get("pods_per_domain") or {}).items()) or "none anywhere"
            some = "; ".join(f"{d}: {_some(p, 3)}" for d, p in (term.get("some") or {}).items())
            out.append(f"Required pod {label} {term.get('term')}: matching pods per domain {counts}"
                       + (f" ({some})" if some else "") + ".")
    for key in (k for k in (value or {}) if k not in ("affinity", "anti_affinity")) if isinstance(value, dict) else ():
        out.extend(prose.plain(key, value[key]))
    return out


@prose.says("topology_spread")
def _spread_says(value: object) -> list[str]:
    out = []
    for c in value if isinstance(value, list) else []:
        if not isinstance(c, dict):
            continue
        doms = ", ".join(f"{d.get('domain')} {d.get('pods')} pods" + (f" (skew {d['skew_with_pod']} with it)"
                                                                    if d.get("skew_with_pod") is not None else "")
                         for d in c.get("domains") or () if isinstance(d, dict))
        out.append(f"Topology spread {c.get('constraint')}: minimum {c.get('minimum')}; {doms or 'no domain'}.")
    return out
