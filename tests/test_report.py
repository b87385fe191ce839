"""The ticket report (`gpu-triage report`), HTML and Markdown, on the lab bundle, on copies
of it with many replicas or hostile names, and on a generated 500-node bundle.

What a reader of the ticket notices: the nine lab targets with their words, the GPU picture per node
(gpu-ok 4/4 held by filler-a 3 and filler-b 1, gpu-alloczero allocatable 0 of capacity 4,
gpu-noplugin without the resource, gpu-tainted 4 free behind its taint), 150 replicas in one row,
names shown escaped, and a Markdown comment that fits a ticket.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from analyzer.text import printable
from analyzer.report.html import CSP
from analyzer.report.markdown import LIMIT, render_text
from analyzer.report.shapes import group_rows, summarise
from analyzer.report.ticket_records import Header, NearNode, ReportData, SchedulerLines, TargetRow
from conftest import (LAB, LAB_ATTEMPT_WORDS, LAB_WORDS, ORDER_WORDS, EXTRA_WORDS, copy_lab, lab_pod,
                      renamed_node)
from helpers import copy_bundle, run_cli
from report_pages import data_of, html_of, markdown_of, node_row, read_page

NINE = {**LAB_WORDS, **LAB_ATTEMPT_WORDS}


@pytest.fixture(scope="module")
def lab():
    return data_of(LAB)


@pytest.fixture(scope="module")
def gen500_data(generated_large):
    return data_of(generated_large)


# -- the lab: nine targets, their words, the header ---------------------------------------------------

def test_lab_html_shows_the_nine_targets_each_under_its_word(lab):
    page = read_page(html_of(lab))
    assert lab.target_count == 9
    for key, word in NINE.items():
        cards = [c for c in page.text.split("source:") if key in c]
        assert cards, f"{key} is not on the page"
        assert word in cards[0], f"{key}: {word} is not beside it"
    shown = {r.names[0]: r.word for r in lab.rows}
    assert shown == NINE


def test_lab_markdown_shows_the_nine_targets_and_words(lab):
    text = markdown_of(lab)
    for key, word in NINE.items():
        line = next((x for x in text.splitlines() if x.startswith(f"- **{key}**")), None)
        assert line is not None, f"{key} has no line"
        section = text[: text.index(line)].rsplit("### ", 1)[1]
        assert section.startswith(f"`{word}`"), f"{key} is listed under {section.splitlines()[0]}"


def test_summary_counts_words_most_urgent_first_in_the_order_of_causes_md(lab):
    order = [w for w in ORDER_WORDS + EXTRA_WORDS if w in NINE.values()]
    assert [s.word for s in lab.summary] == order
    assert lab.summary[0].word == "no-runtimeclass"  # admission first
    assert all(s.targets == 1 for s in lab.summary)
    rows = [r for r in read_page(html_of(lab)).rows if r and r[0] in order]
    assert [r[0] for r in rows] == order
    assert rows[-1][2] == "lab/exhausted"  # which targets, by name
    # one target per word: the summary says that target's own action, not the contract's general one
    assert rows[-1][3] == "wait for 1 nvidia.com/gpu to be free on one node, or add capacity"


def test_summary_says_the_targets_shared_action_else_the_contracts_and_points_below():
    def row(name: str, action: str) -> TargetRow:
        return TargetRow(word="exhausted", reason=name, next_action=action, kind="Pod", owner=None, names=(name,),
                         source="pods.json")
    same = summarise([row("a", "free 1 gpu on n1"), row("b", "free 1 gpu on n1")])
    assert same[0].next_action == "free 1 gpu on n1"
    mixed = summarise([row("a", "free 1 gpu on n1"), row("b", "free 1 gpu on n2")])
    assert mixed[0].next_action == "wait for free slots, or add capacity; each target's own below"


def test_header_has_context_server_version_collection_time_and_missing_kinds(lab):
    text = read_page(html_of(lab)).text
    manifest = json.loads((LAB / "manifest.json").read_text())
    for value in (manifest["context"], manifest["kubectl"]["serverVersion"], manifest["completed"]):
        assert value in text
    # The lab has no owners' files: the header says so, kind by kind.
    # (and, recorded before DRA was collected, none of the resource.k8s.io kinds)
    from analyzer.bundle.catalog import KINDS
    absent = sorted(k.name for k in KINDS if not (LAB / k.file).exists())
    # One line, and a two-column definition list: a value sits beside its label, never under another one.
    assert (f"collected with a manifest (manifest.json); {len(KINDS) - len(absent)} kinds present, "
            f"{len(absent)} optional kinds absent ({', '.join(absent)})") in text
    assert ".meta{display:grid;grid-template-columns:max-content 1fr;" in html_of(lab)
    assert "valid: no schema, checksum or model finding" in text


def test_header_without_manifest_and_with_validation_findings(tmp_path):
    def break_one(items):
        items[1]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots"
        return items
    root = copy_lab(tmp_path, drop=("runtimeclasses",), edit={"pods": break_one})
    data = data_of(root)
    text = read_page(html_of(data)).text
    assert "not recorded (no manifest.json)" in text
    from analyzer.bundle.catalog import KINDS
    absent = sorted(k.name for k in KINDS if not (LAB / k.file).exists() or k.name == "runtimeclasses")
    assert f"collected by hand: no manifest; {len(KINDS) - len(absent)} kinds present, {len(absent)} optional kinds " \
           f"absent ({', '.join(absent)})" in text
    assert data.header.problem_count >= 1
    assert f"{data.header.problem_count} finding(s)" in text
    assert "pods.json" in data.header.problems[0] and "$.items[1]" in data.header.problems[0]
    assert "finding(s)" in markdown_of(data)


# -- the GPU occupancy picture ------------------------------------------------------------------------------

def test_lab_picture_gpu_ok_is_full_held_by_filler_a_3_and_filler_b_1(lab):
    row = node_row(read_page(html_of(lab)), "gpu-ok")
    node, state, resource, _bar, alloc, used, free, held, waiting = row
    assert (resource, alloc, used, free) == ("nvidia.com/gpu", "4", "4", "0")
    assert held == "lab/filler-a 3, lab/filler-b 1"  # finished-job (Succeeded) holds nothing
    assert "finished-job" not in " ".join(row)
    assert waiting == "lab/exhausted"  # named: it asks for it (nodeSelector hostname gpu-ok)


def test_lab_picture_alloczero_noplugin_and_tainted(lab):
    page = read_page(html_of(lab))
    alloczero = node_row(page, "gpu-alloczero")
    assert alloczero[4] == "0 of 4" and "allocatable 0 of capacity 4" in alloczero[1]
    noplugin = node_row(page, "gpu-noplugin")
    assert noplugin[4] == "—" and "no nvidia.com/gpu in status.capacity" in noplugin[1]
    tainted = node_row(page, "gpu-tainted")
    # lab/taint waits for it without the toleration: its 4 free GPUs are not free for the waiting pods
    assert tainted[4:7] == ["4", "0", "0+4 behind the taint"]
    assert "tainted nvidia.com/gpu=present:NoSchedule" in tainted[1]
    assert tainted[8] == "lab/taint (taint not tolerated)"


def test_lab_picture_in_markdown(lab):
    rows = {cells[0]: cells for cells in _md_table_rows(markdown_of(lab)) if len(cells) == 9}
    assert rows["gpu-ok"][3:8] == ["████", "4", "4", "**0**", "lab/filler-a 3, lab/filler-b 1"]
    assert rows["gpu-alloczero"][4] == "0 of 4" and rows["gpu-alloczero"][3] == "····"
    assert rows["gpu-noplugin"][4] == "—"
    assert rows["gpu-tainted"][1] == "tainted nvidia.com/gpu=present:NoSchedule"
    assert rows["gpu-tainted"][3] == "▒▒▒▒" and rows["gpu-tainted"][6] == "**0** (+4 behind the taint)"


def _independent_gpu_use(bundle: Path) -> dict[str, int]:
    """nvidia.com/gpu held per node: non-terminated pods bound by spec.nodeName (the scheduler's NodeInfo counts
    an assigned pod until it terminates), each pod's request as Kubernetes' resourcehelper.PodRequests takes it:
    max(sum over containers, largest init container); extended resources have request = limit. The lab has no
    sidecars or overhead. Read straight from pods.json, nothing of the analyzer."""
    out: dict[str, int] = {}
    for pod in json.loads((bundle / "pods.json").read_text())["items"]:
        node = pod["spec"].get("nodeName")
        if not node or pod["status"].get("phase") in ("Succeeded", "Failed"):
            continue
        regular = sum(int((c.get("resources") or {}).get("limits", {}).get("nvidia.com/gpu", 0)) for c in pod["spec"]["containers"])
        init = max((int((c.get("resources") or {}).get("limits", {}).get("nvidia.com/gpu", 0))
                    for c in pod["spec"].get("initContainers") or ()), default=0)
        out[node] = out.get(node, 0) + max(regular, init)
    return out


def test_picture_used_equals_an_independent_sum_on_the_lab():
    data = data_of(LAB)
    used = {n.name: b.used for p in data.pools for n in p.nodes for b in n.resources if b.resource == "nvidia.com/gpu"}
    expected = _independent_gpu_use(LAB)
    assert used == {n: expected.get(n, 0) for n in used}
    assert used["gpu-ok"] == 4


def test_the_report_feeds_occupancy_from_the_analysis_with_an_independent_sum_on_a_generated_bundle(generated_large, gen500_data):
    """The report builds the picture from the model the analysis already holds (no second parse of pods.json);
    on 500 generated nodes its nvidia.com/gpu use equals the test's own sum over pods.json, node by node."""
    used = {n.name: b.used for p in gen500_data.pools for n in p.nodes for b in n.resources
            if b.resource == "nvidia.com/gpu"}
    expected = _independent_gpu_use(generated_large)
    assert len(used) > 100
    assert used == {n: expected.get(n, 0) for n in used}


