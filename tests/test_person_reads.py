"""What a person reads: refused manifests and owners first and marked, text wrapped to the terminal, each fact of an
explanation said once, the HTML header as one definition list with completeness on one line."""

from __future__ import annotations

import re

from conftest import gpu_node, gpu_pod, make_bundle
from helpers import LAB, REPO, run_cli
from report_pages import data_of, html_of, markdown_of
from test_owners import RS, _full_quota, _rs_events, _running_replicas, replicaset

from analyzer.report.shapes import group_rows
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


# -- text wrapped to the terminal (COLUMNS, text.terminal_width), as the table is ------------------------------

def _longest(out: str) -> int:
    return max(len(line) for line in out.splitlines())


def test_why_explain_wraps_to_the_terminal_and_a_pipe_keeps_lines_whole(monkeypatch) -> None:
    dra = REPO / "tests" / "data" / "recordings" / "dra-exhausted-v1.36"
    for bundle, pod in ((LAB, "lab/exhausted"), (dra, "lab/waiter")):
        monkeypatch.delenv("COLUMNS", raising=False)
        whole = run_cli("why", bundle, pod, "--explain", check=True).stdout  # a pipe: no width
        assert _longest(whole) > 100
        monkeypatch.setenv("COLUMNS", "100")
        wrapped = run_cli("why", bundle, pod, "--explain", check=True).stdout
        assert _longest(wrapped) <= 100
        assert wrapped.split() == whole.split()  # the same words, only the line breaks differ


def test_table_and_nodes_wrap_to_the_terminal_and_wide_does_not(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert _longest(run_cli("analyze", LAB, check=True).stdout) <= 100
    assert _longest(run_cli("nodes", LAB, check=True).stdout) <= 100
    assert _longest(run_cli("analyze", LAB, "-o", "wide", check=True).stdout) > 100


def test_nodes_fit_80_columns_with_gke_length_node_names(tmp_path, monkeypatch) -> None:
    # GKE names its nodes like gke-ml-prod-h100-pool-800698b9-mj9q: with a pool label and a MIG resource, the
    # numbers alone passed 80 columns. Then each node's name stands alone and its row is indented under it.
    from conftest import bound_pod

    pool = {"cloud.google.com/gke-nodepool": "a100-mig-pool-ondemand", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    names = [f"gke-ml-prod-a100-mig-pool-ondemand-1c3a35d6-{i:04}" for i in range(3)]
    nodes = [gpu_node(n, resource="nvidia.com/mig-1g.10gb", gpus="7", labels=pool) for n in names]
    pods = [bound_pod(f"holder-{i}", names[i], resource="nvidia.com/mig-1g.10gb") for i in range(3)]
    pods.append(gpu_pod("waiting-for-a-mig-slice-of-the-a100-pool", resource="nvidia.com/mig-1g.10gb", gpus=8))
    root = make_bundle(tmp_path, pods=pods, nodes=nodes)
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = run_cli("nodes", root, check=True).stdout
    assert _longest(whole) > 80  # a pipe keeps each row on one line
    monkeypatch.setenv("COLUMNS", "80")
    out = run_cli("nodes", root, check=True).stdout
    assert _longest(out) <= 80, out
    assert f"\n{names[0]}\n    " in out  # the name alone, its numbers under it
    assert all(out.count(n) == whole.count(n) for n in names + ["lab/waiting-for-a-mig-slice-of-the-a100-pool"])


def test_table_puts_each_reason_under_its_target_when_long_names_leave_no_reason_column(tmp_path, monkeypatch) -> None:
    # A StatefulSet's pod names and the word leave fewer than MIN_REASON columns at 80: the reason goes under the
    # name and word (indented), so no line passes the terminal and no word is lost.
    long = "feature-store-materializer-nightly-backfill-0"
    root = make_bundle(tmp_path, pods=[gpu_pod(long, gpus=8), gpu_pod("short", gpus=8)],
                       nodes=[gpu_node("gke-ml-prod-a100-pool-287f4f7f-gwbk", gpus="4")])
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = run_cli("analyze", root).stdout
    monkeypatch.setenv("COLUMNS", "80")
    out = run_cli("analyze", root).stdout
    assert _longest(out) <= 80, out
    lines = out.splitlines()
    at = lines.index(f"lab/{long}  exhausted")
    assert lines[at + 1] == "    no candidate (1) has room, even empty: it asks more nvidia.com/gpu than any"
    rows = whole.split("\n\n")[0].split()
    assert out.split("\n\n")[0].split()[3:] == rows[3:]  # the same words after the header, only the breaks differ


def test_explain_says_a_dra_claims_device_story_once() -> None:
    dra = REPO / "tests" / "data" / "recordings" / "dra-exhausted-v1.36"
    out = run_cli("why", dra, "lab/waiter", "--explain", check=True).stdout
    story = "0 of 2 matching device(s) free, 1 needed"
    assert out.count(story) == 1 and story in out.split("\n  source:")[0]  # in the reason, and only there
    assert "removed dx1: what the reason above says" in out and "dx1: only what the reason above says" in out
    assert out.count("1 cannot allocate all claims. still not schedulable") == 1  # the event: "the same text"


# -- the HTML header: one definition list, completeness on one line --------------------------------------------

COMPLETENESS = re.compile(r"collected (by hand: no manifest|with a manifest \(manifest\.json\)); \d+ kinds present"
                          r"(, required and absent: [^;]+)?(, \d+ optional kinds absent \([a-z0-9., -]+\))?"
                          r"(, \d+ not collected or unreadable \(below\))?")


def test_html_header_is_one_definition_list_that_cannot_misalign() -> None:
    page = html_of(data_of(LAB))
    header = page.split('<dl class="meta">\n', 1)[1].split("</dl>", 1)[0]
    items = re.findall(r"<(dt|dd)[ >]", header)
    assert items and items == ["dt", "dd"] * (len(items) // 2)  # each term followed by exactly its value
    assert header.count("\n") == len(items) // 2  # one line per pair: nothing between them
    # The grid puts every term in the first column and every value in the second, whatever their lengths.
    assert ".meta dd{grid-column:2}" in page and ".meta dt{grid-column:1}" in page
    completeness = re.search(r"<dt>Completeness</dt><dd[^>]*>([^<\n]*)</dd>", header)
    assert completeness and COMPLETENESS.fullmatch(completeness.group(1)), header


def test_completeness_of_a_bundle_collected_by_hand_is_one_line() -> None:
    for bundle in sorted((REPO / "tests" / "data" / "recordings").iterdir()):
        if bundle.is_dir():
            line = data_of(bundle).header.completeness
            assert line.startswith("collected by hand: no manifest; ") and COMPLETENESS.fullmatch(line), line


def test_table_summary_says_the_targets_own_action_when_they_share_one(monkeypatch) -> None:
    # one target per word in the lab: each summary line is that target's own action, its objects named
    monkeypatch.setenv("COLUMNS", "200")
    out = run_cli("analyze", LAB, check=True).stdout
    line = next(x for x in out.splitlines() if x.strip().startswith("1  untolerated-taint"))
    assert "next: add the toleration {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}" in line
