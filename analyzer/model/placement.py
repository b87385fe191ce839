"""Where the existing pods are, as the inter-pod, spread, host-port and volume filters count them (filters.md).

Built once per bundle from the pods index (model/pods_index.py keeps one slim row per non-terminated pod bound to a
node: its labels, claims, host ports and required anti-affinity terms). Pods are grouped by (namespace, label set):
a ReplicaSet's replicas share one group, so "which pods match this selector" is asked once per group, not per pod,
and the answer per (selector, namespaces) is made once and shared by every pod shape that asks it. Never
pods x nodes x pods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:  # the reader (model/pods_index.py) imports this module for its rows; only the rules need selectors
    from analyzer.model.labels import Selector

# One bound pod: (namespace, name, node, label-set id, claim names, host ports, required anti-affinity JSON).
Row = tuple[str, str, str, int, tuple[str, ...], tuple[tuple[str, int, str], ...], bytes]
# One pending pod nominated to a node by preemption (model/nominated.py): (namespace, name, node, priority,
# requests, host ports).
NominatedRow = tuple[str, str, str, int, dict[str, int], tuple[tuple[str, int, str], ...]]


class LabelSets:
    """Label dicts interned: pods with the same labels share one dict and one id."""

    def __init__(self) -> None:
        self.sets: list[dict[str, str]] = []
        self._ids: dict[bytes, int] = {}

    def id_of(self, labels: dict[str, str]) -> int:
        key = orjson.dumps(labels, option=orjson.OPT_SORT_KEYS)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.sets)
            self.sets.append(labels)
        return found


def claim_names(spec: dict, pod_name: str) -> tuple[str, ...]:
    """The claims a pod's volumes use: persistentVolumeClaim.claimName, and a generic ephemeral volume's
    `<pod>-<volume>` (component-helpers/storage/ephemeral.VolumeClaimName)."""
    out = []
    for v in spec.get("volumes") or ():
        pvc = v.get("persistentVolumeClaim")
        if pvc:
            out.append(str(pvc.get("claimName") or ""))
        elif v.get("ephemeral") is not None:
            out.append(f"{pod_name}-{v.get('name')}")
    return tuple(out)


def host_ports(spec: dict) -> tuple[tuple[str, int, str], ...]:
    """(protocol, hostPort, hostIP) of every container port with a hostPort (NodePorts reads containers and
    init containers; an empty hostIP is 0.0.0.0, an empty protocol TCP)."""
    out = []
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            for p in c.get("ports") or ():
                port = p.get("hostPort")
                if isinstance(port, int) and port > 0:
                    out.append((str(p.get("protocol") or "TCP"), port, str(p.get("hostIP") or "0.0.0.0")))
    return tuple(out)


def anti_terms_json(spec: dict) -> bytes:
    terms = ((spec.get("affinity") or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    return orjson.dumps(terms, option=orjson.OPT_SORT_KEYS) if terms else b""


SHOWN = 3  # pod names kept per node for the evidence (the count is exact)


@dataclass(kw_only=True)
class Matched:
    counts: dict[str, int]  # node -> matching bound pods
    names: dict[str, list[str]]  # node -> the first SHOWN of them, namespace/name


@dataclass(kw_only=True)
class Placement:
    """The bound pods, grouped, with the counts the filters ask for made once and kept."""

    labels: list[dict[str, str]]
    rows: list[Row]
    namespace_labels: dict[str, dict[str, str]] | None  # None: namespaces.json not in the bundle
    groups: dict[tuple[str, int], dict[str, list[str]]] = field(default_factory=dict)  # -> node -> pod names
    anti: dict[tuple[str, int, bytes], dict[str, list[str]]] = field(default_factory=dict)
    ports_on: dict[str, list[tuple[str, int, str, str]]] = field(default_factory=dict)  # node -> ports, pod key
    claim_users: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)  # -> (pod, node)
    _counts: dict[tuple, Matched] = field(default_factory=dict)
    memo: dict = field(default_factory=dict)  # what the rules derive from the rows once (CSI volumes per node)

    @classmethod
    def build(cls, labels: list[dict[str, str]], rows: list[Row],
              namespace_labels: dict[str, dict[str, str]] | None) -> Placement:
        p = cls(labels=labels, rows=rows, namespace_labels=namespace_labels)
        for ns, name, node, lid, claims, ports, anti in rows:
            p.groups.setdefault((ns, lid), {}).setdefault(node, []).append(name)
            if anti:
                p.anti.setdefault((ns, lid, anti), {}).setdefault(node, []).append(name)
            for proto, port, ip in ports:
                p.ports_on.setdefault(node, []).append((proto, port, ip, f"{ns}/{name}"))
            for claim in claims:
                p.claim_users.setdefault((ns, claim), []).append((f"{ns}/{name}", node))
        return p

    def match(self, conditions: tuple[tuple[Selector, frozenset[str] | None], ...]) -> Matched:
        """The bound pods that meet every (selector, namespaces) condition (None: every namespace), per node:
        how many, and the first few names. Asked once per distinct conditions, then kept."""
        key = tuple((sel.key, ns) for sel, ns in conditions)
        found = self._counts.get(key)
        if found is None:
            found = Matched(counts={}, names={})
            limits = [nss for _, nss in conditions if nss is not None]
            for (ns, lid), per_node in self._groups_in(frozenset.intersection(*limits) if limits else None):
                labels = self.labels[lid]
                if all((nss is None or ns in nss) and sel.matches(labels) for sel, nss in conditions):
                    for node, names in per_node.items():
                        found.counts[node] = found.counts.get(node, 0) + len(names)
                        shown = found.names.setdefault(node, [])
                        shown.extend(f"{ns}/{n}" for n in names[: SHOWN - len(shown)])
            self._counts[key] = found
        return found

    def _groups_in(self, namespaces: frozenset[str] | None) -> list[tuple[tuple[str, int], dict[str, list[str]]]]:
        """The groups of these namespaces (None: all), in the groups' own order (the names shown follow it): a
        term's namespaces are most often its pod's own, a few of a bundle's thousands of groups."""
        if namespaces is None:
            return list(self.groups.items())
        index = self.memo.get("groups_by_namespace")
        if index is None:
            index = self.memo["groups_by_namespace"] = {}
            for i, (group, per_node) in enumerate(self.groups.items()):
                index.setdefault(group[0], []).append((i, group, per_node))
        rows = [row for ns in namespaces for row in index.get(ns, ())]
        if len(namespaces) > 1:
            rows.sort(key=lambda row: row[0])
        return [(group, per_node) for _, group, per_node in rows]

    def namespaces_matching(self, selector: Selector) -> frozenset[str] | None:
        """A namespaceSelector's namespaces; None when namespaces.json is missing and the selector is not empty."""
        if self.namespace_labels is None:
            return None
        return frozenset(ns for ns, labels in self.namespace_labels.items() if selector.matches(labels))