def test_generated_picture_has_pools_tainted_and_empty_nodes_and_mig(gen500_data):
    pools = {p.name for p in gen500_data.pools}
    assert len(pools) >= 3
    nodes = [n for p in gen500_data.pools for n in p.nodes]
    assert any(s.startswith("tainted nvidia.com/gpu") for n in nodes for s in n.states)
    assert any(b.used == 0 and (b.allocatable or 0) > 0 for n in nodes for b in n.resources)  # empty nodes shown
    assert any(b.resource.startswith("nvidia.com/mig-") for n in nodes for b in n.resources)
    assert any(s.startswith("allocatable 0 of capacity") for n in nodes for b in n.resources for s in b.states)


# -- grouping ---------------------------------------------------------------------------------------------

def _row(name: str, word: str = "exhausted", reason: str = "no candidate (1) has room", owner: str | None = "ReplicaSet lab/web-5d8f") -> TargetRow:
    return TargetRow(word=word, reason=reason, next_action="", kind="Pod", owner=owner, names=(name,), source="pods.json")


def test_group_rows_joins_same_word_reason_and_owner_only():
    rows = [_row(f"lab/web-5d8f-{i:03}") for i in range(150)]
    rows += [_row("lab/other-1", owner="ReplicaSet lab/other"), _row("lab/web-x", reason="no candidate (2) has room")]
    rows += [_row("lab/rc", word="no-runtimeclass", reason="RuntimeClass 'nvidia' is missing", owner=None)]
    grouped = group_rows(rows)
    assert [(g.word, g.count) for g in grouped] == [("no-runtimeclass", 1), ("exhausted", 150), ("exhausted", 1), ("exhausted", 1)]
    assert grouped[1].names[0] == "lab/web-5d8f-000" and len(set(grouped[1].names)) == 150
    assert [(s.word, s.targets, s.rows) for s in summarise(grouped)] == [("no-runtimeclass", 1, 1), ("exhausted", 152, 3)]


