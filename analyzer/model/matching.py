"""Taints, tolerations, node selectors and required node affinity, as the scheduler matches them.

Sources: k8s.io/api/core/v1 Toleration.ToleratesTaint, and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (terms are ORed,
requirements within a term ANDed, an empty term matches nothing, Gt/Lt compare
integers and fail when either side does not parse, matchFields supports only
metadata.name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.kube import BLOCKING_EFFECTS, NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY

_INT = re.compile(r"^[+-]?[0-9]+$")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerations_of(spec: dict) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
        for t in spec.get("tolerations") or ()
    )


def taints_of(node: dict) -> tuple[Taint, ...]:
    return tuple(Taint(t["key"], t.get("value") or "", t["effect"]) for t in (node.get("spec") or {}).get("taints") or ())


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


CORDON_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


def untolerated(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...],
                effects: tuple[str, ...] = BLOCKING_EFFECTS) -> list[Taint]:
    """The scheduler's TaintToleration filter (and, with effects=("NoExecute",), the kubelet's):
    the taints with a blocking effect that no toleration tolerates."""
    return [t for t in taints if t.effect in effects and not tolerated(t, tolerations)]


def is_cordon_taint(taint: Taint) -> bool:
    """The taint the node controller adds to a cordoned node: part of the cordon, not a taint of its own."""
    return taint.key == UNSCHEDULABLE_TAINT_KEY and taint.effect == NO_SCHEDULE


def _requirement(expr: dict, value: str | None, present: bool) -> bool:
    op = expr.get("operator")
    values = expr.get("values") or []
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        # strconv.ParseInt: an optional sign and decimal digits only (Python's int() would also take "5_50" or " 5").
        if not (_INT.match(value or "") and _INT.match(values[0])):
            return False
        left, right = int(value or ""), int(values[0])
        return left > right if op == "Gt" else left < right
    return False


def term_matches(term: dict, labels: dict[str, str], node_name: str) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    for expr in exprs:
        key = expr.get("key", "")
        if not _requirement(expr, labels.get(key), key in labels):
            return False
    for expr in fields:
        if expr.get("key") != "metadata.name" or expr.get("operator") not in ("In", "NotIn"):
            return False
        if not _requirement(expr, node_name, True):
            return False
    return True


def toleration_text(t: Taint) -> str:
    """The toleration that tolerates this taint, as a person writes it in a pod spec."""
    value = f", operator: Equal, value: {t.value}" if t.value else ", operator: Exists"
    return "{key: " + t.key + value + ", effect: " + t.effect + "}"


def names_required(terms: list[dict] | None) -> frozenset[str] | None:
    """The node names a required node affinity allows when every term names them (matchFields metadata.name In;
    within a term the lists are ANDed, terms ORed), as the DaemonSet controller pins each of its pods (kubernetes
    pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity); None when some term does not."""
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        allowed: set[str] | None = None
        for expr in term.get("matchFields") or () if isinstance(term, dict) else ():
            if isinstance(expr, dict) and expr.get("key") == "metadata.name" and expr.get("operator") == "In":
                values = {v for v in expr.get("values") or () if isinstance(v, str)}
                allowed = values if allowed is None else allowed & values
        if allowed is None:
            return None
        names |= allowed
    return frozenset(names)


def only_name(terms: list[dict] | None) -> str | None:
    """The one node a required node affinity names, when it names exactly one (a DaemonSet's pod), else None."""
    names = names_required(terms)
    return next(iter(names)) if names is not None and len(names) == 1 else None


HOSTNAME_LABEL = "kubernetes.io/hostname"  # set by the kubelet to its host's name: no person relabels a node with it


def hostnames_required(node_selector: tuple[tuple[str, str], ...], terms: list[dict] | None) -> frozenset[str] | None:
    """The hosts a pod is held to by the kubelet's kubernetes.io/hostname label: its nodeSelector's value, else the
    values every required node-affinity term allows (matchExpressions In; terms ORed, a term's lists ANDed); None
    when neither names hosts. Such a pod is pinned as a DaemonSet's is by name: another node is no change away."""
    for k, v in node_selector:
        if k == HOSTNAME_LABEL:
            return frozenset((v,))
    if not terms:
        return None
    hosts: set[str] = set()
    for term in terms:
        allowed: set[str] | None = None
        for expr in term.get("matchExpressions") or () if isinstance(term, dict) else ():
            if isinstance(expr, dict) and expr.get("key") == HOSTNAME_LABEL and expr.get("operator") == "In":
                values = {v for v in expr.get("values") or () if isinstance(v, str)}
                allowed = values if allowed is None else allowed & values
        if allowed is None:
            return None
        hosts |= allowed
    return frozenset(hosts)


def selector_matches(node_selector: dict[str, str], terms: list[dict] | None, labels: dict[str, str], node_name: str) -> bool:
    """nodeSelector AND (any required node-affinity term); terms None means no required affinity."""
    for k, v in node_selector.items():
        if labels.get(k) != v:
            return False
    if terms is None:
        return True
    return any(term_matches(t, labels, node_name) for t in terms)
