"""`generate_bundle.py --dra` (scripts/generate_dra.py): DRA objects added, consistent with the truth file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import generate_with_truth, run_cli



@pytest.fixture(scope="module")
def dra_bundle(tmp_path_factory) -> tuple[Path, Path]:
    return generate_with_truth(tmp_path_factory.mktemp("gen-dra"), "--dra")


def test_dra_targets_cover_the_claim_words_and_the_analyzer_answers_exactly_the_truth(dra_bundle):
    bundle, truth = dra_bundle
    lines = truth.read_text().splitlines()
    dra = {k: w for k, w in (line.split("\t") for line in lines) if k.startswith("xpu-lab/")}
    assert set(dra.values()) == {"exhausted", "device-selector-mismatch", "no-gpu-node"}
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == lines


def test_dra_bundle_is_valid_and_the_manifest_lists_the_dra_files(dra_bundle):
    bundle, _ = dra_bundle
    assert run_cli("validate", bundle).returncode == 0
    manifest = json.loads((bundle / "manifest.json").read_text())
    paths = {e["path"]: e for e in manifest["files"]}
    for kind in ("resourceclaims", "resourceclaimtemplates", "deviceclasses", "resourceslices"):
        items = json.loads((bundle / f"{kind}.json").read_text())["items"]
        assert paths[f"{kind}.json"]["items"] == len(items) > 0
    pods = json.loads((bundle / "pods.json").read_text())["items"]
    assert paths["pods.json"]["items"] == len(pods)
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    assert keys == sorted(keys)  # still in the API server's order
    held = [c for c in json.loads((bundle / "resourceclaims.json").read_text())["items"] if c["status"].get("allocation")]
    assert held and all(c["status"]["reservedFor"] for c in held)
