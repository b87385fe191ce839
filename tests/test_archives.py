"""Archives a ticket already carries: the repository's real recordings written as a troubleshoot support bundle and
as a must-gather (scripts/archive_layouts.py, written from replicatedhq/troubleshoot's
pkg/collect/cluster_resources.go and openshift/oc's pkg/cli/admin/inspect, not from the reader) give the same
words as the original, except insufficient-evidence where the format lacks a kind the word needs."""

from __future__ import annotations

import importlib.util
import json
import tarfile
from functools import cache
from pathlib import Path

import pytest

from helpers import LAB, RECORDINGS, assert_clean_failure, run_cli

REPO = Path(__file__).resolve().parent.parent
INSUFFICIENT = "insufficient-evidence"


@cache
def layouts():
    spec = importlib.util.spec_from_file_location("archive_layouts", REPO / "scripts" / "archive_layouts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def convert(fmt: str, src: Path, out: Path) -> Path:
    """The archive's top directory (as `kubectl support-bundle` / `oc adm must-gather` leave it)."""
    (layouts().to_troubleshoot if fmt == "troubleshoot" else layouts().to_mustgather)(src, out)
    return out


def words(bundle: Path) -> tuple[int, dict[str, str]]:
    r = run_cli("analyze", bundle, "-o", "words")
    return r.returncode, dict(line.split("\t") for line in r.stdout.splitlines() if "\t" in line)


# Where a format genuinely lacks what a word needs (README: "From a support bundle or a must-gather").
# troubleshoot: no resource.k8s.io kinds at all; must-gather: a kind with no object leaves no file, so an empty
# ResourceSlice or ClusterQueue list cannot be told from one not gathered.
LACKS = {
    ("dra-exhausted-v1.36", "troubleshoot"): {"lab/waiter"},
    ("dra-no-slice-v1.36", "troubleshoot"): {"lab/no-slice"},
    ("dra-no-slice-v1.36", "must-gather"): {"lab/no-slice"},
    ("clusterqueue-missing-v1.36", "must-gather"): {"team-a/job/finetune-llama-8b"},
}
SOURCES = sorted(p for p in RECORDINGS.iterdir() if (p / "pods.json").is_file())


@pytest.mark.parametrize("fmt", ["troubleshoot", "must-gather"])
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_a_recording_as_an_archive_gives_the_same_words(tmp_path, src, fmt):
    status, original = words(src)
    got_status, got = words(convert(fmt, src, tmp_path / "archive"))
    assert got_status == status
    expected = {k: (INSUFFICIENT if k in LACKS.get((src.name, fmt), ()) else w) for k, w in original.items()}
    assert got == expected


@pytest.mark.parametrize("fmt", ["troubleshoot", "must-gather"])
def test_the_lab_as_an_archive_keeps_its_words_but_not_its_stored_attempts(tmp_path, fmt):
    # The attempts (pods refused at creation, `gpu-triage collect --manifest`) exist only in our bundle.
    _, original = words(LAB)
    _, got = words(convert(fmt, LAB, tmp_path / "archive"))
    attempts = {k for k in original if k not in got}
    assert attempts == {"quota-lab/quota-exceeded", "lab/runtimeclass-missing"}
    assert got == {k: w for k, w in original.items() if k not in attempts}


def test_a_pod_with_claims_says_insufficient_evidence_naming_what_troubleshoot_does_not_collect(tmp_path):
    """troubleshoot's cluster-resources collector reads no resource.k8s.io kind (cluster_resources.go): built in,
    they are not custom resources either."""
    out = convert("troubleshoot", RECORDINGS / "dra-exhausted-v1.36", tmp_path / "archive")
    r = run_cli("why", out, "lab/waiter", "--explain")
    assert r.returncode == 0
    assert r.stdout.startswith("lab/waiter: insufficient-evidence")
    assert "reason:      the pod has resource claims, but ResourceClaims are not collected by a troubleshoot support " \
           "bundle" in r.stdout
    assert "source:      cluster-resources/pods/lab.json $.items[" in r.stdout


def test_the_archive_is_read_as_a_tar_gz_with_troubleshoots_yaml_links(tmp_path):
    src = RECORDINGS / "quota-exhausted-now-v1.36"  # Kueue's custom resources: a `.yaml` link beside each `.json`
    tree = convert("troubleshoot", src, tmp_path / "tree")
    assert list(tree.rglob("*.yaml")) and any(p.is_symlink() for p in tree.rglob("*.yaml"))
    archive = layouts().tar_of(tree, tmp_path / "support-bundle.tar.gz")
    assert words(archive) == words(src)


def test_a_must_gather_archive_is_read_too(tmp_path):
    src = RECORDINGS / "wffc-pv-on-cpu-node-v1.36"
    archive = layouts().tar_of(convert("must-gather", src, tmp_path / "tree"), tmp_path / "must-gather.tar.gz")
    assert words(archive) == words(src)


def test_the_report_header_names_the_format_its_version_and_what_it_lacks(tmp_path):
    out = convert("troubleshoot", RECORDINGS / "dra-exhausted-v1.36", tmp_path / "archive")
    r = run_cli("report", out, "-o", "markdown", "--file", tmp_path / "r.md", check=True)
    assert r.returncode == 0
    text = (tmp_path / "r.md").read_text()
    assert "| Archive | troubleshoot support bundle v0.117.0: troubleshoot support bundle does not collect RuntimeClasses, " \
           "ResourceClaims" in text
    out = convert("must-gather", LAB, tmp_path / "mg")
    run_cli("report", out, "-o", "markdown", "--file", tmp_path / "m.md", check=True)
    assert "| Archive | must-gather 2026-12-01 10:00:00.123456789 +0000 UTC m=+0.041 to " in (tmp_path / "m.md").read_text()


def test_troubleshoots_own_collection_errors_are_findings(tmp_path):
    out = convert("troubleshoot", RECORDINGS / "timeslicing-renamed-v1.36", tmp_path / "archive")
    errors = next(out.glob("*/cluster-resources")) / "pods-errors.json"
    errors.write_text(json.dumps({"team-b": 'pods is forbidden: User "support" cannot list resource "pods" in "team-b"'}))
    r = run_cli("analyze", out, "-o", "words")
    assert r.returncode == 2  # a partial answer
    assert "lab/train\tresource-name-mismatch" in r.stdout
    assert 'cluster-resources/pods-errors.json: $["team-b"]: expected the collection to succeed, found pods is forbidden' in r.stderr


# -- bad input: the same guarantees as for our bundle -----------------------------------------------------------

def test_an_archive_with_a_path_outside_its_root_is_refused(tmp_path):
    tree = convert("troubleshoot", RECORDINGS / "timeslicing-renamed-v1.36", tmp_path / "tree")
    archive = tmp_path / "support-bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(next(tree.iterdir()), arcname="support-bundle")
        evil = tarfile.TarInfo("support-bundle/../../escaped.json")
        evil.size = 2
        import io
        tf.addfile(evil, io.BytesIO(b"{}"))
    r = run_cli("analyze", archive, "-o", "words")
    assert_clean_failure(r, 2, "'..' leaves the bundle")
    assert not (tmp_path.parent / "escaped.json").exists()


def test_a_link_leaving_the_support_bundle_is_refused(tmp_path):
    tree = convert("troubleshoot", RECORDINGS / "quota-exhausted-now-v1.36", tmp_path / "tree")
    link = next(tree.rglob("*.yaml"))
    link.unlink()
    link.symlink_to("../../../../../etc/passwd")
    r = run_cli("analyze", layouts().tar_of(tree, tmp_path / "b.tar.gz"), "-o", "words")
    assert_clean_failure(r, 2, "links are not allowed")


BOMB = """apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: &a0 {name: bomb, namespace: team-a, labels: {x: y}}
spec:
  a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]
  a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]
  a3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]
  a4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]
  a5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]
  a6: &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]
  a7: &a7 [*a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6]
"""


def test_a_yaml_bomb_in_a_custom_resource_is_one_finding_and_the_rest_is_answered(tmp_path):
    src = RECORDINGS / "quota-exhausted-now-v1.36"
    out = convert("must-gather", src, tmp_path / "archive")
    workloads = next(out.rglob("namespaces/team-a/kueue.x-k8s.io/workloads"))
    (workloads / "bomb.yaml").write_text(BOMB)
    r = run_cli("analyze", out, "-o", "words")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "namespaces/team-a/kueue.x-k8s.io/workloads/bomb.yaml: $: expected an object the bounded YAML reader accepts, " \
           "found expands to more than" in r.stderr
    assert words(out)[1] == words(src)[1]


def test_a_must_gather_with_one_namespaces_file_truncated_answers_the_others(tmp_path):
    src = RECORDINGS / "pod-anti-affinity-v1.36"
    out = convert("must-gather", src, tmp_path / "archive")
    pods = next(out.rglob("namespaces/kube-system/core/pods.yaml"))
    text = pods.read_text()
    pods.write_text(text[: len(text) // 2 - 7])  # cut inside an item: a YAML error or a damaged pod
    r = run_cli("analyze", out, "-o", "words")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "namespaces/kube-system/core/pods.yaml" in r.stderr
    status, original = words(src)
    assert "lab/trainer-3\tpod-affinity" in r.stdout
    assert {k: w for k, w in words(out)[1].items() if k.startswith("lab/")} == {
        k: w for k, w in original.items() if k.startswith("lab/")}


def test_nvidias_gpu_operator_must_gather_is_named_and_refused(tmp_path):
    """gpu-operator hack/must-gather.sh keeps the operator's pods and `kubectl describe` of the GPU nodes."""
    d = tmp_path / "nvidia-gpu-operator_20261201_1000"
    d.mkdir()
    (d / "version").write_text("NVIDIA GPU Operator\nv25.3.0\n")
    (d / "gpu_operator_pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: gpu-operator}\n")
    (d / "gpu_nodes.descr").write_text("Name: g1\n")
    r = run_cli("analyze", d, "-o", "words")
    assert_clean_failure(r, 2, "an NVIDIA GPU Operator must-gather")


@pytest.mark.parametrize("command", [("validate",), ("nodes",), ("why", "lab/train"), ("report", "-o", "markdown")])
def test_every_command_that_takes_a_bundle_takes_an_archive(tmp_path, command):
    out = convert("must-gather", RECORDINGS / "timeslicing-renamed-v1.36", tmp_path / "archive")
    extra = ("--file", tmp_path / "r.md") if command[0] == "report" else ()
    r = run_cli(command[0], out, *command[1:], *extra)
    assert r.returncode == 0, r.stderr


def test_serve_replays_the_archive_as_it_replays_our_bundle(tmp_path):
    from analyzer.replay.store import load_store

    src = RECORDINGS / "quota-exhausted-now-v1.36"
    ours = load_store(src)
    theirs = load_store(convert("troubleshoot", src, tmp_path / "archive"))
    assert {k: len(v.items) for k, v in theirs.served.items()} == {
        k: len(v.items) for k, v in ours.served.items() if k != "runtimeclasses"}
    assert "RuntimeClasses are not collected by a troubleshoot support bundle" in theirs.missing["runtimeclasses"]
    assert theirs.version == ours.version


def test_diff_between_a_bundle_and_the_same_cluster_as_a_must_gather_changes_no_word(tmp_path):
    src = RECORDINGS / "ca-scale-up-in-flight-v1.36"
    r = run_cli("diff", src, convert("must-gather", src, tmp_path / "archive"), check=True)
    assert "Targets: 0 appeared, 0 resolved, 0 changed word" in r.stdout


def test_pods_in_a_file_per_namespace_give_the_same_answer_and_a_bad_one_is_named(tmp_path):
    """The pods' files read one after another into one index (bundle/parts.py); a finding names its own file."""
    src = RECORDINGS / "unexpected-admission-error-v1.36"
    out = convert("troubleshoot", src, tmp_path / "archive")
    assert words(out) == words(src)
    bad = next(out.rglob("cluster-resources/pods/lab.json"))
    doc = json.loads(bad.read_bytes())
    doc["items"][0]["spec"]["containers"] = "app"
    bad.write_text(json.dumps(doc, indent=2))
    r = run_cli("analyze", out, "-o", "words")
    assert r.returncode == 2 and "cluster-resources/pods/lab.json: $.items[0].spec.containers: expected array" in r.stderr


def test_damaged_files_of_both_formats_are_findings_naming_them_never_a_traceback(tmp_path):
    src = RECORDINGS / "quota-exhausted-now-v1.36"
    ts = next(convert("troubleshoot", src, tmp_path / "ts").glob("*/cluster-resources"))
    (ts / "pods" / "default.json").write_text("[]")
    (ts / "events" / "team-a.json").write_bytes(b"\xff\xfe\x00garbage")
    (ts / "nodes-errors.json").write_text("not json")
    (ts.parent / "version.yaml").write_text("a: &a [*a]\n")
    r = run_cli("analyze", ts.parent, "-o", "words")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "team-a/train-resnet50\t" in r.stdout
    for needle in ("cluster-resources/pods/default.json: $: expected object, found array",
                   "cluster-resources/events/team-a.json: $: not JSON", "cluster-resources/nodes-errors.json: $:"):
        assert needle in r.stderr
    mg = next(convert("must-gather", src, tmp_path / "mg").glob("*/*"))
    (mg / "namespaces" / "team-a" / "team-a.yaml").write_text("- 1\n- 2\n")
    node = sorted((mg / "cluster-scoped-resources" / "core" / "nodes").iterdir())[0]
    node.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: x}\n? [a, b]\n: 1\n")
    (mg / "namespaces" / "team-a" / "core" / "events.yaml").write_text("!!binary aGVsbG8=\n")
    r = run_cli("analyze", mg, "-o", "words")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "team-a/train-resnet50\tqueue-quota" in r.stdout
    for needle in (f"cluster-scoped-resources/core/nodes/{node.name}: $: not YAML: line 4, column 3: found unhashable key",
                   "namespaces/team-a/core/events.yaml: $: not a usable YAML document: a bytes value has no JSON form",
                   "namespaces/team-a/team-a.yaml: $: expected object, found array"):
        assert needle in r.stderr
