"""DeviceTaintRules through the real pipeline (model/dra/taint_rules.py; causes.md `untolerated-taint`; dra.md step 3).

Bundles start from the real v1.36.2 objects of tests/data/recordings/dra-exhausted-v1.36 (tests/dra_fixtures.py); the
rules are written as the API serves them (no rule is recorded). The Kubernetes code followed:
k8s.io/dynamic-resource-allocation resourceslice/tracker/tracker.go `applyPatches` (which devices a rule taints;
the same in v0.33.0 through v0.36.2 apart from deviceClassName/selectors, dropped in v0.35.0) and
structured/internal/stable/allocator_stable.go `taintPreventsAllocation` (only NoSchedule/NoExecute block, when
no toleration of the request tolerates them).
"""

from __future__ import annotations

import json

import pytest

from conftest import cli_words, run_cli, verdict
from dra_fixtures import (CLASS, NO_SELECTOR, UNHEALTHY, DraBundle, add_taint_rule, one_device_free, waiter_alone)
from test_dra_rules import GPU0, GPU1, WAITER, devices_on, left

SHOWN = "gpu.example.com/unhealthy=true:NoSchedule (DeviceTaintRule {})"
BY_NAME = {"driver": CLASS, "pool": "dx1", "device": "gpu-1"}


def judge(b: DraBundle, tmp_path):
    return verdict(b.write(tmp_path), WAITER)


def tainted(v) -> dict[str, list[str]]:
    """-o json evidence: the devices the taints step removed, with the taints that did it."""
    return {t["device"]: t["taints"] for t in devices_on(v)["requests"][0]["tainted"]}


# ---- which devices a rule taints (tracker.go applyPatches) -----------------------------------------------------

def test_rule_by_driver_pool_device_taints_the_one_free_device_like_a_slice_taint(tmp_path):
    # gpu-0 is held by holder-1; gpu-1 is free until the rule taints it. DeviceTaintRule API doc: "the same effect
    # as if the taint was specified directly in the ResourceSlice": the answer equals the slice-taint answer.
    assert judge(one_device_free(), tmp_path / "before").word == "fits-now"
    b = one_device_free()
    add_taint_rule(b, "drain-gpu-1", BY_NAME)
    v = judge(b, tmp_path / "rule")
    assert v.word == "exhausted"
    assert left(v) == {"class": 2, "selectors": 2, "taints": 1, "free": 0}
    assert tainted(v) == {GPU1: [SHOWN.format("drain-gpu-1")]}
    assert f"tainted: {GPU1} {SHOWN.format('drain-gpu-1')}" in v.reason
    assert "held: gpu.example.com/dx1/gpu-0 by lab/holder-1-gpu-92p2f" in v.reason

    in_slice = one_device_free()
    in_slice.devices[1]["taints"] = [dict(UNHEALTHY)]
    s = judge(in_slice, tmp_path / "slice")
    assert (s.word, left(s)) == (v.word, left(v))
    assert tainted(s) == {GPU1: ["gpu.example.com/unhealthy=true:NoSchedule"]}  # the driver's own: no rule named


def test_empty_selector_taints_every_device_untolerated_taint_naming_the_rule(tmp_path):
    # DeviceTaintSelector: "The empty selector matches all devices" (applyPatches: no field set, nothing skipped).
    b = waiter_alone()
    add_taint_rule(b, "drain-all", {})
    root = b.write(tmp_path)
    v = verdict(root, WAITER)
    assert v.word == "untolerated-taint"
    assert left(v)["taints"] == 0
    assert tainted(v) == {GPU0: [SHOWN.format("drain-all")], GPU1: [SHOWN.format("drain-all")]}
    assert "untolerated device taint" in v.reason and SHOWN.format("drain-all") in v.reason
    proc = run_cli("why", root, WAITER, "--explain", check=True)
    assert f"tainted: {GPU0}: {SHOWN.format('drain-all')}" in proc.stdout
    data = json.loads(run_cli("why", root, WAITER, "-o", "json", check=True).stdout)
    assert SHOWN.format("drain-all") in json.dumps(data)


