"""Kueue's flavor assigner, as v0.19 computes it (pkg/scheduler/flavorassigner/flavorassigner.go).

For each pod set in order, each resource it asks (count x one pod's request; `pods` = count when the
ClusterQueue covers it) goes to the resource group that covers it; that group's flavors are tried in order:
- checkFlavorForPodSets: the first NoSchedule/NoExecute `nodeTaints` the pod's tolerations (plus the flavor's
  own) do not tolerate rules it out (`untolerated taint %s in flavor %s`); then the pod's nodeSelector and
  required node affinity, kept to the keys of the flavor's `nodeLabels` (flavorSelector), must match those
  labels (`flavor %s doesn't match node affinity`);
- fitsResourceQuota, per resource of the group: what earlier pod sets took in this flavor plus this request
  against potentialAvailable (`insufficient quota for … > maximum capacity (%s)`: never, the too-large case)
  and against available (`insufficient unused quota for %s in flavor %s, %s more needed`: not now).
A pod set no flavor takes stops the assignment; Kueue's message is `couldn't assign flavors to pod set %s: `
followed by the reasons, sorted, joined by ", " (Status.Message).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.model.matching import (
    BLOCKING_EFFECTS,
    Taint,
    selector_matches,
    tolerated,
    tolerations_of,
)
from analyzer.model.quantity import format_units
from analyzer.model.queue_quota import QuotaTree
from analyzer.model.queues import ClusterQueue, Flavor, PodSet, Workload


@dataclass(frozen=True, kw_only=True)
class ResourceTry:
    resource: str
    asked: int  # this pod set's, plus what earlier pod sets took in the flavor
    nominal: int
    borrowing_limit: int | None
    reserved: int
    free: int  # available now (nominal + borrowable - reserved, as the tree says)
    most: int  # potentialAvailable: the most the queue could ever give
    problem: str = ""  # "" fits, "short" not now, "too-large" never


@dataclass(frozen=True, kw_only=True)
class FlavorTry:
    flavor: str
    selector_ok: bool
    taint: Taint | None  # the first untolerated taint, if any
    resources: tuple[ResourceTry, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def ruled_out(self) -> bool:
        return self.taint is not None or not self.selector_ok

    @property
    def fits(self) -> bool:
        return not self.ruled_out and all(not r.problem for r in self.resources)


@dataclass(kw_only=True)
class PodSetOutcome:
    name: str
    asked: dict[str, int]
    uncovered: list[str] = field(default_factory=list)
    tries: list[FlavorTry] = field(default_factory=list)  # the group that failed (or every group tried)
    assigned: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    failed: bool = False

    def message(self) -> str:
        reasons = sorted(r for t in self.tries for r in t.reasons)
        if self.uncovered:
            reasons = [f"resource {self.uncovered[0]} unavailable in ClusterQueue"]
        return f"couldn't assign flavors to pod set {self.name}: " + ", ".join(reasons)


def _flavor_selector(spec: dict, keys: set[str]) -> tuple[dict[str, str], list[dict] | None]:
    """flavorSelector: the pod's nodeSelector and required terms kept to the flavor's label keys; a term left
    empty matches every flavor (terms are ORed), so the affinity then drops out."""
    selector = {str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items() if k in keys}
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms: list[dict] = []
    for term in required.get("nodeSelectorTerms") or ():
        kept = [e for e in (term.get("matchExpressions") or ()) if e.get("key") in keys]
        if not kept:
            return selector, None
        terms.append({"matchExpressions": kept})
    return selector, (terms or None)


def check_flavor(flavor: Flavor, spec: dict) -> tuple[bool, Taint | None]:
    """(selector matches, first untolerated taint) of one pod template against one ResourceFlavor."""
    tolerations = tolerations_of(spec) + flavor.tolerations
    taint = next((t for t in flavor.taints if t.effect in BLOCKING_EFFECTS and not tolerated(t, tolerations)), None)
    selector, terms = _flavor_selector(spec, set(flavor.node_labels))
    return selector_matches(selector, terms, flavor.node_labels, ""), taint


def asked_of(ps: PodSet, cq: ClusterQueue) -> dict[str, int]:
    asked = {r: v * ps.count for r, v in sorted(ps.requests.items()) if v}
    if cq.group_for("pods") is not None:
        asked["pods"] = ps.count
    return asked


def assign(w: Workload, cq: ClusterQueue, flavors: dict[str, Flavor], tree: QuotaTree) -> list[PodSetOutcome]:
    """Every pod set up to the first that no flavor takes (Kueue stops there)."""
    taken: dict[tuple[str, str], int] = {}
    out: list[PodSetOutcome] = []
    reserved = tree.reserved.get(cq.name, {})
    for ps in w.pod_sets:
        outcome = PodSetOutcome(name=ps.name, asked=asked_of(ps, cq))
        out.append(outcome)
        outcome.uncovered = [r for r in outcome.asked if cq.group_for(r) is None]
        if outcome.uncovered:
            outcome.failed = True
            return out
        done: set[str] = set()
        for resource in outcome.asked:
            group = cq.group_for(resource)
            if resource in done or group is None:
                continue
            wanted = [r for r in group.covered if r in outcome.asked]
            done.update(wanted)
            tries = []
            chosen = None
            for fq in group.flavors:
                flavor = flavors.get(fq.flavor)
                if flavor is None:
                    tries.append(FlavorTry(flavor=fq.flavor, selector_ok=False, taint=None,
                                           reasons=(f"flavor {fq.flavor} not found",)))
                    continue
                selector_ok, taint = check_flavor(flavor, ps.spec)
                if taint is not None:
                    tries.append(FlavorTry(flavor=fq.flavor, selector_ok=selector_ok, taint=taint,
                                           reasons=(f"untolerated taint {taint} in flavor {fq.flavor}",)))
                    continue
                if not selector_ok:
                    tries.append(FlavorTry(flavor=fq.flavor, selector_ok=False, taint=None,
                                           reasons=(f"flavor {fq.flavor} doesn't match node affinity",)))
                    continue
                results, reasons = [], []
                for r in wanted:
                    fr = (fq.flavor, r)
                    prior = taken.get(fr, 0)
                    val = prior + outcome.asked[r]
                    free, most = tree.available(cq.name, fr), tree.potential(cq.name, fr)
                    problem = "too-large" if val > most else "short" if val > free else ""
                    if problem == "too-large":
                        reasons.append(f"insufficient quota for {r} in flavor {fq.flavor}, previously considered podsets "
                                       f"requests ({format_units(r, prior)}) + current podset request "
                                       f"({format_units(r, outcome.asked[r])}) > maximum capacity ({format_units(r, most)})")
                    elif problem == "short":
                        reasons.append(f"insufficient unused quota for {r} in flavor {fq.flavor}, "
                                       f"{format_units(r, val - free)} more needed")
                    results.append(ResourceTry(resource=r, asked=val, nominal=fq.nominal.get(r, 0),
                                               borrowing_limit=fq.borrowing_limit.get(r), free=free, most=most,
                                               reserved=reserved[fr].units if fr in reserved else 0, problem=problem))
                    if problem == "too-large":
                        break  # a flavor that can never fit: Kueue checks no further resource of it
                attempt = FlavorTry(flavor=fq.flavor, selector_ok=True, taint=None, resources=tuple(results),
                                    reasons=tuple(reasons))
                tries.append(attempt)
                if attempt.fits:
                    chosen = attempt
                    break
            outcome.tries.extend(tries)
            if chosen is None:
                outcome.failed = True
                return out
            for rt in chosen.resources:
                outcome.assigned[rt.resource] = chosen.flavor
                taken[(chosen.flavor, rt.resource)] = rt.asked
    return out
