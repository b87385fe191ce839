"""The streamed bundle gives exactly what the whole-document reading gave.

The reference below is the whole-document path, kept only here: every file parsed whole by orjson
(the fast msgspec split switched off), every item kept in `loaded.documents` (pods and events too,
no sink), and the model reading the pods Document. The streamed path (the one the commands use)
must give the same verdicts (words, reasons, evidence, funnels), the same schema, manifest and
model findings in the same order, and the same errors, on the recorded bundles, a generated one
(with the stuck-DaemonSet pods) and the hostile corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.bundle import streaming
from analyzer.bundle.reading import open_bundle
from analyzer.bundle.validation import load_documents
from analyzer.classify import classify_all
from analyzer.errors import BundleError
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.build import build_cluster
from analyzer.pipeline import Options, analyse, iter_verdicts, owner_targets, validate_only
from analyzer.targets.attempts import stored_attempts
from helpers import LAB, RECORDINGS, REPO, copy_bundle, run_cli
from hostile.build import reseal
from hostile.corpus import CASES
from verdict_json import old_shape

RECORDED = [LAB, *sorted(p for p in RECORDINGS.glob("*") if p.is_dir())]


@pytest.fixture(autouse=True)
def _split_small_files_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands read a small file not in kubectl's layout whole (streaming.WHOLE_BELOW); here every file goes
    through the splits, so they are compared with the whole-document reading on every bundle."""
    monkeypatch.setattr(streaming, "WHOLE_BELOW", 0)


def _whole_document(monkeypatch: pytest.MonkeyPatch, path: Path, *, strict: bool) -> dict:
    """The reference: whole-document parse, everything kept, the model reading the pods Document."""
    def never(data: object, kind: str):
        raise streaming._NotPlain

    with monkeypatch.context() as m:
        m.setattr(streaming, "_split", never)
        m.setattr(streaming, "layout_split", lambda data, fields, first_field="": None)
        try:
            with open_bundle(path) as bundle:
                loaded = load_documents(bundle, strict=strict)
                assert not loaded.streamed
                cluster = build_cluster(loaded, AcceleratorConfig())
                stored = stored_attempts(loaded)
                extra = stored.targets + owner_targets(loaded, cluster)
                verdicts = [v.to_dict() for v in classify_all(cluster, extra)] if not strict else []
                return {"violations": [str(v) for v in loaded.violations], "count": loaded.violation_count,
                        "unreadable": [str(e) for e in loaded.unreadable], "missing": loaded.missing,
                        "findings": [str(v) for v in cluster.findings.items + stored.findings], "verdicts": verdicts}
        except BundleError as exc:
            return {"error": str(exc)}


def _streamed(path: Path, *, strict: bool) -> dict:
    try:
        if strict:
            checked = validate_only(path)
            loaded = checked.loaded
            findings = [str(v) for v in checked.findings]
            verdicts: list = []
        else:
            analysis = analyse(path, Options(), classify=False)
            analysis.bundle.close()
            loaded = analysis.loaded
            findings = [str(v) for v in analysis.findings]
            verdicts = [v.to_dict() for v in iter_verdicts(analysis)]
    except BundleError as exc:
        return {"error": str(exc)}
    assert "pods" not in loaded.documents  # nothing later holds the raw pods
    return {"violations": [str(v) for v in loaded.violations], "count": loaded.violation_count,
            "unreadable": [str(e) for e in loaded.unreadable], "missing": loaded.missing,
            "findings": findings, "verdicts": verdicts}


