"""What one pod asks of the scheduler's other filters, read once per target (filters.md): the claims its volumes
use, its required pod affinity and anti-affinity terms, its DoNotSchedule spread constraints, its host ports.

Sources (kubernetes pkg/scheduler/framework): types.go newAffinityTerm / GetNamespacesFromPodAffinityTerm (no
namespaces and no namespaceSelector: the pod's own namespace; an empty namespaceSelector: every namespace;
matchLabelKeys / mismatchLabelKeys add `key in/notin (the pod's value)`), podtopologyspread/common.go
filterTopologySpreadConstraints (DoNotSchedule only; matchLabelKeys; nodeAffinityPolicy Honor and
nodeTaintsPolicy Ignore by default). Nothing here decides a word.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from analyzer.model.labels import EVERYTHING, Requirement, Selector, selector_of
from analyzer.model.placement import Placement, host_ports
from analyzer.model.volumes import Claim, Storage


@dataclass(frozen=True, kw_only=True)
class ClaimUse:
    volume: str  # the pod's volume name
    namespace: str
    name: str  # the claim's name (`<pod>-<volume>` for a generic ephemeral volume)
    ephemeral: bool
    claim: Claim | None  # None: not in the bundle

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, kw_only=True)
class AffinityTerm:
    selector: Selector
    namespaces: frozenset[str] | None  # None: every namespace
    topology_key: str
    unknown: str = ""  # why the term cannot be judged (a namespaceSelector without namespaces.json)

    def __str__(self) -> str:
        where = ("every namespace" if self.namespaces is None
                 else "namespace " + ",".join(sorted(self.namespaces)) if len(self.namespaces) <= 3
                 else f"{len(self.namespaces)} namespaces")
        return f"{self.selector} in {where} per {self.topology_key}"


@dataclass(frozen=True, kw_only=True)
class SpreadConstraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int | None
    honor_affinity: bool  # nodeAffinityPolicy Honor (default)
    honor_taints: bool  # nodeTaintsPolicy Honor (default Ignore)
    self_match: bool

    def __str__(self) -> str:
        extra = (f", minDomains {self.min_domains}" if self.min_domains else "") + \
                ("" if self.honor_affinity else ", nodeAffinityPolicy Ignore") + \
                (", nodeTaintsPolicy Honor" if self.honor_taints else "")
        return f"maxSkew {self.max_skew} per {self.topology_key} of {self.selector}{extra}"


@dataclass(frozen=True, kw_only=True)
class PodFilters:
    namespace: str
    name: str
    labels: dict[str, str]
    claims: tuple[ClaimUse, ...]
    affinity: tuple[AffinityTerm, ...]
    anti: tuple[AffinityTerm, ...]
    spread: tuple[SpreadConstraint, ...]
    ports: tuple[tuple[str, int, str], ...]
    key: bytes  # what the funnel cache keys on: pods alike in all of it share one funnel


def _label_keys(raw: dict, labels: dict[str, str]) -> tuple[Requirement, ...]:
    extra: list[Requirement] = []
    for k in raw.get("matchLabelKeys") or ():
        if k in labels:
            extra.append((k, "In", (labels[k],)))
    for k in raw.get("mismatchLabelKeys") or ():
        if k in labels:
            extra.append((k, "NotIn", (labels[k],)))
    return tuple(extra)


def affinity_term(raw: dict, namespace: str, labels: dict[str, str], placement: Placement | None) -> AffinityTerm:
    selector = selector_of(raw.get("labelSelector"), _label_keys(raw, labels))
    names = frozenset(str(n) for n in raw.get("namespaces") or ())
    ns_selector = raw.get("namespaceSelector")
    unknown = ""
    namespaces: frozenset[str] | None
    if ns_selector is None:
        namespaces = names or frozenset((namespace,))
    else:
        sel = selector_of(ns_selector)
        if sel == EVERYTHING:
            namespaces = None
        else:
            found = placement.namespaces_matching(sel) if placement is not None else None
            if found is None:
                unknown = "a namespaceSelector, and namespaces.json is not in the bundle"
                found = frozenset()
            namespaces = names | found
    return AffinityTerm(selector=selector, namespaces=namespaces, topology_key=str(raw.get("topologyKey") or ""),
                        unknown=unknown)


def _required(spec: dict, kind: str) -> list[dict]:
    return [t for t in ((spec.get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
            or () if isinstance(t, dict)]


def spread_constraints(spec: dict, labels: dict[str, str]) -> tuple[SpreadConstraint, ...]:
    out = []
    for raw in spec.get("topologySpreadConstraints") or ():
        if raw.get("whenUnsatisfiable") != "DoNotSchedule":
            continue  # ScheduleAnyway only scores
        selector = selector_of(raw.get("labelSelector"), _label_keys({"matchLabelKeys": raw.get("matchLabelKeys")}, labels))
        out.append(SpreadConstraint(max_skew=int(raw.get("maxSkew") or 1), topology_key=str(raw.get("topologyKey")),
                                    selector=selector, min_domains=raw.get("minDomains"),
                                    honor_affinity=(raw.get("nodeAffinityPolicy") or "Honor") == "Honor",
                                    honor_taints=(raw.get("nodeTaintsPolicy") or "Ignore") == "Honor",
                                    self_match=selector.matches(labels)))
    return tuple(out)


def claim_uses(spec: dict, namespace: str, pod: str, storage: Storage | None) -> tuple[ClaimUse, ...]:
    out = []
    for v in spec.get("volumes") or ():
        pvc = v.get("persistentVolumeClaim")
        if pvc:
            name, ephemeral = str(pvc.get("claimName") or ""), False
        elif v.get("ephemeral") is not None:
            name, ephemeral = f"{pod}-{v.get('name')}", True
        else:
            continue
        claim = storage.claims.get((namespace, name)) if storage is not None else None
        out.append(ClaimUse(volume=str(v.get("name")), namespace=namespace, name=name, ephemeral=ephemeral, claim=claim))
    return tuple(out)


def pod_filters(*, namespace: str, name: str, labels: dict[str, str], spec: dict, storage: Storage | None,
                placement: Placement | None) -> PodFilters:
    claims = claim_uses(spec, namespace, name, storage)
    affinity = tuple(affinity_term(t, namespace, labels, placement) for t in _required(spec, "podAffinity"))
    anti = tuple(affinity_term(t, namespace, labels, placement) for t in _required(spec, "podAntiAffinity"))
    spread = spread_constraints(spec, labels)
    ports = host_ports(spec)
    # Existing pods' anti-affinity may match any pod: then its namespace and labels are part of its shape.
    if claims or affinity or anti or spread or ports or (placement is not None and placement.anti):
        key = orjson.dumps([namespace, sorted(labels.items()), [(c.key, c.ephemeral) for c in claims],
                            _required(spec, "podAffinity"), _required(spec, "podAntiAffinity"),
                            spec.get("topologySpreadConstraints"), ports], option=orjson.OPT_SORT_KEYS)
    else:
        key = b""
    return PodFilters(namespace=namespace, name=name, labels=labels, claims=claims, affinity=affinity, anti=anti,
                      spread=spread, ports=ports, key=key)
