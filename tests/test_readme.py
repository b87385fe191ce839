"""The README shows real output: its worked example is what `why --explain` prints today."""

from __future__ import annotations

from helpers import LAB, REPO, run_cli

COMMAND = "$ gpu-triage why dumps/lab-seven-states-v1.36 lab/exhausted --explain\n"


def test_worked_example_in_readme_is_current():
    readme = (REPO / "README.md").read_text()
    start = readme.index(COMMAND) + len(COMMAND)
    shown = readme[start: readme.index("```", start)]
    r = run_cli("why", LAB, "lab/exhausted", "--explain")
    assert r.returncode == 0, r.stderr
    assert shown == r.stdout, "stale README example: run python scripts/refresh_readme_example.py"


def test_readme_word_table_lists_every_word_in_order():
    from analyzer import words

    readme = (REPO / "README.md").read_text()
    positions = [readme.index(f"| `{w.word}` |") for w in words.ALL]
    assert positions == sorted(positions)
