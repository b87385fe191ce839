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
    anti_matched: tuple[int, ...]  # the bound pods' anti-affinity terms that match this pod (existing_anti_terms)
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


def existing_anti_terms(placement: Placement) -> list[tuple[AffinityTerm, list[tuple[str, dict[str, list[str]]]]]]:
    """Every distinct required anti-affinity term of the bound pods, with who carries it (their namespace and
    names per node), made once per bundle. Terms alike (selector, namespaces, topology key) are one entry,
    however many label sets carry them: per pod only "does it match" is asked, of each distinct term."""
    found = placement.memo.get("anti_terms")
    if found is None:
        merged: dict[tuple, tuple[AffinityTerm, list[tuple[str, dict[str, list[str]]]]]] = {}
        for (ns, lid, raw), per_node in placement.anti.items():
            for t in orjson.loads(raw):
                if isinstance(t, dict):
                    term = affinity_term(t, ns, placement.labels[lid], placement)
                    merged.setdefault((term.selector.key, term.namespaces, term.topology_key, term.unknown),
                                      (term, []))[1].append((ns, per_node))
        found = placement.memo["anti_terms"] = list(merged.values())
    return found


def _anti_index(placement: Placement) -> tuple[dict[tuple[str, str], list[int]], list[int]]:
    """The bound pods' distinct anti-affinity terms indexed by a label pair their selector requires (the first
    `In` requirement: one entry per value), and the terms that require none. A pod's candidates are the terms
    under its own label pairs plus those: 11,000 workloads, each with a term on its own label, are not 11,000
    matches per pod."""
    found = placement.memo.get("anti_index")
    if found is None:
        by_pair: dict[tuple[str, str], list[int]] = {}
        rest: list[int] = []
        for i, (t, _) in enumerate(existing_anti_terms(placement)):
            if t.selector.nothing:
                continue  # matches no pod
            needed = next((r for r in t.selector.requirements if r[1] == "In"), None)
            if needed is None:
                rest.append(i)
            else:
                for value in needed[2]:
                    by_pair.setdefault((needed[0], value), []).append(i)
        found = placement.memo["anti_index"] = (by_pair, rest)
    return found


def _anti_matching(placement: Placement, namespace: str, labels: dict[str, str]) -> tuple[int, ...]:
    """The bound pods' anti-affinity terms (existing_anti_terms' positions, ascending) that match a pod with this
    namespace and these labels: once per (namespace, labels)."""
    if not placement.anti:
        return ()
    memo: dict = placement.memo.setdefault("anti_matching", {})
    key = (namespace, orjson.dumps(labels, option=orjson.OPT_SORT_KEYS))
    found = memo.get(key)
    if found is None:
        terms = existing_anti_terms(placement)
        by_pair, rest = _anti_index(placement)
        candidates = set(rest)
        for pair in labels.items():
            candidates.update(by_pair.get(pair, ()))
        found = memo[key] = tuple(i for i in sorted(candidates)
                                  if (terms[i][0].namespaces is None or namespace in terms[i][0].namespaces)
                                  and terms[i][0].selector.matches(labels))
    return found


def _term_key(t: AffinityTerm) -> list:
    return [t.selector.nothing, t.selector.requirements, None if t.namespaces is None else sorted(t.namespaces),
            t.topology_key, t.unknown]


def pod_filters(*, namespace: str, name: str, labels: dict[str, str], spec: dict, storage: Storage | None,
                placement: Placement | None) -> PodFilters:
    claims = claim_uses(spec, namespace, name, storage)
    affinity = tuple(affinity_term(t, namespace, labels, placement) for t in _required(spec, "podAffinity"))
    anti = tuple(affinity_term(t, namespace, labels, placement) for t in _required(spec, "podAntiAffinity"))
    spread = spread_constraints(spec, labels)
    ports = host_ports(spec)
    anti_matched = _anti_matching(placement, namespace, labels) if placement is not None else ()
    # The key holds what the checks read, not the labels themselves: the pod's labels count only through which
    # bound pods' anti-affinity terms match it, whether it matches its own affinity terms, and its terms and
    # spread selectors (matchLabelKeys takes values from them); its namespace through its claims, its terms'
    # namespaces and the pods its spread counts (its own namespace's). So a Deployment per team is not a funnel
    # per team. Any bound pod with anti-affinity gives every pod the inter-pod stage (the scheduler's order).
    if claims or affinity or anti or spread or ports or (placement is not None and placement.anti):
        self_match = all((t.namespaces is None or namespace in t.namespaces) and t.selector.matches(labels) for t in affinity)
        key = orjson.dumps([namespace if claims or spread else "", anti_matched, [(c.key, c.ephemeral) for c in claims],
                            [_term_key(t) for t in affinity], self_match, [_term_key(t) for t in anti],
                            [[c.max_skew, c.topology_key, c.selector.nothing, c.selector.requirements, c.min_domains,
                              c.honor_affinity, c.honor_taints, c.self_match] for c in spread], ports])
    else:
        key = b""
    return PodFilters(namespace=namespace, name=name, labels=labels, claims=claims, affinity=affinity, anti=anti,
                      spread=spread, ports=ports, anti_matched=anti_matched, key=key)