def _replicas(items: list[dict], count: int) -> list[dict]:
    base = lab_pod("exhausted")
    for i in range(count):
        pod = json.loads(json.dumps(base))
        pod["metadata"].update({"name": f"web-5d8f-{i:05}", "uid": f"00000000-0000-0000-0000-{i:012}"})
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f",
                                               "uid": "11111111-2222-3333-4444-555555555555", "controller": True,
                                               "blockOwnerDeletion": True}]
        items.append(pod)
    return items


def test_150_replicas_of_one_deployment_are_one_row_with_a_count_and_the_names_collapsed(tmp_path):
    root = copy_lab(tmp_path, edit={"pods": lambda items: _replicas(items, 150)})
    data = data_of(root)
    [group] = [r for r in data.rows if r.owner == "ReplicaSet lab/web-5d8f"]
    assert group.count == 150 and group.word == "exhausted"
    markup = html_of(data)
    page = read_page(markup)
    assert "150 ×" in page.text and "all 150 names" in page.text
    assert markup.count("<details>") == 1
    assert all(f"lab/web-5d8f-{i:05}" in page.text for i in range(150))
    assert [s.targets for s in data.summary if s.word == "exhausted"] == [151]  # lab/exhausted has no owner: its own row
    text = markdown_of(data)
    assert "**150 ×** ReplicaSet lab/web\\-5d8f" not in text  # '-' is not escaped: names stay readable
    assert "**150 ×** ReplicaSet lab/web-5d8f" in text and "<details><summary>150 names</summary>" in text


