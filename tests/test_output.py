"""One output interface: every command's `-o` formats come from one registry (analyzer/output.py), each a
`Format` (analyzer/output_format.py, after pip-audit's VulnerabilityFormat), and the helpers they share are
written once (analyzer/text.py)."""

from __future__ import annotations

import ast
import io
from typing import Any

import pytest
import typer

from analyzer.cli import app
from analyzer.output import formats_for
from analyzer.output_format import ANALYZE, DIFF, NODES, REPORT, Format
from analyzer.text import and_more, json_safe, json_text, markdown_text, named_few
from helpers import REPO

COMMANDS = (ANALYZE, REPORT, DIFF, NODES)


def _cli_choices(command: str) -> list[str]:
    group: Any = typer.main.get_command(app)  # a click Group: its commands by name
    click_command = group.commands[command]
    option = next(p for p in click_command.params if "-o" in p.opts)
    return option.metavar.split("|")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_format_the_cli_offers_is_registered_for_its_command(command: str) -> None:
    formats = formats_for(command)
    assert list(formats) == _cli_choices(command)
    for name, fmt in formats.items():
        assert isinstance(fmt, Format) and fmt.name == name and command in fmt.commands


def test_analyze_formats_that_print_only_word_and_reason_skip_the_evidence() -> None:
    assert {name for name, f in formats_for(ANALYZE).items() if not f.needs_evidence} == {"table", "wide", "words"}


def test_no_command_module_keeps_its_own_renderer_table() -> None:
    """The three `renderers()` and their `Renderer` aliases are gone: the registry is the one place; JSON
    cleaning and holder limits are text.py's."""
    for path in [p for package in ("report", "diff", "occupancy") for p in (REPO / "analyzer" / package).rglob("*.py")]:
        tree = ast.parse(path.read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        names |= {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        assert not names & {"renderers", "Renderer", "_clean", "MAX_HOLDERS"}, path


def test_table_wraps_to_columns_and_wide_keeps_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.model.target import Target
    from analyzer.verdict import Verdict

    target = Target(kind="Pod", namespace="lab", name="exhausted", spec={}, created=True, source="pods.json $.items[0]")
    verdict = Verdict(target=target, word="exhausted", reason=" ".join(["no candidate has room"] * 8), evidence={})
    monkeypatch.setenv("COLUMNS", "80")
    wrapped, wide = io.StringIO(), io.StringIO()
    formats_for(ANALYZE)["table"].render([verdict], wrapped)
    formats_for(ANALYZE)["wide"].render(iter([verdict]), wide)
    assert max(len(line) for line in wrapped.getvalue().splitlines()) <= 80
    assert len(wide.getvalue().splitlines()[1]) > 80


def test_json_that_meets_a_lone_surrogate_escapes_it_in_every_format() -> None:
    doc = {"name": "a\ud800b", "list": ("x\n", 1)}
    assert json_safe(doc) == {"name": "a\\ud800b", "list": ["x\\n", 1]}
    assert json_text(doc) == '{\n  "name": "a\\\\ud800b",\n  "list": [\n    "x\\\\n",\n    1\n  ]\n}'


def test_holder_lists_say_how_many_more() -> None:
    assert named_few(["a", "b", "c", "d", "e"], 3) == "a, b, c +2 more"
    assert named_few(["a"], 3) == "a" and and_more(0) == ""


def test_markdown_text_escapes_what_acts_inside_a_line() -> None:
    assert markdown_text("a|b_<c>'") == "a\\|b\\_&lt;c&gt;'"
    assert markdown_text("'", quote=True) == "&#x27;"
