"""Issue 5: every optimisation gives the same words and evidence as the straightforward path.

The classifier shares one funnel per distinct pod shape, builds fit evidence
and reason lines on demand, and indexes usage per node once. Here the same
bundles are answered with sharing turned off (one funnel per pod) and the
JSON of every verdict must be identical.
"""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.bundle.reading import open_bundle
from analyzer.rules.classify import classify_all
from analyzer.model.build import build_cluster
from analyzer.targets.attempts import owner_refusals, stored_attempts
from analyzer.bundle.validation import load_documents
from helpers import LAB, REPO


def _verdicts(path, cache: bool) -> list[bytes]:
    with open_bundle(path) as b:
        loaded = load_documents(b)
        cluster = build_cluster(loaded, AcceleratorConfig())
        extra = stored_attempts(cluster) + owner_refusals(cluster)
        return [orjson.dumps(v.to_dict(), option=orjson.OPT_SORT_KEYS) for v in classify_all(cluster, extra, cache=cache)]


def test_shared_funnels_equal_the_straightforward_path_on_the_lab():
    fast, slow = _verdicts(LAB, True), _verdicts(LAB, False)
    assert len(fast) == 9
    assert fast == slow


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "bundle"
    subprocess.run([sys.executable, str(REPO / "scripts" / "generate_bundle.py"), "--nodes", "40", "--pods", "900",
                    "--seed", "7", "--out", str(out)], check=True, capture_output=True)
    return out


def test_shared_funnels_equal_the_straightforward_path_on_a_generated_bundle(generated):
    fast, slow = _verdicts(generated, True), _verdicts(generated, False)
    assert len(fast) > 20
    assert fast == slow
    words = {orjson.loads(v)["word"] for v in fast}
    assert {"exhausted", "no-gpu-node", "allocatable-zero", "untolerated-taint", "selector-mismatch"} <= words