# -- nearest nodes (causes.md, Evidence), rendered from hand-made rows -----------------------------------

def _with_rows(*rows: TargetRow) -> ReportData:
    grouped = group_rows(rows)
    header = Header(bundle="b", context="ctx", server_version="v1.36.2", collected="2026-11-29T17:17:20Z", collector=None,
                    missing=(), problems=(), problem_count=0)
    return ReportData(header=header, summary=tuple(summarise(grouped)), rows=tuple(grouped), pools=())


def test_nearest_nodes_are_rendered_when_present_and_none_is_said():
    taint = TargetRow(word="untolerated-taint", reason="every candidate (1) is excluded by a taint", next_action="add the toleration",
                      kind="Pod", owner=None, names=("lab/taint",), source="pods.json $.items[8]",
                      nearest=(NearNode(node="gpu-tainted", reason="only the taint nvidia.com/gpu=present:NoSchedule"),))
    stuck = TargetRow(word="selector-mismatch", reason="no node matches", next_action="fix", kind="Pod", owner=None,
                      names=("lab/selector-mismatch",), source="pods.json $.items[7]", nearest=())
    plain = TargetRow(word="exhausted", reason="no room", next_action="wait", kind="Pod", owner=None, names=("lab/exhausted",),
                      source="pods.json $.items[1]", nearest=None)
    data = _with_rows(taint, stuck, plain)
    text = read_page(html_of(data)).text
    assert "gpu-tainted: only the taint nvidia.com/gpu=present:NoSchedule" in text
    assert "none — no node would take it after one change" in text
    assert text.count("Nearest nodes") == 2  # not for the row without the field
    md = markdown_of(data)
    assert "nearest nodes: **gpu-tainted**: only the taint nvidia.com/gpu=present:NoSchedule" in md
    assert "nearest nodes: none (no node would take it after one change)" in md
    assert md.count("nearest nodes") == 2


def test_scheduler_sentence_beside_the_rebuilt_one():
    said = "0/4 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/4 nodes are available"
    row = TargetRow(word="untolerated-taint", reason="r", next_action="n", kind="Pod", owner=None, names=("lab/taint",),
                    source="s", scheduler=SchedulerLines(said=said, source="PodScheduled condition",
                                                         rebuilt="0/4 nodes are available: 2 node(s) had untolerated taint(s).",
                                                         comparison="differs: the world changed"))
    page = read_page(html_of(_with_rows(row)))
    assert said in page.text and "0/4 nodes are available: 2 node(s) had untolerated taint(s)." in page.text
    assert "The scheduler said" in page.text and "Rebuilt from the bundle" in page.text
    assert "differs: the world changed" in page.text


