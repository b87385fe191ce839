"""`analyze BUNDLE -o json` on every bundle in the repository gives exactly the JSON kept in tests/expected/.

The bundles: dumps/lab-seven-states-v1.36 (`dumps-<folder>.json`) and every folder of tests/data/recordings
(`recordings-<folder>.json`). A change of any word, reason or evidence shows up here as a diff.

When a change is intended (a new family of causes, a contract change), regenerate and review the diff:

    .venv/bin/python -m pytest -q tests/test_expected_output.py --regenerate-expected
    git diff tests/expected/

`--regenerate-expected` rewrites every expected file from the analyzer as it is now, writes one for a new
recording, and removes those whose bundle is gone; say in the commit why the verdicts changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import LAB, RECORDINGS, REPO
from typer.testing import CliRunner

from analyzer.cli import app

EXPECTED = REPO / "tests" / "expected"
BUNDLES: dict[str, Path] = {f"dumps-{LAB.name}": LAB,
                            **{f"recordings-{p.name}": p for p in sorted(RECORDINGS.iterdir()) if p.is_dir()}}
REGENERATE = "--regenerate-expected"


def analyze_json(bundle: Path) -> str:
    """stdout of `gpu-triage analyze BUNDLE -o json`, run in-process (the same typer app as the console script)."""
    result = CliRunner().invoke(app, ["analyze", str(bundle), "-o", "json", "--quiet"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.stderr}"
    return result.stdout


def test_every_bundle_in_the_repository_is_covered() -> None:
    assert {"dumps-lab-seven-states-v1.36", "recordings-dra-exhausted-v1.36", "recordings-dra-no-slice-v1.36",
            "recordings-quota-exhausted-now-v1.36", "recordings-multi-attach-v1.36"} <= set(BUNDLES)
    assert len(BUNDLES) == 1 + sum(1 for p in RECORDINGS.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_verdict_json_is_unchanged(name: str, request: pytest.FixtureRequest) -> None:
    got = analyze_json(BUNDLES[name])
    path = EXPECTED / f"{name}.json"
    if request.config.getoption(REGENERATE):
        path.write_text(got)
        return
    assert path.is_file(), f"no {path.relative_to(REPO)}: run pytest {__name__}.py {REGENERATE}"
    assert got == path.read_text(), f"{name}: the verdicts changed; if intended, run pytest {REGENERATE} (see docstring)"


def test_no_expected_file_without_its_bundle(request: pytest.FixtureRequest) -> None:
    orphans = sorted(p for p in EXPECTED.glob("*.json") if p.stem not in BUNDLES)
    if request.config.getoption(REGENERATE):
        for p in orphans:
            p.unlink()
        return
    assert not orphans, f"expected output for a bundle that is not in the repository: {orphans}"


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_words_and_wide_made_without_evidence_say_what_the_json_says(name: str) -> None:
    """`-o words` and the table classify without the evidence (their Format.needs_evidence is False): each line
    still has the word and the reason `-o json` gives for the same target; words in the same order, the table with
    what the API server refused first (then in the same order), its reason led by what the target is."""
    from analyzer.words import NEVER_CREATED
    import json

    verdicts = json.loads(analyze_json(BUNDLES[name]))["verdicts"]

    def out(fmt: str) -> list[str]:
        result = CliRunner().invoke(app, ["analyze", str(BUNDLES[name]), "-o", fmt, "--quiet"])
        assert result.exit_code == 0, result.stderr
        return result.stdout.splitlines()

    def key(v: dict) -> str:
        return f"{v['namespace']}/{v['name']}" if v["kind"] in ("Pod", "Attempt") else f"{v['namespace']}/{v['kind'].lower()}/{v['name']}"

    assert out("words") == [f"{key(v)}\t{v['word']}" for v in verdicts]
    wide = out("wide")
    assert len(wide) > len(verdicts) > 0
    refused_first = sorted(verdicts, key=lambda v: v["kind"] == "Pod" or v["word"] not in NEVER_CREATED)
    for v, line in zip(refused_first, wide[1:]):
        assert line.split()[:2] == [key(v), v["word"]] and line.rstrip().endswith(v["reason"].rstrip()), line
