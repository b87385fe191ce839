"""Which devices a pod's claims can use on one node, step by step (../shared/spec/dra.md).

`DraWorld` is built once per bundle from `DraViews` and the nodes. It indexes the
devices each node is offered and the devices in use, and answers:

- `resolve(pod)`: the pre-funnel rows of causes.md (6 `no-resourceclaim`, 7
  `no-deviceclass`) and the claim specs the pod is judged on;
- `evaluate(resolution, node)`: per claim and request, the devices left after each
  step (class, selectors, taints, free, enough) and the first step that fails, as
  a `NodeOutcome`. Device taints are the slice's own plus those DeviceTaintRules
  add (taint_rules.py); a device whose taints a rule leaves unknown is left out (unless the request
  tolerates whatever that rule could add),
  and a failure it might explain is `taints-unknown` -> unclassified. Stages map to the funnel as: `class`/`pinned` -> no-gpu-node,
  `selectors`/`constraints` -> device-selector-mismatch, `taints` ->
  untolerated-taint, `free`/`enough` -> exhausted (`too_large` when even an empty
  node falls short), `unmodelled`/`unevaluable` -> unclassified, `ok` -> fits.
- `extended_offer(resource, node)`: devices of a DeviceClass that serves an
  extended resource (`spec.extendedResourceName`) on a node that does not
  advertise it.

Here: the world, its indexes (devices per node, holders, CEL verdicts per
device) and the per-step device lists. The allocation search over those lists
(k8s.io/dynamic-resource-allocation/structured, allocator_stable.go `allocateOne`)
is in device_search.py; the records answered (Resolution, NodeOutcome, ...) are
in outcomes.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

from analyzer.model.dra.cel import Selectors
from analyzer.model.dra.cel_devices import device_from_slice
from analyzer.model.dra.device_search import AskLists, DeviceSearch, IndexedDevice
from analyzer.model.dra.extended import ExtendedResources
from analyzer.model.dra.outcomes import (NodeLike, STEPS, TAINTS_SHOWN, CelError, DeviceHolder, MissingClaim, MissingClass,
                                         NodeOutcome, RequestEvidence, ResolvedClaim, Resolution, TaintedDevice)
from analyzer.model.dra.taint_rules import apply_rules
from analyzer.model.dra.views import (ALL, CLAIMS_FILE, CLASSES_FILE, TEMPLATES_FILE, Claim, DeviceAsk, DeviceRef,
                                      DraViews, PodClaims, Problem)
from analyzer.model.matching import selector_matches, untolerated

# A search that needs more device picks than this on one node is answered
# `unmodelled` rather than run long: bundles are untrusted input.
DEFAULT_SEARCH_BUDGET = 50_000
# The scheduler's implicit extended resource name for every DeviceClass (KEP-5004).


class SelectorEngine(Protocol):
    def evaluate(self, expression: str, device: Any) -> Any: ...


def _shape(claims: list[ResolvedClaim]) -> tuple:
    """What the per-node answer depends on: an allocated claim by identity, any other by its spec."""
    return tuple((rc.claim.key, None) if rc.claim is not None and rc.allocated else (None, rc.spec) for rc in claims)


@dataclass(slots=True)
class _Judged:
    matched: bool
    error: str | None = None  # CEL runtime error (counts as no match)
    unevaluable: str | None = None  # expression the library cannot evaluate
    why: str | None = None  # why it cannot be evaluated


def _default_engine() -> tuple[SelectorEngine, Callable[[str, dict], Any]]:
    return Selectors(), device_from_slice


def _judge(result: Any, expression: str) -> _Judged:
    """The CEL helper answers Match(matched, error), or an Unevaluable result for what its library cannot evaluate."""
    if type(result).__name__ != "Unevaluable" and hasattr(result, "matched"):
        return _Judged(matched=bool(result.matched), error=getattr(result, "error", None))
    return _Judged(matched=False, unevaluable=expression, why=str(getattr(result, "why", "") or "") or None)


class DraWorld(ExtendedResources):
    def __init__(self, views: DraViews, nodes: Iterable[NodeLike], *, selectors: SelectorEngine | None = None,
                 device_factory: Callable[[str, dict], Any] | None = None,
                 search_budget: int = DEFAULT_SEARCH_BUDGET) -> None:
        if selectors is None or device_factory is None:
            engine, factory = _default_engine()
            selectors, device_factory = selectors or engine, device_factory or factory
        self.views = views
        self._engine = selectors
        self._factory = device_factory
        self._budget = search_budget
        self._devices: list[IndexedDevice] = []
        self._by_ref: dict[DeviceRef, int] = {}
        self._by_node_name: dict[str, list[int]] = {}
        self._all_nodes: list[int] = []
        self._by_selector: list[tuple[dict, list[int]]] = []
        for pool in views.pools:
            for sl in pool.slices:
                indices = []
                for d in sl.devices:
                    reason = sl.unmodelled or (pool.unmodelled if pool.incomplete else None) or d.unmodelled
                    dev = IndexedDevice(index=len(self._devices), ref=d.ref, raw=d.raw, taints=d.taints, unmodelled=reason)
                    self._devices.append(dev)
                    self._by_ref.setdefault(d.ref, dev.index)
                    indices.append(dev.index)
                if sl.node_name:
                    self._by_node_name.setdefault(sl.node_name, []).extend(indices)
                elif sl.all_nodes or sl.per_device_node_selection:
                    # per-device node selection is not modelled: offered everywhere, marked unmodelled
                    self._all_nodes.extend(indices)
                elif sl.node_selector is not None:
                    self._by_selector.append((sl.node_selector, indices))
        # Devices in use: every claim's status.allocation (allocator's AllocatedDevices); adminAccess takes none.
        self._holders: dict[DeviceRef, list[Claim]] = {}
        for claim in views.claims.values():
            for a in claim.allocated or ():
                if not a.admin_access:
                    self._holders.setdefault(a.ref, []).append(claim)
        self._node_devices: dict[str, tuple[int, ...]] = {}
        self._class_cache: dict[tuple[str, int], _Judged] = {}
        self._expr_cache: dict[tuple[str, int], _Judged] = {}
        self._shape_ids: dict[tuple, int] = {}
        self._outcomes: dict[tuple[int, str], NodeOutcome] = {}
        self._searcher = DeviceSearch(devices=self._devices, budget=search_budget)
        self._extended: dict[str, str | None] = {}
        if views.taint_rules:
            bad_classes = {name: p for (file, _, name), p in views.unreadable.items() if file == CLASSES_FILE}
            apply_rules(views.taint_rules, self._devices, classes=views.classes, bad_classes=bad_classes,
                        class_matches=self.class_matches, evaluate=self._eval)

    # ---- indexes ------------------------------------------------------------------------------

    def devices_on(self, node: NodeLike) -> tuple[int, ...]:
        """Indices of the devices offered to a node: nodeName, matching nodeSelector, allNodes."""
        cached = self._node_devices.get(node.name)
        if cached is None:
            found = list(self._by_node_name.get(node.name, ())) + self._all_nodes
            for selector, indices in self._by_selector:
                if selector_matches({}, selector.get("nodeSelectorTerms") or [], node.labels, node.name):
                    found.extend(indices)
            cached = self._node_devices[node.name] = tuple(found)
        return cached

    def class_devices(self, node: NodeLike) -> dict[str, tuple[int, tuple[DeviceHolder, ...]]]:
        """Per DeviceClass: how many devices of it the node is offered, and who holds them (the occupancy
        picture's DRA rows). Devices the model does not judge are left out."""
        out: dict[str, tuple[int, tuple[DeviceHolder, ...]]] = {}
        offered = [i for i in self.devices_on(node) if not self._devices[i].unmodelled]
        for name in sorted(self.views.classes):
            mine = [i for i in offered if self.class_matches(name, i).matched]
            if mine:
                out[name] = (len(mine), tuple(h for i in mine for h in self.holders(self._devices[i].ref)))
        return out

    def device_name(self, index: int) -> str:
        return str(self._devices[index].ref)

    def holders(self, ref: DeviceRef) -> tuple[DeviceHolder, ...]:
        return tuple(DeviceHolder(device=str(ref), claim=c.key, pods=tuple(f"{c.namespace}/{p}" for p in c.reserved_for)) for c in self._holders.get(ref, ()))

    def _cel_device(self, dev: IndexedDevice) -> Any:
        if dev.cel is None:
            try:
                dev.cel = self._factory(dev.ref.driver, dev.raw)
            except ValueError as e:  # an entry API validation would refuse: no selector can match it
                dev.cel = _Judged(matched=False, error=f"invalid device entry: {e}")
        return dev.cel

    def _eval(self, expression: str, index: int) -> _Judged:
        key = (expression, index)
        judged = self._expr_cache.get(key)
        if judged is None:
            device = self._cel_device(self._devices[index])
            if isinstance(device, _Judged):
                judged = device
            else:
                judged = _judge(self._engine.evaluate(expression, device), expression)
            self._expr_cache[key] = judged
        return judged

    def class_matches(self, class_name: str, index: int) -> _Judged:
        """Step 1, once per (class, device): the DeviceClass's selectors all true (the driver is one of them)."""
        key = (class_name, index)
        judged = self._class_cache.get(key)
        if judged is None:
            judged = _Judged(matched=True)
            for expression in self.views.classes[class_name].selectors:
                one = self._eval(expression, index)
                if not one.matched:
                    judged = one
                    break
            self._class_cache[key] = judged
        return judged

    # ---- pre-funnel -------------------------------------------------------------------------------

    def _claim(self, namespace: str, name: str) -> tuple[Claim | None, Problem | None]:
        """A ResourceClaim by name, or the finding that made it unreadable (never both)."""
        claim = self.views.claims.get((namespace, name))
        return claim, (self.views.unreadable.get((CLAIMS_FILE, namespace, name)) if claim is None else None)

    def resolve(self, pod: PodClaims) -> Resolution:
        """The claim specs a pod is judged on, and what is missing (causes.md `no-resourceclaim`, `no-deviceclass`)."""
        claims, missing, unreadable = [], [], []
        bad = self.views.unreadable
        for ref in pod.refs:
            if ref.claim_name:
                claim, problem = self._claim(pod.namespace, ref.claim_name)
                if problem is not None:
                    unreadable.append(problem)
                elif claim is None:
                    missing.append(MissingClaim(pod_claim=ref.name, kind="ResourceClaim", namespace=pod.namespace,
                                                name=ref.claim_name))
                else:
                    claims.append(ResolvedClaim(pod_claim=ref.name, owner=f"ResourceClaim {claim.key}", spec=claim.spec,
                                                claim=claim))
                continue
            if not ref.template_name:
                continue
            listed, generated = pod.generated_name(ref.name)
            if listed and generated is None:
                continue  # the claim controller decided no claim is needed
            claim, problem = self._claim(pod.namespace, generated) if generated else (None, None)
            if problem is not None:
                unreadable.append(problem)
                continue
            if claim is not None:
                claims.append(ResolvedClaim(pod_claim=ref.name, owner=f"ResourceClaim {claim.key}", spec=claim.spec,
                                            claim=claim))
                continue
            template = self.views.templates.get((pod.namespace, ref.template_name))
            if template is None and (TEMPLATES_FILE, pod.namespace, ref.template_name) in bad:
                unreadable.append(bad[(TEMPLATES_FILE, pod.namespace, ref.template_name)])
            elif template is None:
                missing.append(MissingClaim(pod_claim=ref.name, kind="ResourceClaimTemplate", namespace=pod.namespace,
                                            name=ref.template_name))
            else:  # not generated yet: judged on the template's spec
                claims.append(ResolvedClaim(pod_claim=ref.name, owner=f"ResourceClaimTemplate {pod.namespace}/{template.name}",
                                            spec=template.spec, claim=None))
        if pod.extended_claim:
            claim = self.views.claims.get((pod.namespace, pod.extended_claim))
            if claim is not None:
                claims.append(ResolvedClaim(pod_claim="(extended resource)", owner=f"ResourceClaim {claim.key}",
                                            spec=claim.spec, claim=claim))
        # The scheduler validates classes of claims still to allocate (PreFilter: "device class X does not exist").
        no_class = []
        for rc in claims:
            if rc.allocated:
                continue
            for request, name in rc.spec.class_names():
                if name in self.views.classes:
                    continue
                if (CLASSES_FILE, "", name) in bad:
                    unreadable.append(bad[(CLASSES_FILE, "", name)])
                else:
                    no_class.append(MissingClass(owner=rc.owner, request=request, device_class=name))
        shape_id = self._shape_ids.setdefault(_shape(claims), len(self._shape_ids))
        return Resolution(pod=pod, claims=tuple(claims), missing_claims=tuple(missing), missing_classes=tuple(no_class),
                          unreadable=tuple(dict.fromkeys(unreadable)), shape_id=shape_id)

    # ---- per node ---------------------------------------------------------------------------------

    def evaluate(self, resolution: Resolution, node: NodeLike) -> NodeOutcome:
        key = (resolution.shape_id, node.name)
        outcome = self._outcomes.get(key)
        if outcome is None:
            outcome = self._outcomes[key] = self._evaluate(resolution, node)
        return outcome

    def _evaluate(self, resolution: Resolution, node: NodeLike) -> NodeOutcome:
        if not resolution.complete:
            raise ValueError("evaluate() needs a complete resolution: missing claims and classes (and unreadable objects) come first")
        for rc in resolution.claims:
            if rc.claim is not None and rc.allocated:
                # Allocated claims pin the pod to the nodes their allocation allows (no new devices needed).
                terms = rc.claim.node_selector.get("nodeSelectorTerms") if rc.claim.node_selector else None
                if terms is not None and not selector_matches({}, terms, node.labels, node.name):
                    return NodeOutcome(node=node.name, stage="pinned", pinned_by=rc.claim.key)
        pending = [rc for rc in resolution.claims if not rc.allocated]
        for rc in pending:
            if rc.spec.unmodelled:
                return NodeOutcome(node=node.name, stage="unmodelled", unmodelled=f"{rc.owner}: {rc.spec.unmodelled}")
        if not pending:
            return NodeOutcome(node=node.name, stage="ok")
        offered = self.devices_on(node)
        lists = [[[self._ask_lists(rc.owner, ask, offered) for ask in req.alternatives] for req in rc.spec.requests]
                 for rc in pending]
        flat = [a for claim in lists for req in claim for a in req]
        stage, too_large, chosen = self._searcher.first_failing(pending, lists)
        unmodelled = unevaluable = why = None
        if stage == "budget":
            stage, unmodelled = "unmodelled", f"the device search on this node needs more than {self._budget} steps"
        elif stage != "ok":
            # A failure that a device we do not model (or cannot evaluate) might explain is not answered as ours.
            # Unknown taints only remove devices at the taints step (allocator_stable.go allocateOne: isSelectable,
            # then taintPreventsAllocation), so they can explain a failure at that step or later, not before.
            after_taints = stage in ("taints", "free") or (stage == "enough" and not too_large)
            unmodelled = next((a.unmodelled for a in flat if a.unmodelled), None)
            taints_unknown = None if unmodelled or not after_taints else next(
                (a.taints_unknown for a in flat if a.taints_unknown), None)
            found = None if unmodelled or taints_unknown else next((a for a in flat if a.unevaluable), None)
            unevaluable, why = (found.unevaluable, found.why) if found else (None, None)
            if not (unmodelled or taints_unknown or found) and after_taints:
                rule = next((a for a in flat if a.taints_unevaluable), None)
                unevaluable, why = (rule.taints_unevaluable, rule.taints_why) if rule else (None, None)
            if taints_unknown:
                stage, too_large, unmodelled = "taints-unknown", False, taints_unknown
            elif unmodelled or unevaluable:
                stage, too_large = ("unmodelled" if unmodelled else "unevaluable"), False
        evidence = tuple(self._evidence(a, chosen.get(id(a), ())) for a in flat)
        return NodeOutcome(node=node.name, stage=stage, too_large=too_large, requests=evidence,
                           unmodelled=unmodelled, unevaluable=unevaluable, unevaluable_why=why)

    def _ask_lists(self, owner: str, ask: DeviceAsk, offered: tuple[int, ...]) -> AskLists:
        out = AskLists(ask=ask, owner=owner, lists={})
        passed_class = []
        for i in offered:
            judged = self.class_matches(ask.device_class, i)
            if judged.unevaluable:
                out.unevaluable, out.why = out.unevaluable or judged.unevaluable, out.why or judged.why
            elif judged.matched:
                passed_class.append(i)
            elif judged.error:
                out.errors.append(CelError(device=self.device_name(i), expression="(DeviceClass selector)", error=judged.error))
        passed_selectors = []
        for i in passed_class:
            ok = True
            for expression in ask.selectors:
                judged = self._eval(expression, i)
                if judged.unevaluable:
                    out.unevaluable, out.why = out.unevaluable or judged.unevaluable, out.why or judged.why
                    ok = False
                    break
                if not judged.matched:
                    if judged.error:
                        out.errors.append(CelError(device=self.device_name(i), expression=expression, error=judged.error))
                    ok = False
                    break
            if ok:
                passed_selectors.append(i)
        # Devices the engine does not model are counted out, but remembered: a failure may then be theirs to explain.
        for i in passed_selectors:
            if self._devices[i].unmodelled:
                out.unmodelled = out.unmodelled or f"{self._devices[i].unmodelled} ({self.device_name(i)})"
        modelled = [i for i in passed_selectors if not self._devices[i].unmodelled]
        passed_class = [i for i in passed_class if not self._devices[i].unmodelled]
        # Device taints: NoSchedule/NoExecute not tolerated by the request (allocator_stable.go
        # taintPreventsAllocation: other effects, "None" included, are ignored). A device its known taints do not
        # block but a rule may taint with a taint the request does not tolerate is left out, remembered like an
        # unmodelled one; a rule whose taint would be tolerated anyway changes nothing.
        passed_taints = []
        for i in modelled:
            dev = self._devices[i]
            if untolerated(dev.taints, ask.tolerations):
                continue
            unknown = next((u for u in dev.taints_unknown if u.blocks(ask.tolerations)), None)
            if unknown is None:
                passed_taints.append(i)
            elif unknown.expression is not None:
                if not out.taints_unevaluable:
                    out.taints_unevaluable = unknown.expression
                    out.taints_why = f"{unknown.why}; a selector of {unknown.rule}, which may taint {dev.ref}"
            elif not out.taints_unknown:
                out.taints_unknown = f"the taints of {dev.ref} are unknown: {unknown.rule}: {unknown.why}"
        free = passed_taints if ask.admin_access else [i for i in passed_taints if self._devices[i].ref not in self._holders]
        out.lists = {"class": passed_class, "selectors": modelled, "taints": passed_taints, "free": free}
        return out

    def _evidence(self, a: AskLists, chosen: tuple[int, ...]) -> RequestEvidence:
        taken = [self._devices[i].ref for i in a.lists["taints"] if self._devices[i].ref in self._holders]
        holders = tuple(h for ref in taken for h in self.holders(ref))
        # The devices the taints step removed, with the taints that did it (a rule's taint names the rule).
        kept = set(a.lists["taints"])
        tainted = tuple(TaintedDevice(device=self.device_name(i), taints=tuple(str(t) for t in blocking[:TAINTS_SHOWN]),
                                      more=max(len(blocking) - TAINTS_SHOWN, 0))
                        for i in a.lists["selectors"] if i not in kept
                        for blocking in [untolerated(self._devices[i].taints, a.ask.tolerations)] if blocking)
        return RequestEvidence(owner=a.owner, request=a.ask.name, device_class=a.ask.device_class,
                               needed="All" if a.ask.mode == ALL else a.ask.count,
                               left={step: len(a.lists[step]) for step in STEPS},
                               chosen=tuple(self.device_name(i) for i in chosen), holders=holders, tainted=tainted,
                               cel_errors=tuple(a.errors))
