"""`generate_bundle.py --kueue` (scripts/generate_kueue.py, bundlegen/kueue.py): a fifth of the pods held by Kueue,
with its queues and Workloads as Kueue v0.19 writes them; the analyzer answers exactly the truth file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import generate_with_truth, run_cli

from analyzer.bundle.catalog import KUEUE

GATE = "kueue.x-k8s.io/admission"


@pytest.fixture(scope="module")
def kueue_bundle(tmp_path_factory) -> tuple[Path, Path]:
    return generate_with_truth(tmp_path_factory.mktemp("gen-kueue"), "--kueue")


def test_every_queue_target_gets_its_truth_word_and_kueue_agrees(kueue_bundle):
    bundle, truth = kueue_bundle
    lines = truth.read_text().splitlines()
    words = dict(line.split("\t") for line in lines)
    assert {"queue-quota", "queue-misconfigured", "selector-mismatch", "untolerated-taint", "scheduling-gated",
            "queue-topology"} <= set(words.values())
    suspended = [k for k in words if "/job/sweep-" in k]
    assert suspended and all(words[k] == "queue-quota" for k in suspended)  # Jobs with no pods, answered per owner
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == lines
    doc = json.loads(run_cli("analyze", bundle, "-o", "json").stdout)
    # A workload's queue chain is written once in `queues`; its pods name it by id.
    verdicts = [{**v, "evidence": {**v["evidence"], "queue": doc["queues"][v["evidence"]["queue"]]}}
                if isinstance(v["evidence"].get("queue"), str) else v for v in doc["verdicts"]]
    assert len(doc["queues"]) < sum(1 for v in verdicts if "queue" in v["evidence"])
    held = [v for v in verdicts if (v["evidence"].get("queue") or {}).get("system") == "Kueue"]
    assert len(held) > 100
    # Kueue's own QuotaReserved message is the one rebuilt from the queue's objects, wherever Kueue wrote one.
    said = [v["evidence"]["queue"] for v in held if "kueue_said" in v["evidence"]["queue"]]
    assert said and all(q["agrees"] is True for q in said)


def test_a_fifth_of_the_pods_are_gated_and_the_files_are_listed(kueue_bundle):
    bundle, _ = kueue_bundle
    assert run_cli("validate", bundle).returncode == 0
    pods = json.loads((bundle / "pods.json").read_text())["items"]
    gated = [p for p in pods if any(g["name"] == GATE for g in p["spec"].get("schedulingGates") or ())]
    assert 0.18 <= len(gated) / len(pods) <= 0.25
    assert all("kueue.x-k8s.io/queue-name" in p["metadata"]["labels"] for p in gated
               if "kueue.x-k8s.io/pod-group-name" in p["metadata"]["labels"])
    manifest = {e["path"]: e for e in json.loads((bundle / "manifest.json").read_text())["files"]}
    for name in KUEUE:
        items = json.loads((bundle / f"{name}.json").read_text())["items"]
        assert manifest[f"{name}.json"]["items"] == len(items) > 0
    jobs = json.loads((bundle / "jobs.json").read_text())["items"]
    assert manifest["jobs.json"]["items"] == len(jobs)
    keys = [(j["metadata"]["namespace"], j["metadata"]["name"]) for j in jobs]
    assert keys == sorted(keys)


def test_queue_table_shows_the_borrowing_training_queue(kueue_bundle):
    bundle, _ = kueue_bundle
    rows = {(r["cluster_queue"], r["flavor"]): r for r in json.loads(run_cli("nodes", bundle, "-o", "json").stdout)["queues"]}
    train = rows[("cq-train", "h100")]
    assert train["borrowed"] == train["reserved"] - train["nominal"] > 0 and train["waiting"] > 0
    assert rows[("cq-serving", "l4")]["reserved"] == 0 and rows[("cq-serving", "l4")]["waiting"] > 0


def test_same_seed_same_kueue_objects(kueue_bundle, tmp_path):
    bundle, _ = kueue_bundle
    again, _ = generate_with_truth(tmp_path, "--kueue")
    for name in KUEUE:
        assert (again / f"{name}.json").read_bytes() == (bundle / f"{name}.json").read_bytes()