# -- hostile names: escaped in both formats ------------------------------------------------------------------

HOSTILE_POD = "evil<script>alert(1)</script>|`x`*y*_z_[l](http://e.x)<u>u</u>\x1b[2J\x07"
HOSTILE_HOLDER = "hold<iframe src=//e.x></iframe>|`h`"
HOSTILE_NODE = "gpu-<u>t</u>|`n`\x1b]0;pwned\x07"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    def pods(items):
        for p in items:
            if p["metadata"]["name"] == "taint":
                p["metadata"]["name"] = HOSTILE_POD
            elif p["metadata"]["name"] == "filler-a":
                p["metadata"]["name"] = HOSTILE_HOLDER
        return items

    def nodes(items):
        return [renamed_node("gpu-tainted", HOSTILE_NODE) if n["metadata"]["name"] == "gpu-tainted" else n for n in items]
    root = copy_lab(tmp_path_factory.mktemp("hostile"), edit={"pods": pods, "nodes": nodes})
    data = data_of(root)
    assert {r.names[0] for r in data.rows} >= {f"lab/{HOSTILE_POD}"}
    return data


def test_hostile_names_are_text_in_html_never_markup(hostile):
    markup = html_of(hostile)
    page = read_page(markup)
    assert not {"script", "u", "iframe", "img"} & set(page.tags)
    assert not [a for a in page.attrs if a[1].startswith("on") or (a[1] == "src")]
    for raw in ("\x1b", "\x07", "<script", "<u>", "<iframe"):
        assert raw not in markup
    for name in (f"lab/{HOSTILE_POD}", f"lab/{HOSTILE_HOLDER}", HOSTILE_NODE):
        assert printable(name) in page.text, f"{name!r} is not shown as text"
    assert f'content="{CSP}"' in markup


