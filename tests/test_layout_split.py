"""kubectl's layout split (bundle/layout.py) gives exactly what decoding the List gives, or steps aside.

pods.json written by kubectl is split by its byte runs; each case below compares `validate` and `analyze` with
the split on against the whole-document reading (test_streaming's reference): a recording as kubectl wrote it,
a valid List where a non-object item sits between two pods (the split misreads it, the bundle is read again),
a truncated pod (same error words), compact JSON (not the layout).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_streaming import _split_small_files_too, _streamed, _whole_document  # noqa: F401 - autouse

from analyzer.bundle.layout import layout_split
from helpers import LAB, copy_bundle, run_cli


def _pods(bundle: Path) -> dict:
    return json.loads((bundle / "pods.json").read_text())


def _write(bundle: Path, doc: dict, *, indent: int | None = 4) -> None:
    (bundle / "pods.json").write_text(json.dumps(doc, indent=indent) + "\n")


def _same(monkeypatch: pytest.MonkeyPatch, bundle: Path) -> dict:
    for strict in (True, False):
        want = _whole_document(monkeypatch, bundle, strict=strict)
        assert _streamed(bundle, strict=strict) == want
    return want


def test_a_recording_is_split_by_its_layout_into_every_item() -> None:
    data = (LAB / "pods.json").read_bytes()
    envelope, items = layout_split(data, ("apiVersion", "kind", "metadata"))
    assert envelope == {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    assert [json.loads(items[i]) for i in range(len(items))] == json.loads(data)["items"]


def test_a_non_object_item_between_two_pods_is_read_again_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(tmp_path)
    doc = _pods(bundle)
    doc["items"].insert(2, "not a pod")
    _write(bundle, doc)
    assert layout_split((bundle / "pods.json").read_bytes(), ("apiVersion", "kind", "metadata")) is not None
    want = _same(monkeypatch, bundle)
    assert any("$.items[2]" in v for v in want["violations"])  # the string is found where it is
    result = run_cli("validate", bundle)
    assert result.returncode == 1 and "$.items[2]" in result.stdout and "Traceback" not in result.stderr


def test_a_truncated_pod_is_a_finding_naming_it_and_the_others_keep_their_words(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(tmp_path)
    text = (bundle / "pods.json").read_text()
    cut = text.index('"containers"', len(text) // 2)
    (bundle / "pods.json").write_text(text[:cut] + text[cut + 40:])
    want = _same(monkeypatch, bundle)
    assert "error" not in want
    [bad] = [v for v in want["violations"] if "does not parse" in v]
    assert bad.startswith("pods.json: $.items[5]: expected a JSON item, found Pod lab/no-gpu-node that does not parse")
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    plain = dict(line.split("\t") for line in run_cli("analyze", LAB, "-o", "words").stdout.splitlines())
    assert dict(line.split("\t") for line in result.stdout.splitlines()) == {**plain, "lab/no-gpu-node": "insufficient-evidence"}


def test_the_separator_with_the_first_field_finds_what_the_plain_one_finds() -> None:
    data = (LAB / "pods.json").read_bytes()
    plain = layout_split(data, ("apiVersion", "kind", "metadata"))[1]
    fast = layout_split(data, ("apiVersion", "kind", "metadata"), "apiVersion")[1]
    assert len(plain) > 1 and (fast.starts, fast.ends) == (plain.starts, plain.ends)


@pytest.mark.parametrize("first", ["aardvark", None])
def test_a_pod_whose_first_field_is_not_apiversion_is_still_read_as_one_pod(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str | None) -> None:
    # The split searches for the separator followed by "apiVersion" (catalog.Kind.first_field): a hand-edited pod
    # with a field sorting before it, or none, is read with its neighbour as one slice, which does not parse, and
    # the file is read again without the layout split: the answers and the JSON paths are those of the whole file.
    bundle = copy_bundle(tmp_path)
    doc = _pods(bundle)
    pod = doc["items"][2]
    if first is None:
        del pod["apiVersion"]
    else:
        pod[first] = "x"
    doc["items"][2] = dict(sorted(pod.items()))
    _write(bundle, doc)
    want = _same(monkeypatch, bundle)
    assert want["verdicts"] and "error" not in want
    plain = run_cli("analyze", LAB, "-o", "words")
    assert run_cli("analyze", bundle, "-o", "words").stdout == plain.stdout


def test_compact_json_is_not_the_layout_and_answers_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(tmp_path)
    _write(bundle, _pods(bundle), indent=None)
    assert layout_split((bundle / "pods.json").read_bytes(), ("apiVersion", "kind", "metadata")) is None
    assert _same(monkeypatch, bundle)["verdicts"]


def test_the_checksum_paused_part_way_is_the_files_sha256() -> None:
    import hashlib

    from analyzer.bundle.checksum import Hasher

    data = (LAB / "pods.json").read_bytes() * 40
    hasher = Hasher(data)
    hasher.CHUNK = 1 << 16
    hasher.start()
    hasher.pause()  # and left paused: join() hashes the rest itself
    hasher.join()
    assert hasher.digest == hashlib.sha256(data).hexdigest()


def test_pages_let_go_while_reading_still_read_the_same_items(tmp_path: Path) -> None:
    # The reader lets the pages of the items it has read go (madvise); they come back from the file if read again.
    import mmap

    path = tmp_path / "pods.json"
    path.write_bytes((LAB / "pods.json").read_bytes())
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        items = layout_split(data, ("apiVersion", "kind", "metadata"))[1]
        want = [items[i] for i in range(len(items))]
        for i in range(len(items)):
            items.release(i)
            assert items[i] == want[i]
        assert [items[i] for i in range(len(items))] == want
