"""What a new user trips on in the first hour, each as that user would notice it: the CLI's kubectl habits
(-o is the format everywhere, help, errors, --version, exit codes, completion, colour), the table's width, the
occupancy picture's tainted GPUs, the DRA no-slice bundle in `nodes`, the preemption sentence, an edited bundle,
the replay's one clock, names the bundle does not hold, the ticket report said once, and the collector's help."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import LAB, RECORDINGS, REPO, copy_bundle
from report_pages import data_of, html_of, markdown_of, read_page

from analyzer import __version__
from analyzer.cli_help import EXIT_CODES

DRA_EXHAUSTED = RECORDINGS / "dra-exhausted-v1.36"
DRA_NO_SLICE = RECORDINGS / "dra-no-slice-v1.36"
COMMANDS = ("validate", "analyze", "why", "nodes", "diff", "report", "serve", "shell", "version")


def cli(*args: object, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("GPU_TRIAGE_DEBUG", "COLUMNS", "NO_COLOR")}
    return subprocess.run([sys.executable, "-m", "analyzer", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or REPO, env={**base, **env}, timeout=120)


# -- 1. -o is the format on every command; the report's file is --file ------------------------------------------

def test_report_dash_o_is_the_format_and_the_file_is_its_own_flag(tmp_path):
    md = cli("report", LAB, "-o", "markdown", "--file", "-")
    assert md.returncode == 0 and md.stdout.startswith("# GPU triage: lab-v1.36\n"), md.stderr
    written = cli("report", LAB, "--output", "markdown", cwd=tmp_path)  # was: HTML written to a file named `markdown`
    assert written.returncode == 0 and (tmp_path / "report.md").read_text().startswith("# GPU triage")
    assert not (tmp_path / "markdown").exists()
    by_extension = cli("report", LAB, "--file", tmp_path / "t.md")
    assert by_extension.returncode == 0 and (tmp_path / "t.md").read_text().startswith("# GPU triage")


@pytest.mark.parametrize(("args", "needle"), [
    (("-o", "r.md"), "use --file r.md"),
    (("-o", "markdown", "--file", "r.html"), "the extension .html does not fit the markdown format"),
    (("--file", "r.json"), "the extension .json does not fit the html format"),
])
def test_a_report_file_whose_extension_disagrees_is_refused_and_nothing_is_written(tmp_path, args, needle):
    r = cli("report", LAB, *args, cwd=tmp_path)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


# -- 2. reasons fit the terminal, never cut ---------------------------------------------------------------------

def test_table_reasons_wrap_to_the_width_and_keep_every_number_and_name_whole():
    verdicts = json.loads(cli("analyze", DRA_EXHAUSTED, "-o", "json").stdout)["verdicts"]
    table = cli("analyze", DRA_EXHAUSTED, COLUMNS="80").stdout
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert "…" not in table
    joined = " ".join(table.split())
    for v in verdicts:  # the waiter's reason: "… (class gpu.example.com): 0 of 2 matching device(s) free, 1 needed; …"
        assert " ".join(v["reason"].split()) in joined
    wide = cli("analyze", DRA_EXHAUSTED, "-o", "wide", COLUMNS="80").stdout
    assert any(v["reason"] in line for v in verdicts for line in wide.splitlines())


# -- 3. tainted GPUs are not free for the pods that wait; the waiting pods named ---------------------------------

def test_the_report_does_not_call_tainted_gpus_free_and_names_the_waiting_pods():
    data = data_of(LAB)
    (pool,) = data.pools
    assert pool.totals() == [("nvidia.com/gpu", 8, 4, 0, 4)]  # 0 free for the waiting pods, 4 behind the taint
    assert dict(pool.state_counts()) == {"allocatable 0": 1, "no plugin": 1, "tainted": 1}  # nothing is cordoned
    bars = {n.name: n.resources[0] for n in pool.nodes}
    assert (bars["gpu-tainted"].usable, bars["gpu-tainted"].behind_taint) == (0, 4)
    assert bars["gpu-tainted"].wanting == ("lab/taint",) and bars["gpu-ok"].wanting == ("lab/exhausted",)
    text = read_page(html_of(data)).text
    assert "0 free, 4 behind a taint" in text and "cordoned" not in text


def test_a_long_dra_resource_name_reads_as_its_device_class():
    markup = html_of(data_of(DRA_EXHAUSTED))
    assert "DeviceClass gpu.example.com" in read_page(markup).text
    assert ">deviceclass.resource.kubernetes.io/gpu.example.com<" not in markup


# -- 4. nodes on the DRA no-slice bundle ---------------------------------------------------------------------------

def test_nodes_on_the_dra_no_slice_bundle_lists_dn1_without_blaming_a_selector():
    r = cli("nodes", DRA_NO_SLICE)
    assert r.returncode == 0, r.stderr
    assert "No node offers" not in r.stdout and "nodeSelector matches no node" not in r.stdout
    (row,) = [line for line in r.stdout.splitlines() if line.startswith("dn1 ")]
    assert "no device of the class published (no ResourceSlice)" in row and row.endswith("1: lab/no-slice")


# -- 5. the preemption sentence, as kube-scheduler means it --------------------------------------------------------

@pytest.mark.parametrize(("bundle", "pod"), [(DRA_EXHAUSTED, "lab/waiter"), (LAB, "lab/taint"), (LAB, "lab/selector-mismatch")])
def test_preemption_not_helpful_is_not_explained_as_requests_too_large(bundle, pod):
    text = cli("why", bundle, pod, "--explain").stdout
    assert "requests exceed what nodes can ever offer" not in text
    assert "preemption: would not help on any node (what stops the pod there" in text


def test_no_preemption_victims_is_said_per_node():
    text = cli("why", LAB, "lab/exhausted", "--explain").stdout
    assert ("on 1 of 4 node(s) other pods hold what it needs, but none has a lower priority to evict") in text


# -- 6. an edited bundle: the right way round, and the same for every command ---------------------------------------

def test_an_edited_pods_json_is_named_the_right_way_round_by_every_command(tmp_path):
    b = copy_bundle(tmp_path)
    recorded = (b / "pods.json").stat().st_size
    doc = json.loads((b / "pods.json").read_text())
    doc["items"][0]["metadata"]["labels"] = {"what-if": "yes"}
    (b / "pods.json").write_text(json.dumps(doc, indent=2))
    now = (b / "pods.json").stat().st_size
    said = f"pods.json changed after collection: {now} bytes now, {recorded} when collected"
    for args in (("analyze", b), ("why", b, "lab/exhausted"), ("nodes", b), ("diff", LAB, b),
                 ("report", b, "--file", tmp_path / "r.html")):
        r = cli(*args)
        assert r.returncode == 0, (args, r.stderr)
        warning = [line for line in r.stderr.splitlines() if said in line]  # diff says which bundle first
        assert len(warning) == 1 and warning[0].startswith("gpu-triage: warning: "), (args, r.stderr)
        assert "expected" not in r.stderr and "could not be read" not in r.stderr, (args, r.stderr)
    assert said in read_page((tmp_path / "r.html").read_text()).text
    checked = cli("validate", b)
    assert checked.returncode == 1 and said in checked.stdout


# -- 7. the replay: one clock ---------------------------------------------------------------------------------------

def test_replay_moves_each_answers_times_so_every_age_counts_from_collection():
    from analyzer.replay.api import Api, Request
    from analyzer.replay.store import load_store

    store = load_store(LAB)
    pod = json.loads(Api(store).handle(Request(method="GET", path="/api/v1/namespaces/lab/pods/exhausted")).body)
    original = json.loads((LAB / "pods.json").read_text())["items"]
    (before,) = [p for p in original if p["metadata"]["name"] == "exhausted"]
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    recorded = datetime.fromisoformat(before["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    # kubectl's own age (its clock - the time it is given) is the age at collection, give or take a second
    assert abs((datetime.now(UTC) - created) - (store.collected - recorded)).total_seconds() <= 2
    assert pod["metadata"].get("labels") == before["metadata"].get("labels")
    unmoved = json.loads(Api(load_store(LAB, shift_times=False)).handle(
        Request(method="GET", path="/api/v1/namespaces/lab/pods/exhausted")).body)
    assert unmoved == before or unmoved["metadata"]["creationTimestamp"] == before["metadata"]["creationTimestamp"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="the replay is checked with the real kubectl")
def test_readme_replay_commands_run_against_the_bundles_they_name(tmp_path):
    script = ("kubectl get pods -n lab exhausted --no-headers; "
              "kubectl describe pod -n lab exhausted | grep FailedScheduling")
    r = cli("shell", LAB, "--", "sh", "-c", script, HOME=str(tmp_path))
    assert r.returncode == 0, r.stderr
    get_age = r.stdout.splitlines()[0].split()[-1]
    event_age = r.stdout.splitlines()[1].split()[2]
    assert get_age.endswith("s") and event_age.endswith("s"), r.stdout  # both seconds, as at collection; not 2d4h
    claims = cli("shell", DRA_EXHAUSTED, "--", "kubectl", "get", "resourceclaims", "-A", HOME=str(tmp_path))
    assert claims.returncode == 0 and "waiter-gpu" in claims.stdout, claims.stderr


# -- 8. names the bundle does not hold ------------------------------------------------------------------------------

def test_unknown_namespace_gpu_pod_and_a_typo_are_said():
    r = cli("analyze", LAB, "-n", "nosuch", "--gpu-pod", "lab/nosuch", "-o", "words")
    assert "-n nosuch: no pod of this bundle is in namespace 'nosuch' (namespaces with pods: lab, quota-lab)" in r.stderr
    assert "--gpu-pod lab/nosuch: no such pod in pods.json" in r.stderr
    typo = cli("why", LAB, "lab/exhaused")
    assert typo.returncode == 2 and "did you mean lab/exhausted?" in typo.stderr


# -- 9 and the CLI people like: help, errors, version, exit codes, completion, colour -------------------------------

@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_python_type_names_and_every_flag_whole(command):
    text = cli(command, "--help").stdout
    assert text.startswith(f"Usage: gpu-triage {command} [OPTIONS]"), text
    assert not re.search(r"<(bool|int|path|list\[|str)|\{bundle\}|\{BUNDLE\}|-…", text), text
    if command == "serve":
        assert "--listen-any-address-i-know-this-exposes-the-bundle" in text
    if command not in ("version",):
        assert "Examples:" in text


def test_collect_help_looks_like_the_others_and_names_itself():
    text = cli("collect", "--help").stdout
    assert text.startswith("Usage: gpu-triage collect [OPTIONS]") and "\nOptions:\n" in text
    assert "  gpu-triage collect --context prod --archive" in text and "python3 collect.py" not in text


def test_bare_gpu_triage_prints_its_help_as_bare_kubectl_does():
    r = cli()
    assert r.returncode == 0 and r.stdout.startswith("Usage: gpu-triage [OPTIONS] COMMAND") and r.stderr == ""


def test_version_everywhere():
    assert cli("--version").stdout == f"gpu-triage {__version__}\n"
    assert json.loads(cli("analyze", LAB, "-o", "json").stdout)["gpu_triage_version"] == __version__
    assert json.loads(cli("nodes", LAB, "-o", "json").stdout)["gpu_triage_version"] == __version__
    assert json.loads(cli("diff", LAB, LAB, "-o", "json").stdout)["gpu_triage_version"] == __version__
    assert f"gpu-triage {__version__}" in read_page(html_of(data_of(LAB))).text
    assert f"gpu-triage {__version__}" in markdown_of(data_of(LAB))


def test_option_errors_read_like_kubectl():
    r = cli("analyze", LAB, "-o", "yaml")
    assert r.returncode == 2
    assert r.stderr == ("error: invalid value for '-o' / '--output': 'yaml' is not one of table, wide, json, words\n"
                        "See 'gpu-triage analyze --help' for usage.\n")


def test_a_bad_yaml_manifest_names_its_line(tmp_path):
    bad = tmp_path / "pod.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: {a: b}\nspec: {}\n")
    r = cli("analyze", LAB, "--manifest", bad)
    # libyaml says "did not find expected", PyYAML's own parser "expected": the line and column are the point
    assert r.returncode == 2 and "pod.yaml: not YAML or JSON: line 4, column 1: " in r.stderr and "expected ',' or '}'" in r.stderr


def test_the_plugin_says_kubectl_gpu_triage(tmp_path):
    plugin = tmp_path / "kubectl-gpu_triage"
    plugin.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO)!r})\nfrom analyzer.cli import main\nmain()\n")
    plugin.chmod(0o755)
    r = subprocess.run([str(plugin), "analyze"], capture_output=True, text=True, timeout=60)
    assert "See 'kubectl gpu-triage analyze --help' for usage." in r.stderr


def test_exit_codes_are_one_table_in_the_readme_and_in_help():
    readme = (REPO / "README.md").read_text()
    help_text = cli("--help").stdout
    assert "Exit status:" in help_text
    for code, meaning in EXIT_CODES:
        assert f"  {code:<3}  {meaning}" in help_text
        assert re.search(rf"^\| {code} \| ", readme, re.MULTILINE), code
    assert "gpu-triage --install-completion" in readme and "--install-completion" in help_text


def test_shell_completion_completes_commands_and_formats():
    r = cli(_GPU_TRIAGE_COMPLETE="complete_bash", COMP_WORDS="gpu-triage analyze x -o ", COMP_CWORD="4")
    assert r.stdout.split() == ["table", "wide", "json", "words"]


def _on_a_terminal(*args: object, **env: str) -> bytes:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout is the terminal
        os.chdir(REPO)
        os.execve(sys.executable, [sys.executable, "-m", "analyzer", *map(str, args)], {**base, "TERM": "xterm", **env})
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out


def test_colour_only_on_a_terminal_and_never_with_no_color():
    assert b"\x1b[" in _on_a_terminal("analyze", LAB, "-q")
    assert b"\x1b[" not in _on_a_terminal("analyze", LAB, "-q", NO_COLOR="1")
    assert "\x1b[" not in cli("analyze", LAB).stdout


# -- 10. the ticket report says each thing once, in the reader's words -------------------------------------------------

def test_the_report_says_each_thing_once_without_internal_words_or_a_local_path(tmp_path):
    markup = html_of(data_of(LAB))
    text = read_page(markup).text
    assert text.count("is the same sentence for three causes") == 1  # was in every card
    assert text.count("is not a pod to evict") == 1
    assert markup.count('class="w ') == 2 * 9  # each word: its summary row and its section, never again in a card
    for internal in ("causes.md", "shape(s)", "Attempt"):
        assert internal not in text, internal
    assert str(REPO) not in markup and "dumps/lab-seven-states-v1.36" not in markup
    # A pod's own facts are its own; what is said about every pod is said once. (Two pods may have had the same
    # scheduler sentence: that is the data, not boilerplate.)
    paragraphs = [p for p in text.split("\n") if len(p) > 40 and not p.startswith("The scheduler said")]
    assert len(paragraphs) == len(set(paragraphs)), [p for p in paragraphs if paragraphs.count(p) > 1]
    bare = copy_bundle(tmp_path)
    (bare / "manifest.json").unlink()
    title = re.search(r"<h1>(.*)</h1>", html_of(data_of(bare))).group(1)
    assert title == "GPU triage: lab" and str(tmp_path) not in html_of(data_of(bare))


# -- 11. collect without a cluster --------------------------------------------------------------------------------------

def test_collect_without_a_context_does_not_say_none(tmp_path):
    r = cli("collect", "--kubectl", shutil.which("false") or "/bin/false", "--output-dir", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 1
    assert "context None" not in r.stderr and "collecting from kubectl's default cluster (no context set)" in r.stderr


# -- 12. why --explain on an attempt --------------------------------------------------------------------------------

def test_explain_of_an_attempt_is_words_not_json():
    text = cli("why", LAB, "quota-lab/quota-exceeded", "--explain").stdout
    assert '{"api_server"' not in text and '{"command"' not in text
    assert "The API server's answer (kubectl apply -f manifests/41-pod-quota-exceeded.yaml, exit 1):" in text
    assert "  quota gpu-quota: requests.nvidia.com/gpu used 0 + requested 2 > hard 1" in text


# -- the README's examples, as written ---------------------------------------------------------------------------------

def test_the_readmes_nodes_example_is_what_nodes_prints():
    readme = (REPO / "README.md").read_text()
    block = readme.split("$ gpu-triage nodes dumps/lab-seven-states-v1.36\n", 1)[1].split("```", 1)[0]
    assert cli("nodes", LAB).stdout == block


def test_nodes_never_cuts_a_long_node_name(tmp_path):
    from conftest import copy_lab, renamed_node

    long_name = "gke-ml-prod-h100-spot-pool-with-a-very-long-name-800698b9-dz8k-extra-x"  # 70 characters
    bundle = copy_lab(tmp_path, edit={"nodes": lambda items: [*items, renamed_node("gpu-ok", long_name)]})
    out = cli("nodes", bundle).stdout
    assert long_name in out and "…" not in out


def test_the_readmes_diff_example_runs_as_written(tmp_path):
    """The what-if block: its python edit, run on a copy (in tmp_path, not /tmp), then diff, prints what it shows."""
    readme = (REPO / "README.md").read_text()
    # It writes inside the clone (dumps/ keeps only the shipped examples under git), never outside it.
    block = readme.split("$ rm -rf dumps/lab-after && cp -r dumps/lab-seven-states-v1.36 dumps/lab-after\n", 1)[1]
    assert "/tmp/" not in block.split("```", 1)[0]
    script = block.split("$ python3 - <<'EOF'\n", 1)[1].split("EOF\n", 1)[0]
    shown = block.split("$ gpu-triage diff dumps/lab-seven-states-v1.36 dumps/lab-after\n", 1)[1].split("```", 1)[0]
    after = tmp_path / "lab-after"
    shutil.copytree(LAB, after)
    subprocess.run([sys.executable, "-"], input=script.replace("dumps/lab-after", str(after)), text=True, check=True)
    out = cli("diff", "dumps/lab-seven-states-v1.36", after).stdout
    assert out == shown.replace("dumps/lab-after", str(after))
