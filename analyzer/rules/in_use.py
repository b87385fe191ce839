"""What other pods hold beside resources (causes.md `exhausted`; filters.md): a host port, the node's
CSI attach limit, a ReadWriteOncePod claim.

Sources (kubernetes pkg/scheduler/framework/plugins): nodeports/node_ports.go (a port conflicts when protocol
and port are equal and either hostIP is 0.0.0.0 or both are the same: framework.HostPortInfo.CheckConflict),
nodevolumelimits/csi.go (per CSI driver, the distinct volumes of the pods bound to the node plus this pod's new
ones must stay within CSINode.spec.drivers[].allocatable.count; an unbound claim counts under its class's
provisioner), volumerestrictions/volume_restrictions.go (a ReadWriteOncePod claim another pod uses blocks every
node: the count is cluster-wide).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.model.nodes import NodeView
from analyzer.model.nominated import NOMINATED
from analyzer.model.views import Cluster
from analyzer.model.volumes import RWOP, Claim, Storage
from analyzer.rules.checks import PodFacts
from analyzer.rules.reason import Check, Reason

PORTS = "node(s) didn't have free ports for the requested pod ports"  # nodeports.ErrReason
MAX_VOLUMES = "node(s) exceed max volume count"  # nodevolumelimits.ErrReasonMaxVolumeCountExceeded
RWOP_IN_USE = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use "
               "by another pod")
RWOP_IN_USE_OLD = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
WILDCARD = "0.0.0.0"


def _csi_volume(claim: Claim, st: Storage) -> tuple[str, str] | None:
    """(driver, volume id) of a claim as NodeVolumeLimits counts it, or None when it is not a CSI volume."""
    if claim.bound:
        v = st.volumes.get(claim.volume_name)
        return (v.csi_driver, v.handle) if v is not None and v.csi_driver else None
    cls = st.classes.get(st.class_of(claim))
    if cls is None or not cls.provisioner or cls.provisioner not in st.drivers and cls.provisioner not in _all_limits(st):
        return None
    return cls.provisioner, f"{claim.namespace}/{claim.name}"  # a volume yet to be provisioned: one per claim


def _all_limits(st: Storage) -> set[str]:
    return {d for counts in st.limits.values() for d in counts}


def _csi_on_nodes(cluster: Cluster) -> dict[str, dict[str, set[str]]]:
    """node -> driver -> the distinct CSI volumes its bound pods use. Made once per bundle."""
    placement, st = cluster.placement, cluster.storage
    assert placement is not None and st is not None
    found = placement.memo.get("csi")
    if found is None:
        found = placement.memo["csi"] = {}
        for ns, _name, node, _lid, claims, _ports, _anti in placement.rows:
            for name in claims:
                claim = st.claims.get((ns, name))
                vol = _csi_volume(claim, st) if claim is not None else None
                if vol is not None:
                    found.setdefault(node, {}).setdefault(vol[0], set()).add(vol[1])
    return found


@dataclass(kw_only=True)
class InUseState:
    new_csi: dict[str, set[str]] = field(default_factory=dict)  # driver -> this pod's CSI volumes
    rwop: str = ""  # a ReadWriteOncePod claim of this pod another pod uses, and who (fails every node)


def state(pod: PodFacts, cluster: Cluster) -> InUseState:
    cached = pod.state.in_use
    if cached is not None:
        return cached
    s = InUseState()
    f, st, placement = pod.filters, cluster.storage, cluster.placement
    if f is not None and st is not None and placement is not None:
        me = f"{f.namespace}/{f.name}"
        for use in f.claims:
            if use.claim is None:
                continue
            vol = _csi_volume(use.claim, st)
            if vol is not None:
                s.new_csi.setdefault(vol[0], set()).add(vol[1])
            if RWOP in use.claim.access_modes and not s.rwop:
                others = [(p, n) for p, n in placement.claim_users.get((use.namespace, use.name), ()) if p != me]
                if others:
                    s.rwop = (f"claim {use.key} is ReadWriteOncePod and in use by "
                              + ", ".join(f"{p} (on {n})" for p, n in others[:3]))
    pod.state.in_use = s
    return s


def port_conflict(pod: PodFacts, node: NodeView, cluster: Cluster) -> str | None:
    f, placement = pod.filters, cluster.placement
    if f is None or not f.ports or placement is None:
        return None
    held = placement.ports_on.get(node.name, ())
    if pod.nominated and cluster.nominated is not None:  # a pod nominated here by preemption holds its ports too
        nominated = cluster.nominated.overlay(pod.nominated, cluster.usage).on.get(node.name, ())
        held = [*held, *((pr, port, ip, f"{p.pod} ({NOMINATED})") for p in nominated for pr, port, ip in p.ports)]
    for proto, port, ip in f.ports:
        for p2, port2, ip2, who in held:
            if proto == p2 and port == port2 and (ip == ip2 or WILDCARD in (ip, ip2)):
                return f"host port {port}/{proto}{'' if ip == WILDCARD else ' on ' + ip} is held by {who}"
    return None


def volume_limit(pod: PodFacts, node: NodeView, cluster: Cluster) -> str | None:
    s = state(pod, cluster)
    if not s.new_csi or cluster.storage is None:
        return None
    limits = cluster.storage.limits.get(node.name) or {}
    on_node = _csi_on_nodes(cluster).get(node.name, {})
    for driver, mine in sorted(s.new_csi.items()):
        limit = limits.get(driver)
        if limit is None:
            continue
        used = on_node.get(driver, set())
        if len(used | mine) > limit:
            return (f"CSI driver {driver}: {len(used)} volume(s) in use of the node's limit {limit}, "
                    f"the pod adds {len(mine - used)}")
    return None


def rwop_text(cluster: Cluster) -> str:
    return RWOP_IN_USE if cluster.server_minor is None or cluster.server_minor >= 36 else RWOP_IN_USE_OLD


def check_ports(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    text = port_conflict(pod, node, cluster)
    return Reason(check=Check.HOST_PORT, text=text, scheduler=(PORTS,)) if text else None


def check_rwop(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.filters is None or not pod.filters.claims:
        return None
    s = state(pod, cluster)
    return Reason(check=Check.RWOP, text=s.rwop, scheduler=(rwop_text(cluster),)) if s.rwop else None


def check_volume_limits(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    if pod.filters is None or not pod.filters.claims:
        return None
    text = volume_limit(pod, node, cluster)
    return Reason(check=Check.VOLUME_LIMIT, text=text, scheduler=(MAX_VOLUMES,)) if text else None


def in_use_applies(pod: PodFacts, cluster: Cluster) -> bool:
    return pod.filters is not None and bool(pod.filters.ports or pod.filters.claims)


def check_in_use(pod: PodFacts, node: NodeView, cluster: Cluster) -> Reason | None:
    """`exhausted`'s other half, as one funnel stage after fit: ports, then the ReadWriteOncePod claim, then the
    CSI limit (the scheduler's order: NodePorts, VolumeRestrictions, NodeVolumeLimits)."""
    if not in_use_applies(pod, cluster):
        return None
    return check_ports(pod, node, cluster) or check_rwop(pod, node, cluster) or check_volume_limits(pod, node, cluster)