def _same(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    for strict in (True, False):
        want = _whole_document(monkeypatch, path, strict=strict)
        assert _streamed(path, strict=strict) == want, ("validate" if strict else "analyze", path)


@pytest.mark.parametrize("bundle", RECORDED, ids=lambda p: p.name)
def test_recorded_bundles_stream_to_the_same_answers(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(monkeypatch, bundle)


def test_generated_bundle_streams_to_the_same_answers(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(monkeypatch, generated)


@pytest.mark.slow
def test_the_500_node_15000_pod_bundle_streams_to_the_same_answers(generated_large: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """500 nodes and 15,000 pods: validate and analyze answer as the whole-document reading does."""
    _same(monkeypatch, generated_large)


def _with_pods(src: Path, dest: Path, change) -> Path:
    out = copy_bundle(dest, src)
    doc = json.loads((out / "pods.json").read_text())
    (out / "pods.json").write_bytes(change(doc))
    return out


def test_a_pod_given_twice_is_named_at_its_second_copy(generated: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pod again as the last item: the finding names the second copy."""
    def again(doc: dict) -> bytes:
        doc["items"].append(doc["items"][0])
        return json.dumps(doc).encode()

    bundle = _with_pods(generated, tmp_path, again)
    _same(monkeypatch, bundle)
    last = len(json.loads((bundle / "pods.json").read_text())["items"]) - 1
    assert any(f"$.items[{last}].metadata.name" in f for f in _streamed(bundle, strict=False)["findings"])


@pytest.mark.parametrize("indent", [None, 4], ids=["one-line", "kubectl-layout"])
def test_an_unreadable_item_is_a_finding_and_the_rest_are_read(
        generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None) -> None:
    """A number orjson refuses (1e400) in the last pod: that item is a finding at its path (with orjson's words),
    every other pod is read, the same as reading the whole document."""
    def infinite(doc: dict) -> bytes:
        doc["items"][-1]["metadata"]["labels"] = {"size": "MARK"}
        return json.dumps(doc, indent=indent).encode().replace(b'"MARK"', b"1e400")

    bundle = _with_pods(generated, tmp_path, infinite)
    reseal(bundle)  # four spaces of indent make it larger than the manifest says: only the 1e400 is under test
    _same(monkeypatch, bundle)
    last = len(json.loads((generated / "pods.json").read_bytes())["items"]) - 1
    got = _streamed(bundle, strict=False)
    assert "error" not in got and got["verdicts"]
    [finding] = [v for v in got["violations"] if "number is infinity" in v]
    assert finding.startswith(f"pods.json: $.items[{last}]: expected a JSON item")


def test_stuck_daemonset_pods_are_pinned_each_to_its_own_node(generated: Path) -> None:
    # The DaemonSet controller pins each pod by required node affinity on metadata.name
    # (kubernetes pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity).
    r = run_cli("analyze", generated, "-o", "json", "-n", "gpu-operator")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    ds = [v for v in doc["verdicts"] if v["name"].startswith("nvidia-driver-daemonset-")]
    assert len(ds) == 80
    # one funnel per pinned node: each says 80 -> 1 at the selector stage, the other 79 removed by name
    funnels = {v["funnel"] for v in ds}
    assert len(funnels) == 80
    selector = doc["funnels"][ds[0]["funnel"]][0]
    assert selector["stage"] == "selector" and selector["nodes_in"] == 80 and selector["nodes_out"] == 1
    [group] = selector["removed"]
    assert group["count"] == 79 and len(group["nodes"]) == 20 and group["more"] == 59


def test_why_json_names_every_node_for_one_pod(generated: Path) -> None:
    r = run_cli("why", generated, "gpu-operator/nvidia-driver-daemonset-00007", "-o", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    [v] = doc["verdicts"]
    [group] = doc["funnels"][v["funnel"]][0]["removed"]
    assert group["count"] == 79 and len(group["nodes"]) == 79 and group["more"] == 0
    schema = json.loads((REPO / "schemas" / "verdicts.schema.json").read_text())
    import jsonschema

    jsonschema.Draft202012Validator(schema).validate(doc)


def test_json_document_maps_back_to_every_verdict_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The new shape loses nothing on the lab: mapped back, it is the whole-document verdicts exactly."""
    r = run_cli("analyze", LAB, "-o", "json")
    assert r.returncode == 0, r.stderr
    assert old_shape(json.loads(r.stdout)) == json.loads(json.dumps(_whole_document(monkeypatch, LAB, strict=False)["verdicts"]))


# The corpus rows that are safe to run twice inside this process (no FIFOs, bombs or multi-GB sparse
# files: test_hostile.py runs those in bounded child processes).
_UNSAFE = ("fifo", "GiB", "100000-deep", "billion-laughs", "10MB", "quadratic", "5000-digits", "10000-digits")
# Rows whose damage is outside the List files (the archive around them, manifest.json, attempts/, version.json)
# or only in CEL text the lists carry reach both readings through the same code (open_bundle, the single-file
# reader, the CEL engine): a few of each family are kept here, and test_hostile.py checks every row's outcome.
_OUTSIDE_THE_LISTS = ("tar-", "manifest-", "attempt-", "attempts-", "version-", "dra-cel-")
_KEPT = ("tar-of-partly-invalid-bundle", "tar-member-twice", "manifest-records-failed-events", "manifest-names-missing-file",
         "attempt-wrong-kind", "dra-cel-huge-in-class", "dra-cel-huge-in-taint-rule", "dra-cel-expression-a-number")
HOSTILE = [c for c in CASES if not any(u in c.id for u in _UNSAFE)
           and (c.id in _KEPT or not c.id.startswith(_OUTSIDE_THE_LISTS))]


@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.id)
def test_hostile_corpus_streams_to_the_same_answers(case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = case.build(tmp_path)
    _same(monkeypatch, target)


def test_progress_line_on_a_terminal_and_never_in_a_pipe(tmp_path: Path) -> None:
    """A pseudo-terminal gets the line (file being read, items/s); a pipe gets nothing more than before."""
    import pty
    import select

    env = {k: v for k, v in os.environ.items() if k != "GPU_TRIAGE_DEBUG"}
    env.update(GPU_TRIAGE_PROGRESS_DELAY="0", COLUMNS="120", TERM="xterm")
    cmd = [sys.executable, "-m", "analyzer", "analyze", str(LAB), "-o", "words"]
    out_file = tmp_path / "words.txt"
    primary, secondary = pty.openpty()
    with open(out_file, "wb") as stdout:
        proc = subprocess.Popen(cmd, stdin=secondary, stdout=stdout, stderr=secondary, env=env, cwd=REPO)
    os.close(secondary)
    seen = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=60) == 0
    os.close(primary)
    text = seen.decode("utf-8", "replace")
    assert "reading pods.json" in text and "items/s" in text
    assert len(out_file.read_text().splitlines()) == 9  # stdout (a file) holds only the answers

    piped = subprocess.run(cmd, capture_output=True, env=env, cwd=REPO)
    assert piped.returncode == 0
    assert piped.stderr == b""  # no progress, no escape codes, in a pipe
    quiet = subprocess.run(cmd + ["--quiet"], capture_output=True, env=env, cwd=REPO)
    assert quiet.stdout == piped.stdout and quiet.stderr == b""


def test_a_second_copy_by_name_and_uid_is_named_by_its_name(generated: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The last pod repeats the uid of the one before it and the name of the first: the name is checked first,
    so the finding names the name, not the uid."""
    def twin(doc: dict) -> bytes:
        items = doc["items"]
        items[-1]["metadata"]["uid"] = items[-2]["metadata"]["uid"]
        items[-1]["metadata"]["namespace"] = items[0]["metadata"]["namespace"]
        items[-1]["metadata"]["name"] = items[0]["metadata"]["name"]
        return json.dumps(doc).encode()

    bundle = _with_pods(generated, tmp_path, twin)
    _same(monkeypatch, bundle)
    last = len(json.loads((bundle / "pods.json").read_text())["items"]) - 1
    assert any(f"$.items[{last}].metadata.name" in f for f in _streamed(bundle, strict=True)["violations"]
               + _streamed(bundle, strict=False)["findings"])


def test_a_small_file_not_in_kubectls_layout_is_read_whole_with_the_same_answers(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(tmp_path)
    doc = json.loads((bundle / "pods.json").read_text())
    (bundle / "pods.json").write_text(json.dumps(doc))  # compact: not the layout
    split = _streamed(bundle, strict=False)
    monkeypatch.setattr(streaming, "WHOLE_BELOW", 1 << 20)
    assert _streamed(bundle, strict=False) == split and split["verdicts"]