def test_rule_without_a_selector_taints_every_device_as_the_scheduler_does(tmp_path):
    # The API comment says "Without a selector, no devices are matched", but the scheduler's tracker only filters
    # inside `if deviceSelector != nil` (tracker.go applyPatches, v0.33.0-v0.36.2; tracker_test.go builds
    # "DeviceSelector: nil, // all slices"): every device gets the taint. The analyzer predicts the scheduler.
    b = waiter_alone()
    add_taint_rule(b, "no-selector", NO_SELECTOR)
    v = judge(b, tmp_path)
    assert v.word == "untolerated-taint"
    assert set(tainted(v)) == {GPU0, GPU1}


@pytest.mark.parametrize("selector", [
    {"driver": "other.example.com"},
    {"driver": CLASS, "pool": "dx2"},
    {"device": "gpu-9"},
], ids=["other-driver", "other-pool", "other-device"])
def test_rule_for_other_devices_changes_nothing(tmp_path, selector):
    # applyPatches: "DeviceTaintRule does not apply, mismatched driver/pool/device".
    b = waiter_alone()
    add_taint_rule(b, "elsewhere", selector)
    v = judge(b, tmp_path)
    assert v.word == "fits-now"
    assert left(v)["taints"] == 2 and tainted(v) == {}


# ---- what the allocator does with a rule's taint (allocator_stable.go taintPreventsAllocation) ------------------

