"""`analyze -o json` on every recorded bundle gives exactly the verdict JSON kept in tests/expected/.

A change of any word, reason or evidence shows up here as a diff. When a change is intended (a contract change),
regenerate with: for each bundle, `gpu-triage analyze BUNDLE -o json > tests/expected/<name>.json`, and review the diff.
"""

from __future__ import annotations

import pytest

from helpers import LAB, REPO, run_cli

SHARED = REPO.parent / "shared" / "bundles"
BUNDLES = {"dumps-lab-seven-states-v1.36": LAB,
           **{f"bundles-{p.name}": p for p in sorted(SHARED.glob("*")) if p.is_dir()}}


def test_the_shared_recordings_are_there():
    assert {"bundles-lab-seven-states-v1.36", "bundles-dra-exhausted-v1.36", "bundles-dra-no-slice-v1.36"} <= set(BUNDLES)


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_verdict_json_is_unchanged(name):
    r = run_cli("analyze", BUNDLES[name], "-o", "json")
    assert r.returncode == 0, r.stderr
    expected = (REPO / "tests" / "expected" / f"{name}.json").read_text()
    assert r.stdout == expected
