"""DeviceTaintRules applied to the world's devices, as kube-scheduler sees them.

With DeviceTaintRules enabled, the scheduler reads ResourceSlices through the ResourceSlice tracker
(k8s.io/dynamic-resource-allocation resourceslice/tracker/tracker.go, `applyPatches`), which appends each
rule's taint to every device the rule's selector matches, "as if the taint was specified directly in the
ResourceSlice by the DRA driver" (DeviceTaintRule API doc). The allocator then judges those taints like the
slice's own. The tracker's matching, which this follows rule by rule:

- no `deviceSelector` at all: no check is made, every device gets the taint (applyPatches only filters inside
  `if deviceSelector != nil`; tracker_test.go builds "DeviceSelector: nil, // all slices"). The API comment
  says "Without a selector, no devices are matched"; the scheduler does the opposite, and this follows the
  scheduler;
- `driver`, `pool`, `device`: equal to the slice's driver, pool name and the device's name; the empty
  selector matches every device;
- v1alpha3 of v1.33/v1.34 only: `deviceClassName` that does not exist -> the rule does not apply ("DeviceTaintRule
  does not apply, DeviceClass does not exist"); else the class's CEL selectors, then the rule's `selectors`,
  must all be true; a CEL runtime error means "not matched" (`continue devices`).

Where the answer cannot be known, the device's taints are unknown (`TaintsUnknown`), never assumed absent: a
rule that cannot be read, a class that cannot be read, an expression the CEL library cannot evaluate (the
tracker would compile it; a compile error there fails the whole slice). The allocation steps then leave the
device out, unless the request tolerates the rule's taint (any taint, for an unreadable rule: only a toleration of
everything), and, if the pod does not fit without it, answer `unclassified` saying which rule.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from analyzer.model.dra.device_search import IndexedDevice
from analyzer.model.dra.views import Problem, TaintRule, TaintsUnknown

Judge = Callable[[str, int], Any]  # (name or expression, device index) -> a judgement with matched/error/unevaluable/why


def _selects(rule: TaintRule, index: int, *, classes: Mapping[str, Any], bad_classes: Mapping[str, Problem],
             class_matches: Judge, evaluate: Judge) -> bool | TaintsUnknown:
    """Does the rule's class and CEL part select this device (True/False), or is that unknown?"""
    if rule.device_class is not None:
        if rule.device_class not in classes:
            problem = bad_classes.get(rule.device_class)
            if problem is None:
                return False  # tracker: the class does not exist, the rule does not apply
            return TaintsUnknown(rule=rule.label(), why=f"its DeviceClass {rule.device_class} is unreadable ({problem})",
                                 taint=rule.taint)
        judged = class_matches(rule.device_class, index)
        if judged.unevaluable:
            return TaintsUnknown(rule=rule.label(), why=f"{judged.why} (DeviceClass {rule.device_class})",
                                 expression=judged.unevaluable, taint=rule.taint)
        if not judged.matched:
            return False
    for expression in rule.selectors:
        judged = evaluate(expression, index)
        if judged.unevaluable:
            return TaintsUnknown(rule=rule.label(), why=str(judged.why), expression=judged.unevaluable, taint=rule.taint)
        if not judged.matched:
            return False
    return True


def _key(rule: TaintRule) -> tuple[str | None, str | None, str | None]:
    """The rule's (driver, pool, device), None where it selects any; a rule without a selector selects any device."""
    return (rule.driver, rule.pool, rule.device) if rule.selected else (None, None, None)


def apply_rules(rules: Iterable[TaintRule], devices: list[IndexedDevice], *, classes: Mapping[str, Any],
                bad_classes: Mapping[str, Problem], class_matches: Judge, evaluate: Judge) -> None:
    """Append each rule's taint to the devices it selects, after the slice's own taints, in the bundle's order of
    rules (the tracker appends in the order its informer lists the rules, which Kubernetes leaves undefined; the
    order only changes which taint is shown first, never whether one blocks). Mark devices whose taints cannot be
    known. Changes `devices` in place.

    Rules are indexed by (driver, pool, device) with None for "any", so each device looks up only the rules that
    can match it (8 keys) rather than every rule, and builds its taints once."""
    ordered = list(rules)
    by_key: dict[tuple[str | None, str | None, str | None], list[int]] = {}
    for position, rule in enumerate(ordered):
        by_key.setdefault(_key(rule), []).append(position)
    for dev in devices:
        ref = dev.ref
        found: list[int] = []
        for driver in (ref.driver, None):
            for pool in (ref.pool, None):
                for device in (ref.device, None):
                    found.extend(by_key.get((driver, pool, device), ()))
        if not found:
            continue
        found.sort()
        added: list = []
        unknown: list[TaintsUnknown] = []
        for position in found:
            rule = ordered[position]
            if rule.problem is not None or rule.taint is None:
                unknown.append(TaintsUnknown(rule=rule.label(), why=f"it is unreadable: {rule.problem}"))
                continue
            if rule.device_class is None and not rule.selectors:
                added.append(rule.taint)
                continue
            verdict = _selects(rule, dev.index, classes=classes, bad_classes=bad_classes, class_matches=class_matches,
                               evaluate=evaluate)
            if isinstance(verdict, TaintsUnknown):
                unknown.append(verdict)
            elif verdict:
                added.append(rule.taint)
        if added:
            dev.taints = (*dev.taints, *added)
        if unknown:
            dev.taints_unknown = (*dev.taints_unknown, *unknown)
