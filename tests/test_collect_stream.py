"""The collector streams each List item by item, and says plainly when the
cluster cannot be read at all (scripts/collect.py, stand-in kubectl).

Streaming must not change a byte: a file redaction did not touch is kubectl's
output as it came, a changed file is what json.dumps(indent=4) of the whole
redacted document gives (the collector's format before streaming).
"""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import LAB, REPO
from test_collect import (MARKER, STAMP, assert_valid, entry, expected_redaction,
                          load_script, manifest_of)
from stand_in import Kube

REFUSED_LINE = ("The connection to the server localhost:8080 was refused - did you specify the "
                "right host or port?")
TIMEOUT_LINE = "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout"
NO_CONFIG_LINE = ("error: invalid configuration: no configuration has been provided, try setting "
                  "KUBERNETES_MASTER environment variable")



def dumps_kubectl(obj: object) -> bytes:
    return (json.dumps(obj, indent=4, ensure_ascii=False) + "\n").encode()


def stream_copy(text: bytes, chunk: int, tmp_path: Path) -> tuple[bytes, int, str]:
    """Walk `text` with the collector's ListReader (window of `chunk` bytes)
    and write it back with its ListWriter: (bytes written, bytes read, sha256 read)."""
    collect = load_script()
    src = tmp_path / "part"
    src.write_bytes(text)
    out = io.BytesIO()
    w = collect.ListWriter(out)
    with collect.ListReader(str(src), chunk) as r:
        for event, key, value in r.events():
            if event == "member":
                w.member(key, value)
            elif event == "items":
                w.begin_items(key)
            elif event == "item":
                w.item(value)
            else:
                w.end_items()
        read, sha = r.nbytes, r.sha.hexdigest()
    w.finish()
    return out.getvalue(), read, sha


TRICKY = [
    {"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}},
    {"items": [{"a": [1, 2.5, -0.0, {"b": "ü \u2028 <>& \\ \" \t"}], "e": {}, "l": [], "n": None},
               3, "x", None, True, 12345678901234567890, 1e300, [[]], {}]},
    {"kind": "List", "items": [{"i": i, "s": "x" * (i * 37 % 300)} for i in range(200)],
     "metadata": {"k": [1, {"z": "after the items"}]}},
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64, 4096, 1 << 20])
def test_streamed_list_is_written_exactly_as_json_dumps_would(chunk: int, tmp_path: Path) -> None:
    """Item-by-item writing gives json.dumps(indent=4)'s bytes for any List,
    whatever the window size, however kubectl (or anyone) laid out the input."""
    docs = TRICKY + [json.loads((LAB / f).read_text()) for f in ("pods.json", "events.json")]
    for doc in docs:
        for layout in (json.dumps(doc), json.dumps(doc, indent=4), json.dumps(doc, indent=1, ensure_ascii=True)):
            text = layout.encode()
            written, read, sha = stream_copy(text, chunk, tmp_path)
            assert written == dumps_kubectl(json.loads(text))
            assert read == len(text)
            assert sha == __import__("hashlib").sha256(text).hexdigest()


@pytest.mark.parametrize("text", [
    b"", b"this is not json\n", b"{", b'{"items": [1,', b'{"items": [1] } x', b'{"items": [1 2]}',
    b'{"items": [tru]}', b'{"items": [{"a": "\n"}]}', b'\xff{"items": []}',
    b'{\n    "items": [\n        {"a": 1},\n        {"a": 1e}\n    ]\n}\n',
])
def test_broken_stdout_is_named_where_json_names_it(text: bytes, tmp_path: Path) -> None:
    """The manifest's error for a broken output names the same line, column
    and character as json.loads would (so the ticket points at the right byte)."""
    collect = load_script()
    with pytest.raises(ValueError) as want:
        json.loads(text)
    for chunk in (1, 7, 1 << 20):
        with pytest.raises(collect.NotJSON) as got:
            stream_copy(text, chunk, tmp_path)
        if isinstance(want.value, json.JSONDecodeError):
            assert str(got.value) == str(want.value), chunk
        else:  # undecodable bytes: the codec's own words
            assert "can't decode byte 0xff" in str(got.value)


@pytest.mark.parametrize("text", [b"[1, 2]", b'{"items": 5}', b'{"kind": "List"}', b'"x"',
                                  b'{"items": [1], "items": [2]}'])
