"""The generator's volume and inter-pod targets (scripts/generate_filters.py, bundlegen/filters_scenarios.py): pending
GPU pods whose WaitForFirstConsumer claim can only use volumes on CPU nodes, whose dataset is bound in another zone,
whose required pod affinity no pod satisfies; and pods whose claims can be provisioned or whose affinity holds, so
another stage decides. Each intended word is the analyzer's, and the scheduler's message in the bundle is the one
the analyzer rebuilds (the v1.36 reason strings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import generate, run_cli

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("gen-filters")
    generate(root / "b", nodes=100, pods=2000, seed=5, truth=root / "truth.tsv")
    truth = dict(line.split("\t") for line in (root / "truth.tsv").read_text().splitlines())
    return root / "b", truth


def _items(bundle: Path, kind: str) -> list[dict]:
    return json.loads((bundle / f"{kind}.json").read_text())["items"]


def _verdicts(bundle: Path) -> dict[str, dict]:
    result = run_cli("analyze", bundle, "-o", "json")
    assert result.returncode == 0, result.stderr
    return {f"{v['namespace']}/{v['name']}": v for v in json.loads(result.stdout)["verdicts"]}


def test_every_target_gets_its_intended_word_and_the_new_kinds_are_there(bundle):
    path, truth = bundle
    result = run_cli("analyze", path, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert dict(line.split("\t") for line in result.stdout.splitlines()) == truth
    def kind(prefix: str) -> set[str]:
        return {w for k, w in truth.items() if k.startswith(prefix)}
    assert kind("recsys/feature-cache-") == {"volume-node-conflict"}  # local volumes only on CPU nodes
    assert kind("vision/eval-multimodal") == {"volume-node-conflict"}  # dataset bound in another zone
    assert kind("search/ranker-colocated-") == {"pod-affinity"}
    assert kind("recsys/a100-indexer-") == kind("ml-training/pretrain-colocated-") == {"exhausted"}
    assert kind("search/embed-cache-") == {"fits-now"}


def test_the_scheduler_messages_are_the_ones_the_analyzer_rebuilds(bundle):
    path, truth = bundle
    verdicts = _verdicts(path)
    new = [k for k in truth if k.split("/")[1].startswith(("feature-cache-", "eval-multimodal", "ranker-colocated-",
                                                            "a100-indexer-", "pretrain-colocated-"))]
    assert new
    reasons = set()
    for key in new:
        sched = verdicts[key]["scheduler"]
        assert sched["comparison"].startswith("agrees"), (key, sched["message"], sched["rebuilt"])
        reasons.update(part.split(" ", 1)[1] for part in sched["rebuilt"].split(": ", 1)[1].rstrip(".").split(", "))
    assert {"node(s) didn't find available persistent volumes to bind", "node(s) didn't match PersistentVolume's node affinity",
            "node(s) had no available volume zone", "node(s) didn't match pod affinity rules"} <= reasons


def test_the_claims_and_volumes_behind_them(bundle):
    path, _ = bundle
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in _items(path, "nodes")}
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in _items(path, "persistentvolumeclaims")}
    volumes = {v["metadata"]["name"]: v for v in _items(path, "persistentvolumes")}
    classes = {c["metadata"]["name"]: c for c in _items(path, "storageclasses")}
    assert classes["balanced-wffc"]["volumeBindingMode"] == "WaitForFirstConsumer"
    assert classes["local-nvme"]["provisioner"] == "kubernetes.io/no-provisioner"
    local = [v for v in volumes.values() if v["spec"].get("local")]
    assert local and all(v["status"]["phase"] == "Available" and "claimRef" not in v["spec"] for v in local)
    for v in local:  # each pinned to a node without GPUs
        [node] = v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
        assert "nvidia.com/gpu.present" not in nodes[node]
    scratch = [c for (ns, name), c in claims.items() if name.startswith("scratch-feature-cache-")]
    assert scratch and all(c["status"]["phase"] == "Pending" and c["spec"]["storageClassName"] == "local-nvme"
                           for c in scratch)
    datasets = [c for (ns, name), c in claims.items() if name.startswith("eval-multimodal") and name.endswith("-dataset")]
    zones = set()
    for c in datasets:
        v = volumes[c["spec"]["volumeName"]]
        zones.add(v["metadata"].get("labels", {}).get(ZONE) or
                  v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0])
    assert len(zones) == 1 and len(datasets) >= 2
    assert any("gcePersistentDisk" in volumes[c["spec"]["volumeName"]]["spec"] for c in datasets)  # by zone label
    assert any("nodeAffinity" in volumes[c["spec"]["volumeName"]]["spec"] for c in datasets)  # by node affinity


def test_about_a_fifth_of_the_pods_carry_an_inter_pod_spread_or_volume_constraint(bundle):
    path, _ = bundle
    pods = _items(path, "pods")
    def constrained(spec: dict) -> bool:
        a = spec.get("affinity") or {}
        return bool(a.get("podAffinity") or a.get("podAntiAffinity") or spec.get("topologySpreadConstraints")
                    or any(v.get("persistentVolumeClaim") for v in spec.get("volumes") or ()))
    share = sum(constrained(p["spec"]) for p in pods) / len(pods)
    assert 0.15 <= share <= 0.25
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    assert any(constrained(p["spec"]) for p in pending) and any(constrained(p["spec"]) for p in pods if p["spec"].get("nodeName"))
