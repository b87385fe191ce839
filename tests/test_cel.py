"""CEL device selectors (analyzer/model/dra/cel.py, cel_devices.py, cel_functions.py, cel_limits.py), on
the devices and DeviceClass of the real dra-exhausted-v1.36 recording (tests/data/recordings) (cases change only what they need).

Kubernetes rules are cited from k8s.io/dynamic-resource-allocation/cel/compile.go (the `device`
variable, DeviceMatches), k8s.io/apiserver/pkg/cel/library/quantity.go and semverlib.go (the
functions and their documented examples), and k8s.io/api/resource/v1/types.go (the limits)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap

import pytest

from analyzer.model.dra.cel import Match, Selectors, Unevaluable
from analyzer.model.dra.cel_devices import Device, DeviceError, Quantity, Version, device_from_slice
from analyzer.model.dra.cel_limits import MAX_ATTRIBUTES_AND_CAPACITIES, MAX_EXPRESSION_BYTES
from dra_fixtures import exhausted
from helpers import REPO

RECORDED = exhausted()  # the recording as it is (tests/dra_fixtures.py)
SLICE = RECORDED.slice
DEVICE_CLASS = RECORDED.device_class
DRIVER = SLICE["spec"]["driver"]  # gpu.example.com
RAW_GPU0 = SLICE["spec"]["devices"][0]  # index 0, model h100, uuid GPU-dx1-h100-0, memory 80Gi
CLASS_SELECTOR = DEVICE_CLASS["spec"]["selectors"][0]["cel"]["expression"]
ATTR = f'device.attributes["{DRIVER}"]'
MEMORY = f'device.capacity["{DRIVER}"].memory'


def real_devices() -> list[Device]:
    return [device_from_slice(DRIVER, raw) for raw in SLICE["spec"]["devices"]]


def gpu0(**attributes: dict) -> Device:
    """gpu-0 of the real slice, with attributes added or replaced (raw slice form: {"string": ...})."""
    raw = copy.deepcopy(RAW_GPU0)
    raw["attributes"].update(attributes)
    return device_from_slice(DRIVER, raw)


# The real slice's gpu-0 plus one attribute of each remaining kind, bare and qualified names.
RICH = gpu0(healthy={"bool": True}, driverVersion={"version": "550.54.15"},
            **{"gpu.example.com/family": {"string": "hopper"}, "topology.example.com/rack": {"string": "r7"}})


def judge(expression: str, device: Device = RICH) -> Match | Unevaluable:
    return Selectors().evaluate(expression, device)


def matched(expression: str, device: Device = RICH) -> bool:
    result = judge(expression, device)
    assert isinstance(result, Match) and result.error is None, result
    return result.matched


# --- the device as compile.go builds it ---------------------------------------------------------


def test_the_real_deviceclass_selector_matches_both_real_devices():
    assert CLASS_SELECTOR == 'device.driver == "gpu.example.com"'
    selectors = Selectors()
    assert [selectors.evaluate(CLASS_SELECTOR, d) for d in real_devices()] == [Match(matched=True)] * 2


def test_the_class_selector_does_not_match_another_drivers_device():
    other = device_from_slice("gpu.other.com", RAW_GPU0)
    assert judge(CLASS_SELECTOR, other) == Match(matched=False)


def test_device_from_slice_keeps_the_real_values():
    device = real_devices()[1]
    assert device.name == "gpu-1" and device.driver == DRIVER
    assert device.attributes == {DRIVER: {"index": 1, "model": "h100", "uuid": "GPU-dx1-h100-1"}}
    assert device.capacity == {DRIVER: {"memory": Quantity(text="80Gi")}}


def test_bare_names_belong_to_the_driver_domain_qualified_names_to_theirs():
    # compile.go parseQualifiedName: the domain is before the first "/", else the driver name.
    assert RICH.attributes[DRIVER]["family"] == "hopper"  # "gpu.example.com/family" joins the bare names
    assert RICH.attributes["topology.example.com"] == {"rack": "r7"}
    assert RICH.attributes[DRIVER]["driverVersion"] == Version(text="550.54.15")
    assert matched(f'{ATTR}.family == "hopper" && {ATTR}.model == "h100"')
    assert matched('device.attributes["topology.example.com"].rack == "r7"')


def test_v1beta1_devices_keep_attributes_and_capacity_under_basic():
    # resource.k8s.io/v1beta1 Device: {name, basic: {attributes, capacity}}; v1 and v1beta2 flattened it.
    beta1 = {"name": RAW_GPU0["name"], "basic": {"attributes": RAW_GPU0["attributes"],
                                                 "capacity": RAW_GPU0["capacity"]}}
    old, new = device_from_slice(DRIVER, beta1), real_devices()[0]
    assert (old.attributes, old.capacity, old.key) == (new.attributes, new.capacity, new.key)
    assert judge(f"{MEMORY}.compareTo(quantity(\"80Gi\")) >= 0", old) == Match(matched=True)


@pytest.mark.parametrize("raw, path", [
    ({"name": "g", "attributes": {"model": {"string": "h100", "int": 1}}}, "attributes.model"),
    ({"name": "g", "attributes": {"model": {"float": 1.5}}}, "attributes.model"),
    ({"name": "g", "attributes": {"index": {"int": True}}}, "attributes.index"),
    ({"name": "g", "attributes": {"model": {"string": "x" * 65}}}, "attributes.model"),
    ({"name": "g", "capacity": {"memory": {"amount": "80Gi"}}}, "capacity.memory.value"),
    ({"name": "g", "basic": {"attributes": {"a": 1}}}, "basic.attributes.a"),
    ({"attributes": {}}, "name"),
    ({"name": "g", "attributes": {f"a{i}": {"int": i} for i in range(MAX_ATTRIBUTES_AND_CAPACITIES + 1)}},
     "attributes"),
])
def test_a_device_kubernetes_validation_would_refuse_is_named_by_its_path(raw, path):
    # k8s.io/api/resource/v1: one value per attribute, DeviceAttributeMaxValueLength 64,
    # ResourceSliceMaxAttributesAndCapacitiesPerDevice 32.
    with pytest.raises(DeviceError) as info:
        device_from_slice(DRIVER, raw)
    assert info.value.path == path


# --- attributes: string, int, bool, version -----------------------------------------------------


@pytest.mark.parametrize("expression, expected", [
    (f'{ATTR}.model == "h100"', True),
    (f'{ATTR}.model == "a100"', False),
    (f'{ATTR}["model"] == "h100"', True),
    (f'{ATTR}.index == 0', True),
    (f'{ATTR}.index > 0', False),
    (f'{ATTR}.healthy', True),
    (f'!{ATTR}.healthy', False),
    (f'{ATTR}.uuid.startsWith("GPU-dx1-")', True),
    (f'{ATTR}.uuid.endsWith("-1")', False),
    (f'{ATTR}.uuid.contains("h100")', True),
    (f'{ATTR}.uuid.matches("^GPU-[a-z0-9]+-h100-[0-9]+$")', True),
    (f'{ATTR}.model in ["a100", "h100"]', True),
    (f'has({ATTR}.model) && !has({ATTR}.productName)', True),
    (f'{ATTR}.exists(name, name == "uuid")', True),
    (f'{ATTR}.driverVersion.isGreaterThan(semver("550.0.0"))', True),
    (f'{ATTR}.driverVersion.compareTo(semver("550.54.15")) == 0', True),
    (f'{ATTR}.driverVersion.isLessThan(semver("535.104.5"))', False),
    (f'{ATTR}.driverVersion.major() == 550 && {ATTR}.driverVersion.patch() == 15', True),
])
def test_attribute_selectors(expression, expected):
    assert matched(expression) is expected


def test_bool_true_and_int_1_are_different_attribute_values():
    # getAttributeValue keeps the kind: a cache keyed on Python equality would confuse True with 1.
    selectors = Selectors()
    flag_bool, flag_int = gpu0(flag={"bool": True}), gpu0(flag={"int": 1})
    expression = f"{ATTR}.flag == true"
    assert selectors.evaluate(expression, flag_bool) == Match(matched=True)
    assert selectors.evaluate(expression, flag_int).matched is False


# --- capacity: exact quantities -----------------------------------------------------------------


@pytest.mark.parametrize("expression, expected", [
    (f'{MEMORY}.compareTo(quantity("80Gi")) >= 0', True),  # the selector
    (f'{MEMORY}.compareTo(quantity("81Gi")) >= 0', False),
    (f'{MEMORY}.compareTo(quantity("85899345921")) >= 0', False),  # one byte more than 80Gi: exact
    (f'{MEMORY}.compareTo(quantity("85899345920")) == 0', True),
    (f'{MEMORY} == quantity("81920Mi")', True),
    (f'{MEMORY}.isGreaterThan(quantity("40Gi"))', True),
    (f'{MEMORY}.isGreaterThan(quantity("80Gi"))', False),
    (f'{MEMORY}.isLessThan(quantity("86G"))', True),  # 80Gi = 85.9G
    (f'{MEMORY}.asInteger() == 85899345920', True),
    (f'{MEMORY}.sub(quantity("16Gi")).compareTo(quantity("64Gi")) == 0', True),
])
def test_capacity_selectors(expression, expected):
    assert matched(expression) is expected


@pytest.mark.parametrize("expression", [
    # The documented examples of k8s.io/apiserver/pkg/cel/library/quantity.go, each must be true.
    'quantity("200M").compareTo(quantity("0.2G")) == 0',
    'quantity("50M").compareTo(quantity("50Mi")) == -1',
    'quantity("50Mi").compareTo(quantity("50M")) == 1',
    'quantity("150Mi").isGreaterThan(quantity("100Mi"))',
    '!quantity("50Mi").isGreaterThan(quantity("100Mi"))',
    'quantity("50M").isLessThan(quantity("100M"))',
    'quantity("50000000G").isInteger()',
    'quantity("50k").isInteger()',
    '!quantity("9999999999999999999999999999999999999G").isInteger()',
    'quantity("50k").asInteger() == 50000',
    'quantity("50k").sub(20000).asApproximateFloat() == 30000.0',
    'quantity("50k").add(20) == quantity("50020")',
    'quantity("50k").sub(20000) == quantity("30k")',
    'quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")',
    'isQuantity("1.3Gi") && !isQuantity("1,3G") && !isQuantity("200K")',
    # The grammar of resource.Quantity, exactly.
    'quantity("500m").isLessThan(quantity("1")) && quantity("500m").asApproximateFloat() == 0.5',
    'quantity("1e3") == quantity("1k") && quantity("1Ki") == quantity("1024")',
    'quantity("1").sub(quantity("2")).sign() == -1 && quantity("0").sign() == 0',
])
def test_kubernetes_quantity_library(expression):
    assert matched(expression) is True


@pytest.mark.parametrize("expression", [
    # The documented examples of k8s.io/apiserver/pkg/cel/library/semverlib.go.
    'semver("1.2.3").compareTo(semver("1.2.3")) == 0',
    'semver("1.2.3").compareTo(semver("2.0.0")) == -1',
    'semver("1.2.3").compareTo(semver("0.1.2")) == 1',
    'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
    'isSemver("1.0.0") && !isSemver("hello") && !isSemver("v1.0")',
    'isSemver("v1.0", true) && semver("v1.0.0", true) == semver("1.0.0")',
    'semver("1.0", true) == semver("1.0.0") && semver("01.01.01", true) == semver("1.1.1")',
    # semver.org precedence, not string order.
    'semver("1.10.0").isGreaterThan(semver("1.9.0"))',
    'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))',
])
def test_kubernetes_semver_library(expression):
    assert matched(expression) is True


@pytest.mark.parametrize("expression", [
    '"H100".lowerAscii() == "h100" && "h100".upperAscii() == "H100"',
    '"a,b,c".split(",") == ["a", "b", "c"] && ["a", "b"].join("-") == "a-b"',
    '"GPU-dx1".indexOf("-") == 3 && "GPU-dx1".replace("-", "_") == "GPU_dx1"',
    '"  h100 ".trim() == "h100" && "h100".substring(1, 3) == "10" && "h100".charAt(0) == "h"',
    'optional.of(1).hasValue() && optional.none().orValue(2) == 2',
])
def test_string_and_optional_extensions(expression):
    assert matched(expression) is True


# --- runtime errors: no match, with the scheduler's words ---------------------------------------


def test_a_selector_naming_an_attribute_the_device_lacks_is_no_match_with_the_error():
    # dra.md: the real scheduler says "selector #0: CEL runtime error: no such key: productName".
    assert judge(f'{ATTR}.productName == "H100"') == Match(matched=False, error="no such key: productName")


def test_a_domain_the_device_lacks_is_an_empty_map():
    # compile.go newStringInterfaceMapWithDefault: an unknown domain is an empty map, so the error
    # names the attribute, and has() on it is simply false.
    assert judge('device.attributes["nvidia.com"].productName == "x"') == Match(
        matched=False, error="no such key: productName")
    assert judge('device.capacity["nvidia.com"].memory.isGreaterThan(quantity("1"))') == Match(
        matched=False, error="no such key: memory")
    assert judge('!has(device.attributes["nvidia.com"].productName)') == Match(matched=True)


@pytest.mark.parametrize("expression, error", [
    (f'{ATTR}.model > 5', "no such overload"),
    (f'{ATTR}.index + "a" == "0a"', "no such overload"),
    (f'{MEMORY}.compareTo(5) == 0', "no such overload"),
    (f'{MEMORY}.compareTo(semver("1.0.0")) == 0', "no such overload"),
    (f'{MEMORY} > quantity("1")', "no such overload"),
    ('quantity(5).sign() == 1', "no such overload"),
    ('quantity("9999999999999999999999999999999999999G").asInteger() > 0', "cannot convert value to integer"),
    ('semver("1.2").major() == 1', "1.2 is not valid SemVer string"),
    ('1 / 0 == 1', "division by zero"),
])
def test_type_errors_and_bad_values_are_no_match_with_the_error(expression, error):
    result = judge(expression)
    assert isinstance(result, Match) and result.matched is False
    assert result.error == error


def test_a_bad_quantity_string_is_no_match_naming_the_value():
    result = judge(f'{MEMORY}.compareTo(quantity("80GB")) >= 0')
    assert isinstance(result, Match) and not result.matched and "'80GB'" in result.error


@pytest.mark.parametrize("expression, kind", [
    (f"{ATTR}.model", "string"),
    (f"{ATTR}.index", "int"),
    (MEMORY, "Quantity"),
    ("[1, 2]", "list"),
])
def test_a_result_that_is_not_bool_is_no_match_with_the_error(expression, kind):
    # compile.go DeviceMatches: "CEL result of type %s could not be converted to bool".
    assert judge(expression) == Match(matched=False, error=f"CEL result of type {kind} could not be converted to bool")


def test_a_version_attribute_that_is_not_semver_fails_every_selector_on_that_device():
    # compile.go DeviceMatches converts every attribute first: "attribute X: parse semantic version: ...".
    device = gpu0(driverVersion={"version": "v550"})
    result = judge(CLASS_SELECTOR, device)
    assert isinstance(result, Match) and result.matched is False
    assert result.error.startswith(f"attribute {DRIVER}/driverVersion: parse semantic version:")


# --- unevaluable: told apart from a verdict -----------------------------------------------------


@pytest.mark.parametrize("expression, why", [
    (f'{ATTR}.?productName.orValue("") == "H100"', "unsupported syntax '.?'"),
    (f'{ATTR}[?"productName"].hasValue()', "unsupported syntax '[?'"),
    (f'cel.bind(a, {ATTR}, a.model == "h100")', "cel.bind is not supported"),
    ('device.driver.format([]) == ""', "Undefined variable or function: 'format'"),
    ('device.driver ==', "cannot compile"),
])
def test_what_the_library_cannot_evaluate_is_unevaluable_naming_the_expression(expression, why):
    result = judge(expression)
    assert isinstance(result, Unevaluable), result
    assert result.expression == expression and why in result.why


# --- hostile expressions: refused quickly, never a hang, a crash or a traceback -----------------

HOSTILE = {
    "huge": "true && " * 1300 + "true",
    "deep-parentheses": "(" * 200 + "true" + ")" * 200,
    "deep-lists": "[" * 51 + "]" * 51 + " == []",
    "deep-maps": '{"a": ' * 60 + "1" + "}" * 60 + " != {}",
    "nested-macros": "[1,2,3].all(a, [1,2,3].all(b, [1,2,3].all(c, [1,2,3].all(d, true))))",
    "chained-macros": "[1,2,3].map(a, [a, a]).map(b, b).all(c, true)",
    "macro-on-huge-list": "[" + ",".join(["1"] * 3000) + "].all(x, x + x + x + x + x + x + x > 0)",
    "string-doubling": '["' + "a" * 2000 + '"].map(s, ' + " + ".join(["s"] * 40) + ").size() > 0",
    "replace-growth": '"xxxxxxxx"' + '.replace("x", "xxxxxxxx")' * 12 + ' != ""',
    "split-explosion": '"' + "," * 6000 + '".split(",").size() > 0',
    "regex-blowup": '"aaaa".matches("(a{1000}){1000}")',
    "ternary-recursion": "true ? 1 : " * 900 + "1",
    "unary-recursion": "!" * 9000 + "true",
    "member-recursion": "device" + ".x" * 4000,
    "unterminated": '"abc',
    "lone-surrogate": '"\ud800" == ""',
}

HOSTILE_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from analyzer.model.dra.cel import Selectors
    from analyzer.model.dra.cel_devices import device_from_slice
    cases, raw = json.loads(sys.stdin.read())
    device = device_from_slice("gpu.example.com", raw)
    selectors = Selectors()
    out = {}
    for name, expression in cases.items():
        r = selectors.evaluate(expression, device)
        out[name] = {"kind": type(r).__name__, "text": getattr(r, "why", None) or getattr(r, "error", None) or ""}
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def hostile_results() -> dict[str, dict[str, str]]:
    # One child process: a crash or a hang cannot take the test run with it, and stderr must stay empty.
    done = subprocess.run([sys.executable, "-c", HOSTILE_SCRIPT], input=json.dumps([HOSTILE, RAW_GPU0]),
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""  # no traceback, no library chatter
    return json.loads(done.stdout)


@pytest.mark.parametrize("name, needle", [
    ("huge", f"over the {MAX_EXPRESSION_BYTES} Kubernetes allows"),
    ("deep-parentheses", "brackets nest deeper than 50"),
    ("deep-lists", "brackets nest deeper than 50"),
    ("deep-maps", "brackets nest deeper than 50"),
    ("nested-macros", "is nested inside another one"),
    ("chained-macros", "applied to the result of another macro"),
    ("macro-on-huge-list", "estimated work"),
    ("string-doubling", "uses its variable s 40 times"),
    ("ternary-recursion", "cannot compile"),
    ("unterminated", "cannot compile"),
    ("lone-surrogate", "cannot compile"),
])
def test_hostile_expressions_are_refused_with_a_clear_message(hostile_results, name, needle):
    assert hostile_results[name]["kind"] == "Unevaluable"
    assert needle in hostile_results[name]["text"]


@pytest.mark.parametrize("name, needle", [
    ("replace-growth", "replace: result longer than"),
    ("split-explosion", "split: more than 1000 pieces"),
    ("regex-blowup", "exceeds size limit"),
    ("member-recursion", "no such key: x"),
])
def test_hostile_work_inside_functions_is_cut_short_as_a_runtime_error(hostile_results, name, needle):
    assert hostile_results[name]["kind"] == "Match" and needle in hostile_results[name]["text"]


def test_long_flat_expressions_within_the_limits_still_evaluate(hostile_results):
    assert hostile_results["unary-recursion"] == {"kind": "Match", "text": ""}


def test_the_bundle_work_budget_stops_a_costly_selector_repeated_over_many_devices():
    expression = f"{ATTR}.exists(k, k.size() > 100) || {ATTR}.uuid.startsWith(\"GPU\")"
    selectors = Selectors(work_budget=3000)
    results = [selectors.evaluate(expression, gpu0(uuid={"string": f"GPU-{i}"})) for i in range(200)]
    assert results[0] == Match(matched=True)
    assert isinstance(results[-1], Unevaluable) and "work budget" in results[-1].why
    assert selectors.stats.work <= 3000


# --- caches: compile once per expression, evaluate once per (expression, what it reads) ---------


def test_ten_thousand_identical_devices_compile_and_evaluate_once():
    selectors = Selectors()
    raw = copy.deepcopy(RAW_GPU0)
    devices = [device_from_slice(DRIVER, dict(raw, name=f"gpu-{i}")) for i in range(10_000)]
    expression = f'{MEMORY}.compareTo(quantity("80Gi")) >= 0'
    assert all(selectors.evaluate(expression, d) == Match(matched=True) for d in devices)
    stats = selectors.stats
    assert (stats.compiles, stats.evaluations, stats.hits) == (1, 1, 9_999)


def test_devices_differing_only_in_what_a_selector_does_not_read_share_its_answer():
    selectors = Selectors()
    devices = [gpu0(uuid={"string": f"GPU-{i}"}, index={"int": i % 8}) for i in range(1_000)]
    for d in devices:
        selectors.evaluate(f'{ATTR}.model == "h100"', d)  # reads model only
        selectors.evaluate(f"{ATTR}.index < 4", d)  # reads index: 8 distinct values
        selectors.evaluate(f"{ATTR}.exists(k, k == \"uuid\")", d)  # reads the whole map
    stats = selectors.stats
    assert stats.compiles == 3
    assert stats.evaluations == 1 + 8 + 1_000
    assert stats.hits == 3 * 1_000 - stats.evaluations


def test_a_refused_expression_is_compiled_once_and_never_run():
    selectors = Selectors()
    expression = "(" * 60 + "true" + ")" * 60
    results = {selectors.evaluate(expression, d) for d in real_devices()}
    assert len(results) == 1 and isinstance(results.pop(), Unevaluable)
    assert (selectors.stats.compiles, selectors.stats.evaluations) == (1, 0)


@pytest.mark.parametrize("expression", [["device.driver == 'x'"], {"cel": "true"}, 42, None])
def test_an_expression_that_is_not_a_string_is_unevaluable_not_a_crash(expression):
    result = judge(expression)
    assert isinstance(result, Unevaluable) and result.why == "a CEL expression is a string"
