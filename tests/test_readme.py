"""The README shows real output: its word table is generated from analyzer/words.py and its worked example is
what `why --explain` prints today (scripts/refresh_readme.py rewrites both)."""

from __future__ import annotations

import importlib.util

from helpers import REPO

_spec = importlib.util.spec_from_file_location("refresh_readme", REPO / "scripts" / "refresh_readme.py")
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)  # type: ignore[union-attr]


def test_readme_word_table_and_worked_example_are_current():
    readme = (REPO / "README.md").read_text()
    assert refresh.refreshed(readme, refresh.example()) == readme, "stale README: run python scripts/refresh_readme.py"


def test_readme_word_table_is_the_one_in_words_py():
    readme = (REPO / "README.md").read_text()
    from analyzer import words
    from analyzer.rules.order import DECIDED

    assert refresh.TABLE_START + words.readme_table(DECIDED) + refresh.TABLE_END in readme
