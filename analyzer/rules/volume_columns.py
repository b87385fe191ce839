"""The volume filters (VolumeBinding, VolumeZone; rules/volumes.py) as codes over the node columns.

Where a volume can be used is its node affinity: a NodeSelector, the same rule as a pod's required node affinity,
so a mask over the label columns (model/selector_columns.py), made once per distinct node affinity and kept; a
WaitForFirstConsumer claim's candidates are the union of theirs. A class's allowedTopologies and its
CSIStorageCapacity are judged node by node once per class (and request). Per pod shape, each node's first
failure, in rules/volumes.py's order, is a code (filter_columns.py: 0 passes, equal codes, equal Reason):

- binding: the first bound claim whose volume the node cannot use, and the first WaitForFirstConsumer claim that
  fails there and how (provisioning for another node, no provisioner, allowedTopologies, capacity);
- zone: the first bound volume whose zone or region label the node lacks, and which label;
- the CSI attach limit (NodeVolumeLimits): per driver the node's limit, the distinct volumes its pods use, and
  which of the pod's own are among them, made once per driver.

5,000 nodes against 3,800 node-local volumes is then a few array operations per claim, not 19 million checks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import orjson

from analyzer.model.columns import NodeColumns
from analyzer.model.selector_columns import selector_mask
from analyzer.model.views import Cluster
from analyzer.model.volumes import ZONE_LABELS, Volume
from analyzer.rules.checks import PodFacts
from analyzer.rules.columnar import _key_codes
from analyzer.rules.in_use import _csi_on_nodes
from analyzer.rules.in_use import state as in_use_state
from analyzer.rules.volumes import capacity_ok, _Delayed, allowed, state


def usable(cluster: Cluster, cols: NodeColumns, v: Volume) -> np.ndarray:
    """volume_usable for every node: once per distinct node affinity."""
    key = ("pv-terms", orjson.dumps(v.terms, option=orjson.OPT_SORT_KEYS))
    found = cols.memo.get(key)
    if not isinstance(found, np.ndarray):
        found = cols.memo[key] = (np.ones(cols.n, dtype=bool) if v.terms is None
                                  else selector_mask(cols, (), v.terms, "", cols.everything))
    return found


class _UsableAny(NamedTuple):
    volumes: tuple[Volume, ...]  # held with the mask: the memo's key is their ids
    mask: np.ndarray


def usable_any(cluster: Cluster, cols: NodeColumns, volumes: tuple[Volume, ...]) -> np.ndarray:
    """Some of these volumes usable on the node (a claim's candidates), once per set of candidates."""
    key = ("pv-any", tuple(id(v) for v in volumes))
    found = cols.memo.get(key)
    if not isinstance(found, _UsableAny):
        masks = {id(m): m for m in (usable(cluster, cols, v) for v in volumes)}
        mask = np.logical_or.reduce(list(masks.values())) if masks else np.zeros(cols.n, dtype=bool)
        found = cols.memo[key] = _UsableAny(volumes=volumes, mask=mask)
    return found.mask


def _per_node(cluster: Cluster, cols: NodeColumns, key: tuple, judge) -> np.ndarray:
    found = cols.memo.get(key)
    if not isinstance(found, np.ndarray):
        found = cols.memo[key] = np.array([judge(node) for node in cluster.nodes or []], dtype=bool)
    return found


def _delayed_rule(cluster: Cluster, cols: NodeColumns, d: _Delayed) -> np.ndarray:
    """Per node, how the claim fails there (0: it does not): 1 provisioned for another node, 2 no volume and no
    provisioner, 3 no volume and allowedTopologies exclude the node, 4 no volume and no capacity."""
    rule = np.zeros(cols.n, dtype=np.int64)
    if d.claim.selected_node:
        other = np.array([name != d.claim.selected_node for name in cols.names], dtype=bool)
        rule[other] = 1
    left = (rule == 0) & ~usable_any(cluster, cols, d.candidates)
    if not d.provisioner:
        rule[left] = 2
        return rule
    inside = _per_node(cluster, cols, ("allowed", d.class_name), lambda n: allowed(d.allowed, n))
    rule[left & ~inside] = 3
    left &= inside
    capacity = _per_node(cluster, cols, ("capacity", d.class_name, d.claim.request, d.capacity_tracked),
                         lambda n: capacity_ok(d, n, cluster))
    rule[left & ~capacity] = 4
    return rule


def _first(n: int, fails: list[np.ndarray]) -> np.ndarray:
    """Per node, 1 + the index of the first mask that is True there (0: none)."""
    out = np.zeros(n, dtype=np.int64)
    for j, fail in enumerate(fails):
        out[(out == 0) & fail] = j + 1
    return out


def parts(pod: PodFacts, cluster: Cluster) -> tuple[np.ndarray, np.ndarray] | None:
    """(binding, zone) per node as code matrices: binding [first bound claim failing, first WaitForFirstConsumer
    claim failing, how], zone [first bound volume failing, which label]. Once per pod shape."""
    cols = cluster.columns
    if cols is None:
        return None
    found = pod.state.volume_parts
    if found is None:
        bound, delayed = state(pod, cluster)
        n = cols.n
        b = _first(n, [~usable(cluster, cols, x.volume) for x in bound])
        d, how = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for j, x in enumerate(delayed):
            rule = _delayed_rule(cluster, cols, x)
            hit = (d == 0) & (rule > 0)
            d[hit], how[hit] = j + 1, rule[hit]
        zone_j, zone_k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for j, x in enumerate(bound):
            for k, key in enumerate(ZONE_LABELS):
                if key in x.volume.labels:
                    col = cols.label(key)
                    hit = (zone_j == 0) & ~np.isin(col.codes, col.codes_of(x.volume.labels[key].split("__")))
                    zone_j[hit], zone_k[hit] = j + 1, k + 1
        found = pod.state.volume_parts = (np.stack([b, d, how], axis=1), np.stack([zone_j, zone_k], axis=1))
    return found


def topology_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """check_volume_topology: the binding failure, else the zone failure."""
    got = parts(pod, cluster)
    if got is None:
        return None
    binding, zone = got
    zone = np.where(binding.any(axis=1)[:, None], 0, zone)
    return _key_codes(np.concatenate([binding, zone], axis=1))[0]


def binding_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """check_volume_binding: a claim bound to a missing PersistentVolume fails every node alike."""
    got = parts(pod, cluster)
    if got is None:
        return None
    st, f = cluster.storage, pod.filters
    if st is not None and f is not None and any(u.claim is not None and u.claim.bound and u.claim.volume_name not in st.volumes
                                                for u in f.claims):
        return np.ones(len(got[0]), dtype=np.int64)
    return _key_codes(got[0])[0]


def zone_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    got = parts(pod, cluster)
    return None if got is None else _key_codes(got[1])[0]


class _CsiColumns(NamedTuple):
    limit: np.ndarray  # per node, its attach limit for the driver (-1: none)
    used: np.ndarray  # per node, the distinct volumes of the driver its pods use
    where: dict[str, list[int]]  # per volume, the nodes using it


def _csi_columns(cluster: Cluster, cols: NodeColumns, driver: str) -> _CsiColumns:
    """Per node for one CSI driver: its attach limit (-1: none), the distinct volumes its pods use, and per volume
    the nodes using it. Once per driver."""
    key = ("csi", driver)
    found = cols.memo.get(key)
    if not isinstance(found, _CsiColumns):
        st = cluster.storage
        on_nodes = _csi_on_nodes(cluster)
        limit = np.array([(st.limits.get(name) or {}).get(driver, -1) if st is not None else -1 for name in cols.names],
                         dtype=np.int64)
        used = np.zeros(cols.n, dtype=np.int64)
        where: dict[str, list[int]] = {}
        for name, drivers in on_nodes.items():
            i = cols.position.get(name)
            if i is not None and driver in drivers:
                used[i] = len(drivers[driver])
                for vid in drivers[driver]:
                    where.setdefault(vid, []).append(i)
        found = cols.memo[key] = _CsiColumns(limit=limit, used=used, where=where)
    return found


def limit_codes(pod: PodFacts, cluster: Cluster) -> np.ndarray | None:
    """check_volume_limits (NodeVolumeLimits): per node the first driver, in name order, whose distinct volumes
    with the pod's new ones exceed the node's limit; the code is (driver, in use, limit, added): the text's."""
    cols = cluster.columns
    if cols is None:
        return None
    new = in_use_state(pod, cluster).new_csi
    if not new or cluster.storage is None:
        return np.zeros(cols.n, dtype=np.int64)
    undecided = np.ones(cols.n, dtype=bool)
    rows = np.zeros((cols.n, 4), dtype=np.int64)
    for j, (driver, mine) in enumerate(sorted(new.items())):
        limit, used, where = _csi_columns(cluster, cols, driver)
        already = np.zeros(cols.n, dtype=np.int64)
        for vid in mine:
            already[where.get(vid, [])] += 1
        added = len(mine) - already
        hit = undecided & (limit >= 0) & (used + added > limit)
        rows[hit] = np.stack([np.full(cols.n, j + 1), used, limit, added], axis=1)[hit]
        undecided &= ~hit
    return _key_codes(rows)[0]