def test_json_that_is_not_a_list_is_refused_as_such(text: bytes, tmp_path: Path) -> None:
    collect = load_script()
    with pytest.raises(collect.NotAList):
        stream_copy(text, 3, tmp_path)


def test_the_reader_holds_one_window_and_one_item_not_the_file(tmp_path: Path) -> None:
    """Memory is what a bastion host notices: walking a 4 MB List through a
    4 KB window never holds much more than a window and the item at hand."""
    collect = load_script()
    pods = json.loads((LAB / "pods.json").read_text())
    items = [copy.deepcopy(pods["items"][i % len(pods["items"])]) for i in range(600)]
    text = dumps_kubectl(dict(pods, items=items))
    assert len(text) > 3_000_000
    largest = max(len(json.dumps(i, indent=4)) for i in items) * 2  # nesting adds indentation
    part = tmp_path / "pods.part"
    part.write_bytes(text)
    held = 0
    n = 0
    with collect.ListReader(str(part), 4096) as r:
        for event, _, _ in r.events():
            held = max(held, len(r.buf))
            n += event == "item"
    assert n == 600
    assert held < 2 * (4096 + largest), held


def big_bundle(tmp_path: Path) -> Path:
    """A generated bundle whose pods.json spans many 1 MB windows."""
    out = tmp_path / "generated"
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_bundle.py"), "--nodes", "60",
                        "--pods", "2500", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_a_multi_megabyte_bundle_is_collected_to_the_same_bytes_as_before(kube: Kube, tmp_path: Path) -> None:
    """Through the whole collector, on files far larger than its window: each
    file is kubectl's bytes or the whole-document redaction re-serialised,
    and the manifest's sizes, checksums, item and redaction counts agree."""
    gen = big_bundle(tmp_path)
    for f in gen.glob("*.json"):
        if f.name != "manifest.json":
            (kube.data / f.name).write_bytes(f.read_bytes())
    assert (kube.data / "pods.json").stat().st_size > 8 << 20
    r = kube.collect()
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    changed = 0
    for f in sorted(kube.data.glob("*.json")):
        if f.name in ("version.json", "manifest.json"):
            continue
        source = f.read_bytes()
        obj = json.loads(source)
        want, env, ann = expected_redaction(obj)
        got = (bundle / f.name).read_bytes()
        e = entry(m, f.name)
        assert e["items"] == len(obj["items"])
        assert e["redactions"] == {"env-value": env, "last-applied-configuration": ann}
        if env or ann:
            changed += 1
            assert got == dumps_kubectl(want), f.name
        else:
            assert got == source, f.name
    assert changed >= 2  # pods and some owners carry last-applied annotations
    assert MARKER.encode() in (bundle / "pods.json").read_bytes()
    # Nothing of the spooled stdout is left behind.
    assert not [p.name for p in bundle.iterdir() if p.name.startswith(".")]


def test_merged_namespaces_stream_into_one_list(kube: Kube) -> None:
    """With -n, each namespace's output is streamed into one List, as the
    in-memory merge wrote it: apiVersion of the first, items in order."""
    r = kube.collect("-n", "quota-lab", "-n", "lab", "--no-redact")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    pods = json.loads((LAB / "pods.json").read_text())
    by_ns = {ns: [i for i in pods["items"] if i["metadata"]["namespace"] == ns] for ns in ("quota-lab", "lab")}
    want = {"apiVersion": "v1", "items": by_ns["quota-lab"] + by_ns["lab"], "kind": "List",
            "metadata": {"resourceVersion": ""}}
    assert (bundle / "pods.json").read_bytes() == dumps_kubectl(want)
    assert entry(manifest_of(bundle), "pods.json")["items"] == 9


def test_output_broken_after_the_first_redacted_item_fails_the_kind(kube: Kube) -> None:
    """The first pass stops at the first item redaction changes; an error
    further on is still found, the kind fails and nothing half-written stays."""
    text = (LAB / "pods.json").read_text()
    cut = text.rindex("    ],")
    (kube.data / "pods.json").write_text(text[:cut] + "    ,\n" + text[cut:])
    r = kube.collect()
    assert r.returncode == 3, r.stderr
    bundle = kube.bundle(r)
    e = entry(manifest_of(bundle), "pods.json")
    assert e["status"] == "failed" and e["error"].startswith("stdout is not JSON: Expecting value: line")
    assert sorted(p.name for p in bundle.iterdir() if "pods" in p.name) == []


