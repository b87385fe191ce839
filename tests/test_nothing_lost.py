"""One bad file or one hostile item costs only what depends on it, on the lab bundle (copied) and the real Kueue
recording: which pods keep their words, which become insufficient-evidence naming what, the finding's file and
JSON path, the exit status; and `serve` refusing malformed requests in one line, never a traceback.

The hostile corpus (tests/hostile/corpus.py) has a row for each such input too, run in bounded processes; here
the `-o json` answers say what a person reads at 3 a.m.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer import words as w
from helpers import LAB, RECORDINGS, REPO, copy_bundle, run_cli
from hostile.build import LAB_WORDS

# The lab pods whose words need nodes.json (the funnel); the others are decided before it.
NEED_NODES = ("lab/allocatable-zero", "lab/exhausted", "lab/no-gpu-node", "lab/selector-mismatch", "lab/taint")


def _json(bundle: Path, *extra: str) -> tuple[int, dict, str]:
    r = run_cli("analyze", bundle, "-o", "json", *extra)
    assert "Traceback" not in r.stdout + r.stderr
    return r.returncode, {f"{v['namespace']}/{v['name']}": v for v in json.loads(r.stdout)["verdicts"]}, r.stderr


@pytest.mark.parametrize("content", [b"[]\n", b"null\n", b"TRUNCATED", bytes(range(256)) * 8],
                         ids=["empty-array", "null", "truncated", "binary"])
def test_an_unreadable_nodes_json_is_a_missing_one_for_what_needs_it(tmp_path: Path, content: bytes) -> None:
    b = copy_bundle(tmp_path)
    if content == b"TRUNCATED":
        content = (LAB / "nodes.json").read_bytes()[:3000]
    (b / "nodes.json").write_bytes(content)
    status, verdicts, stderr = _json(b)
    assert status == 2
    assert {k: v["word"] for k, v in verdicts.items()} == {**LAB_WORDS, **{k: w.INSUFFICIENT_EVIDENCE for k in NEED_NODES}}
    for key in NEED_NODES:
        assert verdicts[key]["evidence"]["missing"] == "nodes.json"
        assert "nodes.json is unreadable" in verdicts[key]["reason"]
    said = [line for line in stderr.splitlines() if line.startswith("nodes.json: $")]
    assert len(said) == 1, stderr  # said once, not as a finding and again as unreadable


def test_why_on_an_unreadable_nodes_json_names_it(tmp_path: Path) -> None:
    b = copy_bundle(tmp_path)
    (b / "nodes.json").write_bytes(b"[]\n")
    r = run_cli("why", b, "lab/exhausted", "--explain")
    assert r.returncode == 2
    assert r.stdout.startswith("lab/exhausted: insufficient-evidence")
    assert "nodes.json is unreadable: expected object, found array []" in r.stdout


@pytest.mark.parametrize("content", [b"[]", b"TRUNCATED"], ids=["empty-array", "truncated"])
def test_an_unreadable_manifest_gives_the_words_of_the_intact_bundle(tmp_path: Path, content: bytes) -> None:
    b = copy_bundle(tmp_path)
    if content == b"TRUNCATED":
        content = (LAB / "manifest.json").read_bytes()[:300]
    (b / "manifest.json").write_bytes(content)
    status, verdicts, stderr = _json(b)
    assert status == 2
    assert {k: v["word"] for k, v in verdicts.items()} == LAB_WORDS
    assert "manifest.json: $: " in stderr
    v = run_cli("validate", b)
    assert v.returncode == 2 and "manifest.json: $: " in v.stderr


@pytest.mark.parametrize("value", [b"1e400", b'{"d": ' * 5000 + b"1" + b"}" * 5000], ids=["1e400", "5000-deep"])
def test_one_hostile_pod_loses_only_itself(tmp_path: Path, value: bytes) -> None:
    """exhausted (pods.json $.items[1]) given a value orjson refuses: the finding names its path and the pod, the
    pod is insufficient-evidence with that finding, every other pod keeps its word."""
    b = copy_bundle(tmp_path)
    data = (b / "pods.json").read_bytes()
    at = data.index(b'"priority": 0', data.index(b'"name": "exhausted"'))
    (b / "pods.json").write_bytes(data[:at] + b'"priority": ' + value + data[at + len(b'"priority": 0'):])
    status, verdicts, stderr = _json(b)
    assert status == 2
    assert {k: v["word"] for k, v in verdicts.items()} == {**LAB_WORDS, "lab/exhausted": w.INSUFFICIENT_EVIDENCE}
    finding = next(line for line in stderr.splitlines() if line.startswith("pods.json: $.items[1]: "))
    value_at = at + len(b'"priority": ')
    # orjson stops where it gives up: at the number, or 1,024 levels into the nesting (a byte offset of the file).
    said = f"number is infinity when parsed as double at byte {value_at}" if value == b"1e400" else "depth limit exceeded at byte "
    assert f"Pod lab/exhausted that does not parse: {said}" in finding
    assert verdicts["lab/exhausted"]["source"] == "pods.json $.items[1]"
    assert "pods.json: $.items[1]" in verdicts["lab/exhausted"]["reason"]
    v = run_cli("validate", b)
    assert v.returncode == 1 and "pods.json: $.items[1]: expected a JSON item" in v.stdout


def test_invalid_utf8_is_named_by_its_byte(tmp_path: Path) -> None:
    b = copy_bundle(tmp_path)
    data = (b / "events.json").read_bytes()
    at = data.index(b'"kind": "List"')
    (b / "events.json").write_bytes(data[:at] + b'"x": "\xc3\x28", ' + data[at:])  # outside any item: the whole file
    status, verdicts, stderr = _json(b)
    assert status == 2 and {k: v["word"] for k, v in verdicts.items()} == LAB_WORDS
    assert f"events.json: $: not JSON: invalid UTF-8 at byte {at + 6} (0xc3)" in stderr
    assert "surrogates" not in stderr


def test_a_fifo_is_named_by_analyze_and_validate_without_blocking(tmp_path: Path) -> None:
    import os

    b = copy_bundle(tmp_path)
    (b / "events.json").unlink()
    os.mkfifo(b / "events.json")
    start = time.monotonic()
    status, verdicts, stderr = _json(b)
    assert status == 2 and {k: v["word"] for k, v in verdicts.items()} == LAB_WORDS
    assert "events.json: is a FIFO (named pipe), not a regular file" in stderr
    v = run_cli("validate", b)
    assert v.returncode == 2 and "events.json: is a FIFO (named pipe), not a regular file" in v.stderr
    assert time.monotonic() - start < 30


# -- Kueue: present but unreadable is not absent (causes.md, "When the bundle cannot decide") --------------------

QUOTA = RECORDINGS / "quota-exhausted-now-v1.36"
LQ = "localqueues.kueue.x-k8s.io.json"
PENDING = "team-a/train-resnet50"


def test_a_truncated_localqueues_file_makes_the_queued_pod_insufficient_evidence_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "b"
    shutil.copytree(QUOTA, root)
    data = (root / LQ).read_bytes()
    (root / LQ).write_bytes(data[: len(data) // 2])
    status, verdicts, stderr = _json(root)
    assert status == 2
    v = verdicts[PENDING]
    assert v["word"] == w.INSUFFICIENT_EVIDENCE
    assert f"{LQ} is unreadable: not JSON (truncated?)" in v["reason"] and "kueue.x-k8s.io/admission" in v["reason"]
    assert v["evidence"]["missing"] == [LQ]
    assert f"{LQ}: $: not JSON (truncated?)" in stderr


def test_a_deleted_localqueues_file_still_says_scheduling_gated(tmp_path: Path) -> None:
    root = tmp_path / "b"
    shutil.copytree(QUOTA, root)
    (root / LQ).unlink()
    _, verdicts, _ = _json(root)
    assert verdicts[PENDING]["word"] == w.SCHEDULING_GATED
    assert verdicts[PENDING]["evidence"]["missing"] == [LQ]


# -- serve: a malformed request is one line on stderr, never a traceback -----------------------------------------

def _send(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        try:
            s.sendall(data)
        except OSError:  # the server answered and closed before reading it all
            pass
        try:
            return s.recv(64)
        except OSError:
            return b""


MALFORMED = {
    "a 10 MB header": (b"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (10 << 20) + b"\r\n\r\n", "Got more than"),
    "100,000 headers": (b"GET /api HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(100_000)) + b"\r\n",
                        "Too many headers"),
    "an escape in the request line": (b"GET /\x1b[2J HTTP/1.1\r\n\r\n", "400 Bad Request"),
}


def test_serve_answers_malformed_requests_400_and_logs_one_line_each(tmp_path: Path) -> None:
    """aiohttp's LineTooLong and BadHttpMessage (aiohttp/http_parser.py) are logged by the request handler with
    their traceback unless it is given a logger (web_protocol.RequestHandler's `logger`): here one line each."""
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "serve", str(LAB), "--kubeconfig", str(kubeconfig)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("export KUBECONFIG=")
        port = int(re.search(r"127\.0\.0\.1:(\d+)", kubeconfig.read_text()).group(1))  # type: ignore[union-attr]
        for name, (request, _) in MALFORMED.items():
            assert re.match(rb"HTTP/1\.[01] 400 ", _send(port, request)), name
        assert _send(port, b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")  # still serving
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "Traceback" not in stderr and "\x1b" not in stderr
    refused = [line for line in stderr.splitlines() if line.startswith("gpu-triage serve: refused a request from 127.0.0.1: 400")]
    assert len(refused) == len(MALFORMED), stderr  # one line per malformed request
    for name, (_, reason) in MALFORMED.items():
        assert any(reason in line for line in refused), (name, stderr)
    assert all(len(line) < 400 for line in refused)
