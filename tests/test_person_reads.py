"""What a person reads: refused manifests and owners first and marked, text wrapped to the terminal, each fact of an
explanation said once, the HTML header as one definition list with completeness on one line."""

from __future__ import annotations

from conftest import gpu_node, make_bundle
from helpers import LAB, run_cli
from report_pages import data_of, html_of, markdown_of
from test_owners import RS, _full_quota, _rs_events, _running_replicas, replicaset

from analyzer.report.ticket import group_rows
from analyzer.report.ticket_records import TargetRow
from analyzer.text import REFUSED

LAB_REFUSED = {"quota-lab/quota-exceeded", "lab/runtimeclass-missing"}  # stored attempts the API server refused


def _rows(out: str) -> list[str]:
    return [line for line in out.splitlines()[1:] if line and not line.startswith(" ")]


def test_table_lists_the_refused_manifests_first_and_says_they_were_refused() -> None:
    for fmt in ("table", "wide"):
        rows = _rows(run_cli("analyze", LAB, "-o", fmt, check=True).stdout)
        assert {r.split()[0] for r in rows[:2]} == LAB_REFUSED
        assert all(f"a manifest {REFUSED}: " in r for r in rows[:2])
        assert not any(REFUSED in r for r in rows[2:])


def test_words_keep_their_order() -> None:
    """-o words (like -o json) is for programs: the pipeline's order, pods first, unmarked."""
    lines = run_cli("analyze", LAB, "-o", "words", check=True).stdout.splitlines()
    assert lines[0].split("\t")[0] not in LAB_REFUSED
    assert not any(REFUSED in line for line in lines)


def test_report_puts_a_refused_row_before_any_pod_whatever_its_word() -> None:
    def row(name: str, word: str, *, kind: str = "Pod", refused: bool = False) -> TargetRow:
        return TargetRow(word=word, reason="r", next_action="", kind=kind, owner=None, names=(name,),
                         source="x", refused=refused)

    rows = group_rows([row("lab/gated", "no-gpu-request"), row("lab/web", "admission-denied", kind="Attempt", refused=True),
                       row("lab/later", "exhausted", kind="Attempt")])
    assert [r.names[0] for r in rows] == ["lab/web", "lab/gated", "lab/later"]


def test_report_marks_refused_manifests_in_markdown_and_html() -> None:
    data = data_of(LAB)
    assert {n for r in data.rows[:2] for n in r.names} == LAB_REFUSED
    md = markdown_of(data)
    assert f"**lab/runtimeclass-missing** (a manifest {REFUSED})" in md
    page = html_of(data)
    assert f'<span class="warn">a manifest {REFUSED}</span>' in page
    assert f"<dt>Targets</dt><dd>2 manifest(s) {REFUSED}; 7 pod(s) that will not start</dd>" in page


def test_a_refused_owner_is_marked_in_every_format_for_people(tmp_path) -> None:
    root = make_bundle(tmp_path, pods=_running_replicas(), nodes=[gpu_node("gpu-ok")], quotas=[_full_quota()], replicasets=[replicaset()],
                       events=_rs_events())
    key = f"quota-lab/replicaset/{RS}"
    table = run_cli("analyze", root, "-o", "wide", check=True).stdout
    assert f"{key}  quota-exceeded  ReplicaSet: its pods {REFUSED}: " in table
    data = data_of(root)
    assert f"(ReplicaSet: its pods {REFUSED})" in markdown_of(data)
    page = html_of(data)
    assert f'<span class="warn">ReplicaSet: its pods {REFUSED}</span>' in page
    assert f"<dd>1 controller(s) whose pods were {REFUSED}</dd>" in page
