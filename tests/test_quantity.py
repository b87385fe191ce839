"""Kubernetes quantities (apimachinery resource.Quantity), exactly: the grammar, the scheduler's
integer units (MilliValue for cpu, Value for the rest, both rounded up), and exact comparisons on
real bundles (no float rounding surprises)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import yaml

from analyzer.model.quantity import QuantityError, parse, scheduler_units
from conftest import (LAB_WORDS, bound_pod, container, copy_lab, gpu_node, lab_manifest, make_bundle, plain_pod, quota,
                      run_cli, verdict, words_of, write_manifest)

GOOD = [
    ("500m", Fraction(1, 2)),
    ("4", Fraction(4)),
    ("1Ki", Fraction(1024)),
    ("1e3", Fraction(1000)),
    ("1E3", Fraction(1000)),
    ("0.5", Fraction(1, 2)),
    (".5", Fraction(1, 2)),
    ("1.5Gi", Fraction(1610612736)),
    ("1G", Fraction(10**9)),
    ("1E", Fraction(10**18)),  # exa, not an exponent
    ("1Ei", Fraction(2**60)),
    ("+1", Fraction(1)),
    ("100n", Fraction(1, 10**7)),
    ("1e-1", Fraction(1, 10)),
    ("0.1", Fraction(1, 10)),
    (2, Fraction(2)),
    (0.5, Fraction(1, 2)),
]


@pytest.mark.parametrize("text, value", GOOD, ids=[str(t) for t, _ in GOOD])
def test_quantity_grammar(text, value):
    assert parse(text) == value


@pytest.mark.parametrize("text", ["four", "1.5.5Gi", "-1", "1e400", "1K", "1 Gi", "", "Gi", "1Gb", "0x10", True, None])
def test_invalid_quantities_are_rejected(text):
    with pytest.raises(QuantityError):
        parse(text)


def test_decimal_arithmetic_is_exact():
    assert parse("0.1") + parse("0.2") == parse("300m")
    assert parse(0.1) + parse(0.2) == parse("0.3")  # JSON numbers are read as the decimal they spell


@pytest.mark.parametrize("resource, text, units", [
    ("cpu", "500m", 500), ("cpu", "0.5", 500), ("cpu", "2", 2000), ("cpu", "1e3", 1_000_000),
    ("cpu", "0.0001", 1),  # MilliValue rounds up
    ("cpu", "1.0005", 1001),
    ("cpu", "100u", 1),
    ("memory", "1.5Gi", 1610612736), ("memory", "1Ki", 1024), ("memory", "1E", 10**18),
    ("memory", "500m", 1),  # Value rounds up: half a byte is a byte
    ("memory", "1.0000001k", 1001),
    ("nvidia.com/gpu", "1", 1), ("pods", "110", 110),
])
def test_scheduler_units_round_up(resource, text, units):
    assert scheduler_units(resource, text) == units


# -- exact comparisons on bundles ----------------------------------------------------------------------------

def _cpu_node(cpu):
    return gpu_node("worker-1", base="gpu-noplugin", cpu=cpu)


@pytest.mark.parametrize("running, word", [(2, "fits-now"), (3, "exhausted")])
def test_100m_pods_on_a_300m_node(tmp_path, running, word):
    # Three pods of 100m fill 300m exactly: the third fits, the fourth does not. The amounts are spelled
    # three ways (100m, 0.1, 1e-1) so float arithmetic would get it wrong.
    spellings = ["100m", "0.1", "1e-1"]
    pods = [bound_pod(f"busy-{i}", "worker-1", gpus=None, cpu=spellings[i], memory="64Mi") for i in range(running)]
    pods.append(plain_pod("web-0", cpu="100m", memory="64Mi"))
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=[_cpu_node("300m")]), "lab/web-0")
    assert v.word == word
    if word == "exhausted":
        assert v.fit.rows[0]["resources"]["cpu"] == {"allocatable": "300m", "used": "300m", "free": "0", "requested": "100m"}


def test_memory_exactly_full_fits_and_one_byte_more_does_not(tmp_path):
    node = gpu_node("worker-1", base="gpu-noplugin", memory="1.5Gi")
    pods = [bound_pod("busy", "worker-1", gpus=None, cpu="100m", memory="512Mi"),
            plain_pod("exact", cpu="100m", memory="1Gi"), plain_pod("over", cpu="100m", memory="1073741825")]
    got = words_of(make_bundle(tmp_path, pods=pods, nodes=[node]))
    assert got == {"lab/exact": "fits-now", "lab/over": "exhausted"}


def test_quota_comparison_is_exact(tmp_path):
    # used 700m + requested 0.3 == hard 1: admitted (Kubernetes refuses only used + requested > hard).
    for name, cpu, expected in (("exact", "0.3", "fits-now"), ("over", "301m", "quota-exceeded")):
        doc = plain_pod(name, namespace="team-a", cpu=cpu)
        manifest = tmp_path / f"{name}.yaml"
        manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod",
                                            "metadata": {"name": name, "namespace": "team-a"},
                                            "spec": {"containers": doc["spec"]["containers"]}}))
        root = make_bundle(tmp_path, name=f"b-{name}", pods=[], nodes=[_cpu_node("32")],
                           quotas=[quota("cpu-quota", "team-a", {"requests.cpu": "1"}, {"requests.cpu": "700m"})],
                           runtimeclasses=[])
        assert words_of(root, manifests=[manifest])[f"team-a/{name}"] == expected


@pytest.mark.parametrize("bad", ["four", "1.5.5Gi", "1e400", "1e99"])
def test_pod_with_an_invalid_quantity_is_insufficient_evidence(tmp_path, bad):
    # A pod whose spec cannot be read is not guessed at; the rest of the bundle is still answered, and the
    # command exits 2 (partly invalid).
    broken = plain_pod("broken", cpu=bad)
    fine = plain_pod("fine")
    root = make_bundle(tmp_path, pods=[broken, fine], nodes=[_cpu_node("32")])
    got = words_of(root)
    assert got == {"lab/broken": "insufficient-evidence", "lab/fine": "fits-now"}
    proc = run_cli("analyze", root, "-o", "words")
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == ["lab/broken\tinsufficient-evidence", "lab/fine\tfits-now"]
    assert "pods.json" in proc.stderr


def test_bound_pod_with_invalid_quantity_hides_its_node_usage(tmp_path):
    # A bound pod whose requests cannot be read makes that node's usage unknown: no guess that it fits.
    busy = bound_pod("busy", "worker-1", gpus=None, cpu="four")
    root = make_bundle(tmp_path, pods=[busy, plain_pod("web-0")], nodes=[_cpu_node("32")])
    v = verdict(root, "lab/web-0")
    assert v.word == "insufficient-evidence"
    assert v.evidence["missing"] == "pods.json"


def test_pod_request_is_rounded_after_summing_containers(tmp_path):
    pending = plain_pod("sidecars", cpu="0.0005", memory="64Mi")
    pending["spec"]["containers"].append(container("agent", requests={"cpu": "0.0005", "memory": "64Mi"}))
    busy = bound_pod("busy", "worker-1", gpus=None, cpu="1999m", memory="64Mi")
    v = verdict(make_bundle(tmp_path, pods=[pending, busy], nodes=[_cpu_node("2")]), "lab/sidecars")
    assert v.evidence["requests"]["cpu"] == "1m"
    assert v.word == "fits-now"


@pytest.mark.parametrize("where", ["manifest", "quota"])
def test_invalid_quantity_in_a_manifest_or_quota_does_not_abort_the_analysis(tmp_path, where):
    doc = lab_manifest(41)
    edit = {}
    if where == "manifest":
        doc["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1e400"
    else:
        def huge(items):
            items[0]["spec"]["hard"]["requests.cpu"] = "1e400"
            items[0]["status"]["hard"]["requests.cpu"] = "1e400"
            items[0]["status"]["used"]["requests.cpu"] = "0"
            return items
        edit = {"resourcequotas": huge}
    root = copy_lab(tmp_path, edit=edit)
    proc = run_cli("analyze", root, "-o", "words", "--manifest", write_manifest(tmp_path / "m", doc))
    assert "internal error" not in proc.stderr
    got = dict(line.split("\t") for line in proc.stdout.splitlines())
    assert {k: got.get(k) for k in LAB_WORDS} == LAB_WORDS
    assert got["quota-lab/quota-exceeded"] == "insufficient-evidence"
