"""`gpu-triage serve` serves every kind of the one catalog: the real kubectl lists each of them by its qualified
name, with the names the bundle file holds (a kind served nowhere else would crash the handler or be unknown)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.bundle.catalog import KINDS
from analyzer.replay.kinds import RESOURCES as SERVED
from analyzer.replay.tables import TABLES
from admission_fixtures import binding, container_limit, endpointslice, istio_injector, kyverno, limitrange, policy
from helpers import RECORDINGS
from test_replay import serving  # the one way to run serve (the kubectl fixture is conftest's)

# Real objects of every kind: the DRA recording first, then the lab's and the autoscaler recording's (its
# ReplicaSets, Jobs, StatefulSets and DaemonSets).
SOURCES = tuple(RECORDINGS / name for name in ("dra-exhausted-v1.36", "lab-seven-states-v1.36", "ca-scale-up-in-flight-v1.36",
                                               "quota-exhausted-now-v1.36"))


def _rule() -> dict:
    """A DeviceTaintRule as a v1.36 server returns it (resource.k8s.io/v1beta2 DeviceTaintRule, metadata as the
    server fills it); no real recording has one."""
    return {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
            "metadata": {"name": "unhealthy-gpu-1", "uid": "6f1c2d9e-0d4b-4a51-9d55-1f4e8f1b2a33",
                         "resourceVersion": "301", "generation": 1, "creationTimestamp": "2026-11-29T17:40:00Z"},
            "spec": {"deviceSelector": {"driver": "gpu.example.com", "device": "gpu-1"},
                     "taint": {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoSchedule",
                               "timeAdded": "2026-11-29T17:40:00Z"}},
            "status": {}}


def _every_kind(tmp: Path) -> Path:
    root = tmp / "every-kind"
    root.mkdir()
    for kind in KINDS:
        files = [source / kind.file for source in SOURCES if (source / kind.file).is_file()]
        full = [f for f in files if json.loads(f.read_text())["items"]]
        if full or files:
            shutil.copy((full or files)[0], root / kind.file)  # no recording has a StatefulSet: served empty
        else:  # nor any Volcano object: an empty List, as kubectl writes one, is served as such
            (root / kind.file).write_text(json.dumps({"apiVersion": "v1", "items": [], "kind": "List",
                                                      "metadata": {"resourceVersion": ""}}))
    shutil.copy(SOURCES[0] / "version.json", root / "version.json")
    (root / "devicetaintrules.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_rule()]}))
    # No recording has admission objects: the tests' objects shaped after Kyverno's, Istio's and a LimitRange.
    admission = {"limitranges": [limitrange("gpu-limits", "lab", container_limit(max={"nvidia.com/gpu": "1"}))],
                 "validatingwebhookconfigurations": [kyverno()], "mutatingwebhookconfigurations": [istio_injector()],
                 "validatingadmissionpolicies": [policy("gpu-max")],
                 "validatingadmissionpolicybindings": [binding("gpu-max-binding", "gpu-max")],
                 "endpointslices": [endpointslice(("kyverno", "kyverno-svc"), True)]}
    for name, items in admission.items():
        (root / f"{name}.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return root


def test_replay_tables_name_only_catalog_kinds_and_every_catalog_kind_is_served():
    assert set(TABLES) <= {k.name for k in KINDS}
    assert [k.name for k in SERVED] == [k.name for k in KINDS]


def test_real_kubectl_lists_every_catalog_kind_from_serve(kubectl, tmp_path):
    root = _every_kind(tmp_path)
    with serving(root, tmp_path / "serve") as replay:
        for kind in KINDS:
            items = json.loads((root / kind.file).read_text())["items"]
            expected = sorted(i["metadata"]["name"] for i in items)
            scope = ["-A"] if kind.namespaced else []
            done = replay.kubectl("get", kind.resource, *scope, "-o", "json")
            assert sorted(i["metadata"]["name"] for i in json.loads(done.stdout)["items"]) == expected, kind.name
            table = replay.kubectl("get", kind.resource, *scope, "-o", "wide")  # server-side columns
            assert all(name in table.stdout for name in expected), kind.name


@pytest.mark.parametrize("kind", [k for k in KINDS if k.short_names], ids=lambda k: k.name)
def test_short_names_come_from_the_catalog(kind):
    assert next(s for s in SERVED if s.name == kind.name).short_names == kind.short_names


def test_kubectl_get_workloads_and_clusterqueues_by_their_short_plurals(kubectl, tmp_path):
    """What a Kueue user types: the plurals alone, two kinds in one call, from a recording with a real Kueue."""
    bundle = RECORDINGS / "quota-exhausted-now-v1.36"
    with serving(bundle, tmp_path / "serve") as replay:
        done = replay.kubectl("get", "workloads,clusterqueues", "-A", "-o", "json")
    got = sorted((i["kind"], i["metadata"]["name"]) for i in json.loads(done.stdout)["items"])
    expected = sorted([("Workload", w["metadata"]["name"]) for w in
                       json.loads((bundle / "workloads.kueue.x-k8s.io.json").read_text())["items"]] +
                      [("ClusterQueue", q["metadata"]["name"]) for q in
                       json.loads((bundle / "clusterqueues.kueue.x-k8s.io.json").read_text())["items"]])
    assert got == expected and expected