# ------------------------------------------------------------------- unreachable cluster


@pytest.mark.parametrize("mode,line", [("refused", REFUSED_LINE), ("timeout", TIMEOUT_LINE),
                                       ("noconfig", NO_CONFIG_LINE)])
def test_an_unreachable_cluster_says_so_first_and_writes_no_bundle(kube: Kube, mode: str, line: str) -> None:
    r = kube.collect(FAKE_KUBECTL_UNREACHABLE=mode)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    # kubectl's own message, not the memcache.go klog lines printed before it.
    assert lines[0] == f"cannot read the cluster: {line}"
    assert "memcache.go" not in r.stderr
    assert r.stdout == ""
    assert "bundle:" not in r.stderr and "partial:" not in r.stderr
    assert not (kube.work / "dumps").exists()  # made for this run, left empty: removed
    # Only what was needed to know: no kind after nodes was asked for.
    asked = [a[1] for a in kube.argvs() if a[0] == "get"]
    assert asked == ["pods", "nodes"]
    assert "--keep-failed" in lines[-1]


def test_an_existing_output_dir_is_left_as_it_was(kube: Kube) -> None:
    out = kube.work / "dumps"
    out.mkdir()
    (out / "older-bundle").mkdir()
    r = kube.collect(FAKE_KUBECTL_UNREACHABLE="refused")
    assert r.returncode == 1
    assert [p.name for p in out.iterdir()] == ["older-bundle"]


def test_keep_failed_keeps_the_failed_runs_manifest_for_the_ticket(kube: Kube) -> None:
    r = kube.collect("--keep-failed", FAKE_KUBECTL_UNREACHABLE="refused")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == f"cannot read the cluster: {REFUSED_LINE}"
    out = kube.work / "dumps"
    (kept,) = list(out.iterdir())
    assert re.fullmatch(rf"kind-lab-{STAMP}\.failed-manifest\.json", kept.name)
    assert str(kept.relative_to(kube.work)) in r.stderr.splitlines()[-1]
    m = json.loads(kept.read_text())
    assert_valid("manifest", m)
    assert m["partial"] is True and m["error"] == f"cannot read the cluster: {REFUSED_LINE}"
    assert m["kubectl"] == {"clientVersion": "v1.32.4-dispatcher", "serverVersion": None}
    assert [(e["path"], e["status"]) for e in m["files"]] == [
        ("version.json", "failed"), ("pods.json", "failed"), ("nodes.json", "failed")]
    assert entry(m, "pods.json")["stderr"].endswith(REFUSED_LINE + "\n")
    assert entry(m, "pods.json")["stderr"].count("memcache.go") == 5  # kubectl's stderr, whole
    # Not a bundle: the analyzer is never pointed at it by the collector's stdout.
    assert r.stdout == ""
    # A second failed run never overwrites the first one's manifest.
    again = kube.collect("--keep-failed", FAKE_KUBECTL_UNREACHABLE="refused")
    assert again.returncode == 1 and len(list(out.iterdir())) == 2 and kept.read_text() == json.dumps(m, indent=2, ensure_ascii=False) + "\n"


def test_pods_and_nodes_both_forbidden_is_a_cluster_that_cannot_be_read(kube: Kube) -> None:
    r = kube.collect(FAKE_KUBECTL_FAIL="pods=forbidden,nodes=forbidden")
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    assert first.startswith('cannot read the cluster: Error from server (Forbidden): pods is forbidden')
    # The held progress lines follow as the detail.
    assert re.search(r"^nodes: FAILED \(exit 1\): Error from server \(Forbidden\): nodes", r.stderr, re.M)


def test_either_of_pods_or_nodes_is_still_a_partial_bundle(kube: Kube) -> None:
    for fail, readable in (("pods=forbidden", "nodes"), ("nodes=timeout", "pods")):
        r = kube.collect(FAKE_KUBECTL_FAIL=fail)
        assert r.returncode == 3, r.stderr
        assert not r.stderr.startswith("cannot read")
        assert r.stderr.splitlines()[-1].startswith("partial: 1 kind")
        assert entry(manifest_of(kube.bundle(r)), f"{readable}.json")["status"] == "ok"
