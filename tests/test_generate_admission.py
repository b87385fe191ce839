"""`generate_bundle.py --admission` (scripts/generate_admission.py): a fifth of the namespaces under a LimitRange and
three webhook configurations with ready endpoints, for the lead's benchmark; the answers stay the truth file's."""

from __future__ import annotations

import json

from helpers import generate_with_truth, run_cli


def test_admission_objects_are_valid_listed_and_change_no_answer(tmp_path_factory):
    bundle, truth = generate_with_truth(tmp_path_factory.mktemp("gen-admission"), "--admission")
    assert run_cli("validate", bundle).returncode == 0
    namespaces = [n["metadata"]["name"] for n in json.loads((bundle / "namespaces.json").read_text())["items"]]
    teams = [n for n in namespaces if not n.startswith("kube-") and n != "default"]
    ranges = json.loads((bundle / "limitranges.json").read_text())["items"]
    assert len(ranges) == len(teams) // 5 and len({r["metadata"]["namespace"] for r in ranges}) == len(ranges)
    hooks = [json.loads((bundle / f"{k}webhookconfigurations.json").read_text())["items"] for k in ("validating", "mutating")]
    assert sum(len(h) for h in hooks) == 3
    files = {e["path"] for e in json.loads((bundle / "manifest.json").read_text())["files"]}
    assert {"limitranges.json", "endpointslices.json", "mutatingwebhookconfigurations.json"} <= files
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == truth.read_text().splitlines()