def _md_cells(line: str) -> list[str]:
    """A GFM table row split on unescaped pipes, as GitHub does."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _md_table_rows(text: str) -> list[list[str]]:
    return [_md_cells(x) for x in text.splitlines() if x.startswith("|") and not x.startswith("|---")]


def test_hostile_names_are_escaped_in_markdown(hostile):
    text = markdown_of(hostile)
    for raw in ("\x1b", "\x07", "<script", "<u>", "<iframe"):
        assert raw not in text
    assert "\\`x\\`" in text and "\\|" in text and "\\*y\\*" in text and "\\[l\\]" in text
    # Every occupancy row keeps its nine cells: no name's '|' opened a new one.
    node_rows = [r for r in _md_table_rows(text) if len(r) >= 8 and r[2].startswith("nvidia.com")]
    assert len(node_rows) == 4 and all(len(r) == 9 for r in node_rows)
    held = next(r for r in node_rows if r[0] == "gpu-ok")[7]
    assert held.startswith("lab/hold&lt;iframe src=//e.x&gt;&lt;/iframe&gt;\\|\\`h\\` 3")
    # The only code spans are ours (cause words, commands): a name's backtick never opens one.
    ours = re.compile(r"`(?:[a-z]+(?:-[a-z]+)*|gpu-triage [a-z -]+)`")
    for line in text.splitlines():
        assert not re.search(r"(?<!\\)`", ours.sub("", line)), line


# -- size: the generated bundle ------------------------------------------------------------------------------------

def test_markdown_on_a_500_node_bundle_fits_a_ticket_comment_and_says_what_it_left_out(gen500_data):
    text = markdown_of(gen500_data)
    assert len(text) <= LIMIT
    assert "Shortened to stay under 65,000 characters" in text and "left out" in text
    for s in gen500_data.summary:  # every word and its count survive the shortening
        assert f"| `{s.word}` | {s.targets} |" in text
    assert f"| **total** | **{gen500_data.target_count}** |" in text


def test_markdown_shortens_further_for_a_smaller_limit(gen500_data):
    text = render_text(gen500_data, limit=6_000)
    assert len(text) <= 6_000
    assert "Shortened to stay under 6,000 characters" in text or "Cut here" in text


def test_html_on_a_500_node_bundle_is_small_and_names_every_target(gen500_data):
    markup = html_of(gen500_data)
    assert len(markup.encode()) <= 5 * 2**20
    text = read_page(markup).text
    names = [n for r in gen500_data.rows for n in r.names]
    assert len(names) == gen500_data.target_count > 400
    missing = [n for n in names if n not in text]
    assert not missing, missing[:5]


# -- the command ---------------------------------------------------------------------------------------------

def _cli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def test_report_writes_report_html_in_the_current_directory_by_default(tmp_path):
    proc = _cli(tmp_path, "report", LAB)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "lab/exhausted" in page
    assert "report written to report.html" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left beside it


def test_report_markdown_to_stdout_and_to_a_file(tmp_path):
    proc = _cli(tmp_path, "report", LAB, "-o", "markdown", "--file", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# GPU triage: lab-v1.36\n")
    proc = _cli(tmp_path, "report", LAB, "-o", "markdown", "--file", tmp_path / "t.md")
    assert proc.returncode == 0 and (tmp_path / "t.md").read_text() == _cli(tmp_path, "report", LAB, "-o", "markdown", "--file", "-").stdout


def test_report_errors_are_one_line_and_exit_2(tmp_path):
    for args, expected in (((tmp_path / "nope",), "nope: no such file or directory"),
                           ((LAB, "--file", tmp_path / "no" / "dir.html"), "dir.html: cannot write the report")):
        proc = _cli(tmp_path, "report", *args)
        assert proc.returncode == 2
        assert expected in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_report_of_a_partly_invalid_bundle_is_written_and_exits_2(tmp_path):
    def break_one(items):
        items[1]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots"
        return items
    root = copy_lab(tmp_path, edit={"pods": break_one})
    proc = _cli(tmp_path, "report", root, "--file", tmp_path / "r.html")
    assert proc.returncode == 2
    assert "partly invalid" in proc.stderr
    assert "finding(s)" in read_page((tmp_path / "r.html").read_text()).text


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_the_report_shows_each_pods_nearest_nodes(tmp_path, fmt):
    # causes.md, Evidence: lab/taint is one taint away from gpu-tainted, lab/exhausted one freed GPU away
    # from gpu-ok, and a pod no node would take after one change says so.
    out = tmp_path / f"report.{fmt}"
    r = run_cli("report", LAB, "-o", fmt, "--file", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "only the taint nvidia.com/gpu=present:NoSchedule" in text
    assert "only 0 of 4 nvidia.com/gpu free, 1 asked: lab/filler-a holds 3, lab/filler-b holds 1" in text
    assert "gpu-tainted" in text and "gpu-ok" in text
    assert "one change" in text  # lab/selector-mismatch: no node is one change away


def test_explain_escapes_a_line_break_in_a_name_so_no_line_is_forged(tmp_path):
    """A pod named "a<newline>FORGED line": `why --explain` keeps it on the target's own line, escaped."""
    bundle = copy_bundle(tmp_path)
    (bundle / "manifest.json").unlink()
    doc = json.loads((bundle / "pods.json").read_text())
    pod = json.loads(json.dumps(next(p for p in doc["items"] if p["metadata"]["name"] == "exhausted")))
    pod["metadata"].update(name="a\nFORGED line", uid="forged-uid")
    doc["items"].append(pod)
    (bundle / "pods.json").write_text(json.dumps(doc))
    proc = run_cli("why", bundle, "lab/a\nFORGED line", "--explain")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "lab/a\\nFORGED line: exhausted"
    assert not any(line.startswith("FORGED") for line in proc.stdout.splitlines())
