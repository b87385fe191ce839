"""`generate_bundle.py --kai` (bundlegen/kai.py, scripts/generate_kai.py): a share of the GPU pods for KAI-Scheduler,
its pods in namespace kai-scheduler as its operator deploys them, Queues (scheduling.run.ai/v2) in a department/leaf
tree and PodGroups (v2alpha2) naming them, and the lab's pods its queues refuse or whose reservation pod failed; the
analyzer answers exactly the truth file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import assert_answers_are_the_truth, generate_with_truth, run_cli


@pytest.fixture(scope="module")
def kai_bundle(tmp_path_factory) -> tuple[Path, Path]:
    return generate_with_truth(tmp_path_factory.mktemp("gen-kai"), "--kai")


def _items(bundle: Path, name: str) -> list[dict]:
    return json.loads((bundle / name).read_text())["items"]


def test_every_kai_target_gets_its_truth_word(kai_bundle):
    bundle, truth = kai_bundle
    lines = truth.read_text().splitlines()
    words = dict(line.split("\t") for line in lines)
    lab = {k: v for k, v in words.items() if k.startswith("llm-research/")}
    assert sorted(lab.values()) == ["node-runtime", "queue-misconfigured", "queue-quota", "queue-quota"]
    assert [v for k, v in words.items() if k.startswith("kai-resource-reservation/gpu-reservation-")] == ["image-pull"]
    assert_answers_are_the_truth(bundle, lines)


def test_the_kai_world_is_shaped_as_kai_writes_it(kai_bundle):
    bundle, _ = kai_bundle
    pods = _items(bundle, "pods.json")
    kai = [p for p in pods if p["spec"].get("schedulerName") == "kai-scheduler"]
    gpu = [p for p in pods if any("nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {})
                                  for c in p["spec"]["containers"])]
    assert 0.15 * len(gpu) <= len(kai) <= 0.5 * len(gpu)
    own = {p["metadata"]["name"].rsplit("-", 2)[0] for p in pods if p["metadata"]["namespace"] == "kai-scheduler"}
    assert {"kai-scheduler-default", "binder", "pod-grouper", "queue-controller", "admission"} <= own
    queues = {q["metadata"]["name"]: q for q in _items(bundle, "queues.scheduling.run.ai.json")}
    groups = {(g["metadata"]["namespace"], g["metadata"]["name"]): g
              for g in _items(bundle, "podgroups.scheduling.run.ai.json")}
    for p in kai:
        meta = p["metadata"]
        group = groups[(meta["namespace"], meta["annotations"]["pod-group-name"])]
        assert group["spec"]["queue"] == meta["labels"]["kai.scheduler/queue"]
    leaves = [q for q in queues.values() if q["spec"].get("parentQueue")]
    assert leaves and all(q["spec"]["parentQueue"] in queues for q in leaves)  # a tree, every parent present
    gone = {g["spec"]["queue"] for g in groups.values()} - set(queues)
    assert gone == {"llm-research-2025"}
    refused = [g for g in groups.values() if any(c["reasons"][0]["reason"] in ("OverLimit", "NonPreemptibleOverQuota")
                                                 for c in g["status"].get("schedulingConditions", ()))]
    assert len(refused) == 2 and any("quota has reached the allowable limit of GPUs" in
                                     g["status"]["schedulingConditions"][0]["message"] for g in refused)


def test_why_names_the_queue_and_the_reservation(kai_bundle):
    bundle, truth = kai_bundle
    words = dict(line.split("\t") for line in truth.read_text().splitlines())
    over = next(k for k in words if k.startswith("llm-research/finetune-over-limit-"))
    out = run_cli("why", bundle, over, "--explain", check=True).stdout
    assert "queue-quota" in out and "KAI says on the PodGroup" in out and "allowable limit" in out
    half = next(k for k in words if k.startswith("llm-research/notebook-half-gpu-"))
    out = run_cli("why", bundle, half, "--explain", check=True).stdout
    assert "node-runtime" in out and "kai-resource-reservation/gpu-reservation-" in out and "ImagePullBackOff" in out
