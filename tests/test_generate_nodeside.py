"""`generate_bundle.py --node-side` (scripts/generate_nodeside.py): time-sliced and MIG nodes, bound pods in each
state the node can leave them in, and the analyzer answering exactly the truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import assert_answers_are_the_truth, generate, run_cli


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("gen-nodeside")
    truth = root / "truth.tsv"
    return generate(root, nodes=40, pods=600, seed=3, extra=("--truth", str(truth), "--dra", "--node-side")), truth


def test_node_side_targets_cover_the_node_start_words_and_resource_name_mismatch_and_the_analyzer_answers_the_truth(bundle):
    root, truth = bundle
    lines = truth.read_text().splitlines()
    added = {k: w for k, w in (line.split("\t") for line in lines) if k.startswith("xpu-node/")}
    assert set(added.values()) == {"image-pull", "volume-mount", "node-runtime", "node-side", "resource-name-mismatch",
                                   "exhausted"}
    assert_answers_are_the_truth(root, lines)


def test_nodes_shows_the_shared_and_mig_nodes_and_the_pods_that_did_not_start(bundle):
    root, _ = bundle
    result = run_cli("nodes", root, "-o", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = {(r["node"], r["resource"]): r for r in doc["rows"] if "-ts-" in r["node"]}
    assert rows[("gke-ml-prod-ts-a100-pool-0000", "nvidia.com/gpu.shared")]["sharing"] == "time-slicing, 8 replicas per GPU"
    mig = [r for (node, res), r in rows.items() if res.startswith("nvidia.com/mig-")]
    assert {r["resource"] for r in mig} == {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb"}
    assert all(r["mig_config_state"] == "pending" for r in mig)
    stuck = {p["pod"]: p["word"] for p in doc["not_started"]["gke-ml-prod-ts-a100-pool-0000"]}
    assert stuck["xpu-node/attach-0"] == "volume-mount" and stuck["xpu-node/sandbox-0"] == "node-runtime"
