"""`generate_bundle.py --unhealthy-nodes` (scripts/generate_unhealthy.py): a tenth of the GPU nodes under pressure or
NotReady with the conditions and taints the kubelet and the node lifecycle controller set, their pods
`node-unhealthy`, and the analyzer answering exactly the truth (every other word unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import generate, run_cli


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("gen-unhealthy")
    truth = root / "truth.tsv"
    return generate(root, nodes=40, pods=600, seed=3, extra=("--truth", str(truth), "--unhealthy-nodes")), truth


def test_a_tenth_of_the_gpu_nodes_are_unhealthy_and_the_analyzer_answers_exactly_the_truth(bundle):
    root, truth = bundle
    lines = truth.read_text().splitlines()
    added = {k: w for k, w in (line.split("\t") for line in lines) if k.startswith("xpu-sick/")}
    assert added and set(added.values()) == {"node-unhealthy"}
    result = run_cli("analyze", root, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == lines
    nodes = json.loads((root / "nodes.json").read_text())["items"]
    gpu = [n for n in nodes if n["status"]["allocatable"].get("nvidia.com/gpu", "0") != "0"]
    sick = [n for n in gpu if any(t["key"] in ("node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure",
                                               "node.kubernetes.io/pid-pressure", "node.kubernetes.io/not-ready",
                                               "node.kubernetes.io/unreachable") for t in n["spec"].get("taints") or ())]
    assert abs(len(sick) - len(gpu) / 10) <= 1
    assert run_cli("validate", root).returncode == 0


def test_nodes_names_each_unhealthy_node_and_its_condition(bundle):
    root, _ = bundle
    doc = json.loads(run_cli("nodes", root, "-o", "json", check=True).stdout)
    sick = [r for r in doc["rows"] if "-unhealthy-" in r["node"]]
    assert sick and all("unhealthy" in r["states"] and r["conditions"] for r in sick)