@pytest.mark.parametrize("effect, toleration, word", [
    ("NoSchedule", {"key": "gpu.example.com/unhealthy", "operator": "Exists"}, "fits-now"),
    ("NoExecute", {"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "true", "effect": "NoExecute"},
     "fits-now"),
    ("NoExecute", {"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
     "untolerated-taint"),
    ("NoExecute", None, "untolerated-taint"),
    ("None", None, "fits-now"),  # v1.35+: "No effect, the taint is purely informational"
])
def test_rule_taint_against_the_request_tolerations(tmp_path, effect, toleration, word):
    # The request's tolerations match a rule's taint like the driver's own (resourceclaim.ToleratesTaint).
    b = waiter_alone()
    add_taint_rule(b, "drain-all", {"driver": CLASS}, taint={**UNHEALTHY, "effect": effect})
    if toleration:
        b.request["tolerations"] = [toleration]
    v = judge(b, tmp_path)
    assert v.word == word
    assert left(v)["taints"] == (0 if word == "untolerated-taint" else 2)


# ---- v1alpha3 of v1.33/v1.34: deviceClassName and CEL selectors -------------------------------------------------

def alpha(b: DraBundle, name: str, *, device_class: str | None = CLASS, cel: list[str] = ()) -> None:
    selector: dict = {"selectors": [{"cel": {"expression": e}} for e in cel]}
    if device_class is not None:
        selector["deviceClassName"] = device_class
    add_taint_rule(b, name, selector, api_version="resource.k8s.io/v1alpha3")


@pytest.mark.parametrize("device_class, cel, tainted_devices", [
    (CLASS, ['device.attributes["gpu.example.com"].index == 0'], {GPU0}),  # class selectors, then the rule's
    (CLASS, ['device.attributes["gpu.example.com"].model == "h100"'], {GPU0, GPU1}),
    ("no-such-class", [], set()),  # "DeviceTaintRule does not apply, DeviceClass does not exist"
    (None, ['device.attributes["gpu.example.com"].productName == "x"'], set()),  # runtime error: `continue devices`
], ids=["cel-one", "cel-both", "class-missing", "cel-runtime-error"])
def test_v1alpha3_rule_by_device_class_and_cel(tmp_path, device_class, cel, tainted_devices):
    b = waiter_alone()
    alpha(b, "by-cel", device_class=device_class, cel=cel)
    v = judge(b, tmp_path)
    assert set(tainted(v)) == tainted_devices
    assert v.word == ("untolerated-taint" if tainted_devices == {GPU0, GPU1} else "fits-now")
    if tainted_devices == {GPU0}:
        assert devices_on(v)["requests"][0]["chosen"] == [GPU1]


def test_v1alpha3_rule_whose_cel_cannot_be_evaluated_is_unclassified_naming_it(tmp_path):
    # The library cannot evaluate cel.bind: whether the rule taints gpu-0/gpu-1 is unknown, so neither is counted
    # usable and the pod does not "fit" on a guess.
    expression = 'cel.bind(x, device.attributes["gpu.example.com"].index, x == 0)'
    b = waiter_alone()
    alpha(b, "by-bind", cel=[expression])
    v = judge(b, tmp_path)
    assert v.word == "unclassified"
    assert "cannot be evaluated" in v.reason and expression in v.reason
    assert "DeviceTaintRule by-bind (devicetaintrules.json $.items[0])" in v.reason


@pytest.mark.parametrize("name, needle", [
    ("huge", "over the 10240 Kubernetes allows"),
    ("nested-2000-deep", "brackets nest deeper than 50"),
    ("macro-on-huge-list", "is nested inside another one"),
])
def test_hostile_cel_in_a_rule_is_refused_with_a_clear_message(tmp_path, name, needle):
    # The bounds of model/dra/cel_limits.py hold for a rule's selectors too (the tracker compiles them with the
    # same CEL environment, k8s.io/dynamic-resource-allocation/cel).
    from hostile.corpus import DRA_HOSTILE_CEL
    expression = DRA_HOSTILE_CEL[name]
    b = waiter_alone()
    alpha(b, "hostile", cel=[expression])
    proc = run_cli("why", b.write(tmp_path), WAITER, "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.startswith("lab/waiter: unclassified")
    assert needle in proc.stdout and "DeviceTaintRule hostile" in proc.stdout
    assert len(proc.stdout) < 20_000


# ---- a rule that cannot be read: a finding, and unknown taints rather than none ---------------------------------

LEFT_OUT = object()


@pytest.mark.parametrize("key, value", [
    ("key", LEFT_OUT),
    # k8s.io/api resource types.go DeviceTaint: `effect` is required (no omitempty: "Valid effects are None,
    # NoSchedule and NoExecute"), `value` a string. A rule without one is no harmless taint with effect "" but an
    # unreadable one, for validate (schema) and for the engine alike.
    ("effect", LEFT_OUT),
    ("effect", ""),
    ("value", 0),
    ("value", None),
], ids=["no-key", "no-effect", "empty-effect", "value-0", "value-null"])
def test_unreadable_rule_is_a_finding_and_its_devices_taints_are_unknown(tmp_path, key, value):
    b = waiter_alone()
    taint = add_taint_rule(b, "broken", {"driver": CLASS})["spec"]["taint"]
    if value is LEFT_OUT:
        del taint[key]
    else:
        taint[key] = value
    root = b.write(tmp_path)
    proc = run_cli("validate", root)
    assert proc.returncode == 1
    assert "devicetaintrules.json: $.items[0].spec.taint" in proc.stdout + proc.stderr
    v = verdict(root, WAITER)
    assert v.word == "unclassified"
    assert "DeviceTaintRule broken (devicetaintrules.json $.items[0]): it is unreadable" in v.reason
    assert f"$.items[0].spec.taint.{key}" in v.reason
    assert cli_words(root, status=2) == [("lab/waiter", "unclassified")]


def test_unreadable_rule_for_another_driver_leaves_these_devices_known(tmp_path):
    # What can still be read of the rule (its driver) says it cannot touch gpu.example.com devices.
    b = waiter_alone()
    rule = add_taint_rule(b, "broken-elsewhere", {"driver": "other.example.com"})
    rule["spec"]["taint"] = "NoSchedule"
    v = judge(b, tmp_path)
    assert v.word == "fits-now"


# ---- unknown taints only where they could matter (review fixes) -------------------------------------------------

BIND = 'cel.bind(x, device.attributes["gpu.example.com"].index, x == 0)'


def unknown_rule(b: DraBundle, kind: str) -> None:
    """A rule whose devices' taints are unknown: `unevaluable` (v1alpha3 CEL the library cannot evaluate, known taint
    UNHEALTHY) or `unreadable` (no taint key: nothing of the taint is known)."""
    if kind == "unevaluable":
        alpha(b, "by-bind", cel=[BIND])
    else:
        del add_taint_rule(b, "broken", {"driver": CLASS})["spec"]["taint"]["key"]


@pytest.mark.parametrize("kind, toleration, word", [
    ("unevaluable", {"key": "gpu.example.com/unhealthy", "operator": "Exists"}, "fits-now"),
    ("unevaluable", {"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
     "fits-now"),
    ("unevaluable", {"operator": "Exists"}, "fits-now"),
    ("unreadable", {"operator": "Exists"}, "fits-now"),
    ("unevaluable", {"key": "gpu.example.com/other", "operator": "Exists"}, "unclassified"),
    ("unevaluable", {"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute"}, "unclassified"),
    ("unreadable", {"key": "gpu.example.com/unhealthy", "operator": "Exists"}, "unclassified"),  # its key may differ
    ("unreadable", {"operator": "Exists", "effect": "NoSchedule"}, "unclassified"),  # its effect may be NoExecute
])
def test_unknown_rule_counts_only_when_its_taint_may_be_untolerated(tmp_path, kind, toleration, word):
    # allocator_stable.go taintPreventsAllocation: a taint a toleration of the request tolerates never blocks
    # (resourceclaim.ToleratesTaint). Whether the rule taints gpu-0/gpu-1 is unknown, but when its taint (known, or
    # anything at all for an unreadable rule) is tolerated either way, the pod fits; otherwise it is unclassified.
    b = waiter_alone()
    unknown_rule(b, kind)
    b.request["tolerations"] = [toleration]
    v = judge(b, tmp_path)
    assert v.word == word
    if word == "fits-now":
        assert left(v)["taints"] == 2
    else:
        assert ("by-bind" if kind == "unevaluable" else "broken") in v.reason


@pytest.mark.parametrize("kind", ["unevaluable", "unreadable"])
def test_unknown_rule_does_not_hide_an_earlier_step_of_another_request(tmp_path, kind):
    # The allocator removes devices by class, then selectors, then taints (allocator_stable.go allocateOne ->
    # isSelectable before taintPreventsAllocation): a request no device's selectors match fails before taints,
    # which no rule can explain, whatever the rule would add.
    b = waiter_alone()
    requests = b.template()["spec"]["spec"]["devices"]["requests"]
    requests.append({"name": "odd", "exactly": {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1,
                     "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].index == 7'}}]}})
    assert judge(b, tmp_path / "before").word == "device-selector-mismatch"
    unknown_rule(b, kind)
    v = judge(b, tmp_path / "rule")
    assert v.word == "device-selector-mismatch"
    assert "odd" in v.reason


# ---- many rules: indexed by (driver, pool, device), same taints as rule-by-rule (tracker.go applyPatches) ---------

def test_indexed_rules_give_the_taints_of_the_rule_by_rule_loop():
    # applyPatches checks every rule against every slice; taint_rules.apply_rules looks up only the rules whose
    # driver/pool/device can match a device. 200 mixed rules x 500 devices: the same taints, in the same order
    # (rule order, after the slice's own), and the same unknowns, as the straightforward loop below.
    import random
    from types import SimpleNamespace

    from analyzer.model.dra.device_search import IndexedDevice
    from analyzer.model.dra.taint_rules import _selects, apply_rules
    from analyzer.model.dra.views import TaintsUnknown
    from analyzer.model.dra.views import DeviceRef, DeviceTaint, Problem, TaintRule
    from analyzer.model.matching import Taint

    rng = random.Random(7)
    drivers, pools, names = ["a.example.com", "b.example.com"], ["p0", "p1", "p2"], [f"gpu-{i}" for i in range(90)]

    def devices() -> list[IndexedDevice]:
        return [IndexedDevice(index=i, ref=DeviceRef(driver=rng.choice(drivers), pool=rng.choice(pools),
                                                     device=rng.choice(names)),
                              raw={}, taints=(Taint("own", "", "NoSchedule"),) if i % 7 == 0 else (), unmodelled=None)
                for i in range(500)]

    rules = []
    for n in range(200):
        pick = lambda options: rng.choice([None, *options])  # noqa: E731
        kind = rng.random()
        common = dict(name=f"r{n}", driver=pick(drivers), pool=pick(pools), device=pick(names[:20]), source=f"$[{n}]")
        if kind < 0.05:
            rules.append(TaintRule(taint=DeviceTaint(f"k{n}", "", "NoSchedule", rule=f"r{n}"), selected=False, name=f"r{n}",
                                   source=f"$[{n}]"))
        elif kind < 0.1:
            rules.append(TaintRule(taint=None, problem=Problem(file="f", path=f"$[{n}]", message="bad"), **common))
        elif kind < 0.3:
            rules.append(TaintRule(taint=DeviceTaint(f"k{n}", "v", "NoExecute", rule=f"r{n}"),
                                   selectors=(f"odd-{n % 3}",), **common))
        else:
            rules.append(TaintRule(taint=DeviceTaint(f"k{n}", "", "NoSchedule", rule=f"r{n}"), **common))

    def evaluate(expression: str, index: int):  # a CEL stand-in: even devices match, every 11th cannot be evaluated
        if index % 11 == 0 and expression == "odd-0":
            return SimpleNamespace(matched=False, unevaluable=expression, why="cannot")
        return SimpleNamespace(matched=index % 2 == 0, unevaluable=None, why=None)

    seed_devices = devices()
    fast = [IndexedDevice(index=d.index, ref=d.ref, raw={}, taints=d.taints, unmodelled=None) for d in seed_devices]
    apply_rules(rules, fast, classes={}, bad_classes={}, class_matches=evaluate, evaluate=evaluate)

    naive = [IndexedDevice(index=d.index, ref=d.ref, raw={}, taints=d.taints, unmodelled=None) for d in seed_devices]
    for rule in rules:  # the rule-by-rule loop applyPatches runs
        for dev in naive:
            if rule.selected and not ((rule.driver in (None, dev.ref.driver)) and (rule.pool in (None, dev.ref.pool))
                                      and (rule.device in (None, dev.ref.device))):
                continue
            if rule.taint is None:
                dev.taints_unknown += (TaintsUnknown(rule=rule.label(), why=f"it is unreadable: {rule.problem}"),)
                continue
            verdict = _selects(rule, dev.index, classes={}, bad_classes={}, class_matches=evaluate, evaluate=evaluate)
            if isinstance(verdict, TaintsUnknown):
                dev.taints_unknown += (verdict,)
            elif verdict:
                dev.taints += (rule.taint,)

    assert [(d.taints, d.taints_unknown) for d in fast] == [(d.taints, d.taints_unknown) for d in naive]
    assert sum(len(d.taints) for d in naive) > 2_000 and sum(len(d.taints_unknown) for d in naive) > 20  # not vacuous


def test_300_rules_on_every_device_show_three_taints_per_device_and_a_count(tmp_path):
    # Each rule adds one taint to every device (tracker.go applyPatches appends them all): 300 rules, 300 taints on
    # gpu-0 and gpu-1. The answer names the first three (rule order) and counts the rest, in every output.
    b = waiter_alone()
    for n in range(300):
        add_taint_rule(b, f"drain-{n:03}", {}, taint={**UNHEALTHY, "key": f"gpu.example.com/drain-{n:03}"})
    root = b.write(tmp_path)
    first = "gpu.example.com/drain-000=true:NoSchedule (DeviceTaintRule drain-000)"
    v = verdict(root, WAITER)
    assert v.word == "untolerated-taint"
    assert first in v.reason and "drain-003" not in v.reason and "and 297 more" in v.reason
    assert len(v.reason) < 2_000
    data = json.loads(run_cli("why", root, WAITER, "-o", "json", check=True).stdout)
    shown = devices_on(v)["requests"][0]["tainted"]
    assert [len(t["taints"]) for t in shown] == [3, 3] and [t["taints_more"] for t in shown] == [297, 297]
    assert len(json.dumps(data)) < 20_000
    explain = run_cli("why", root, WAITER, "--explain", check=True).stdout
    assert f"tainted: {GPU0}: {first}" in explain and "and 297 more" in explain
    assert len(explain) < 20_000
