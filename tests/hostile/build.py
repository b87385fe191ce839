"""Builders for hostile bundles: every input is made at test time inside a temporary directory.

Small literal inputs live in data/; everything big or binary (10 MB strings, 100,000-deep
nesting, tar headers that lie, device members, gzip bombs) is generated here, so nothing
huge is ever committed. Every bundle starts as a copy of the shipped lab bundle
(dumps/lab-seven-states-v1.36, real kubectl output of a real v1.36 cluster) and changes
only what the case needs; `reseal` rewrites the manifest's sizes and checksums after an
edit so that each case shows only the finding it is about.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any, Callable
import conftest
from helpers import LAB, RECORDINGS

DATA = Path(__file__).resolve().parent / "data"

# Index of each lab object in its file (checked by test_lab_indexes_are_what_the_corpus_assumes).
POD = {"allocatable-zero": 0, "exhausted": 1, "filler-a": 2, "filler-b": 3, "finished-job": 4, "no-gpu-node": 5,
       "no-gpu-request": 6, "selector-mismatch": 7, "taint": 8}
NODE = {"gpu-alloczero": 0, "gpu-noplugin": 1, "gpu-ok": 2, "gpu-tainted": 3}
# manifest.json $.files[i] / $.attempts[i]
FILE_ENTRY = {"pods.json": 0, "nodes.json": 1, "resourcequotas.json": 2, "runtimeclasses.json": 3, "events.json": 4,
              "namespaces.json": 5, "version.json": 6}
ATTEMPT_41 = "attempts/41-pod-quota-exceeded.json"
ATTEMPT_42 = "attempts/42-pod-runtimeclass-missing.json"

# `analyze -o words` on the clean lab (README, issue 3): the pods and the two stored attempts.
LAB_WORDS: dict[str, str] = {**conftest.LAB_WORDS, **conftest.LAB_ATTEMPT_WORDS}

Step = Callable[[Path], Any]


# -- the lab bundle -------------------------------------------------------------------------

def lab(dest: Path, name: str = "bundle", *, manifest: bool = True) -> Path:
    """A writable copy of the lab bundle (with its manifest and attempts/ unless told otherwise)."""
    out = dest / name
    shutil.copytree(LAB, out, ignore=shutil.ignore_patterns("manifests", "admission-errors.txt"))
    for p in out.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    if not manifest:
        (out / "manifest.json").unlink()
    return out


def reseal(root: Path) -> None:
    """Rewrite the manifest's bytes and sha256 for every listed regular file that exists."""
    mpath = root / "manifest.json"
    if not mpath.is_file() or mpath.is_symlink():
        return
    manifest = json.loads(mpath.read_text())
    for section in ("files", "attempts"):
        for entry in manifest.get(section) or ():
            p = root / entry["path"]
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes()
                entry["bytes"] = len(data)
                entry["sha256"] = hashlib.sha256(data).hexdigest()
    mpath.write_text(json.dumps(manifest, indent=2) + "\n")


def load(root: Path, rel: str) -> Any:
    return json.loads((root / rel).read_text())


def save(root: Path, rel: str, doc: Any, *, seal: bool = True) -> None:
    (root / rel).write_text(json.dumps(doc, indent=4, ensure_ascii=False) + "\n")
    if seal:
        reseal(root)


def write(root: Path, rel: str, data: bytes | str, *, seal: bool = True) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    if seal:
        reseal(root)


# -- steps: small functions of the bundle root, composed per case ----------------------------

def edit(rel: str, fn: Callable[[Any], Any], *, seal: bool = True) -> Step:
    """Load rel as JSON, let fn change it (in place or by returning a new document), write it back."""
    def step(root: Path) -> None:
        doc = load(root, rel)
        new = fn(doc)
        save(root, rel, doc if new is None else new, seal=seal)
    return step


def raw(rel: str, data: bytes | str | Callable[[bytes], bytes], *, seal: bool = True) -> Step:
    """Replace rel's bytes (a callable gets the old bytes)."""
    def step(root: Path) -> None:
        old = (root / rel).read_bytes() if (root / rel).exists() else b""
        write(root, rel, data(old) if callable(data) else data, seal=seal)
    return step


def data_file(rel: str, name: str, *, seal: bool = True) -> Step:
    return raw(rel, (DATA / name).read_bytes(), seal=seal)


def manifest(fn: Callable[[dict], Any]) -> Step:
    """Change manifest.json (no reseal: the manifest is what is under test)."""
    return edit("manifest.json", fn, seal=False)


def unlink(rel: str) -> Step:
    return lambda root: (root / rel).unlink()


def symlink(rel: str, target: str | Callable[[Path], Path]) -> Step:
    def step(root: Path) -> None:
        p = root / rel
        if p.exists() or p.is_symlink():
            p.unlink()
        p.symlink_to(target(root) if callable(target) else target)
    return step


def outside_file(name: str, text: str) -> Callable[[Path], Path]:
    """A file next to the bundle (outside it), for links that try to leave."""
    def make(root: Path) -> Path:
        p = root.parent / "outside" / name
        p.parent.mkdir(exist_ok=True)
        p.write_text(text)
        return p
    return make


def item(rel: str, index: int, fn: Callable[[dict], Any]) -> Step:
    """Change one item of a kubectl List in place."""
    def change(doc: dict) -> None:
        new = fn(doc["items"][index])
        if new is not None:
            doc["items"][index] = new
    return edit(rel, change)


def pod(name: str, fn: Callable[[dict], Any]) -> Step:
    return item("pods.json", POD[name], fn)


def node(name: str, fn: Callable[[dict], Any]) -> Step:
    return item("nodes.json", NODE[name], fn)


def attempt(rel: str, fn: Callable[[dict], Any]) -> Step:
    return edit(rel, fn)


def source_text(rel: str, data_name: str) -> Step:
    """Replace an attempt's sourceText (and drop any stored object) with a file from data/."""
    def change(doc: dict) -> None:
        doc.pop("object", None)
        doc["sourceText"] = (DATA / data_name).read_text()
    return edit(rel, change)


def put(path: str, value: Any) -> Callable[[dict], None]:
    """Set a dotted path (keys may hold dots if written as ['a.b']) inside an object."""
    keys = _keys(path)

    def fn(obj: dict) -> None:
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = value
    return fn


def drop(path: str) -> Callable[[dict], None]:
    keys = _keys(path)

    def fn(obj: dict) -> None:
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return fn


def _keys(path: str) -> list[Any]:
    """`a.b[0]['c.d']` -> ["a", "b", 0, "c.d"]."""
    out: list[Any] = []
    for name, index, quoted in re.findall(r"([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]", path):
        out.append(name if name else int(index) if index else quoted)
    return out


def copy_of(rel: str, index: int, fn: Callable[[dict], Any] | None = None) -> Step:
    """Append a (changed) copy of item `index` to the List in rel."""
    def change(doc: dict) -> None:
        dup = json.loads(json.dumps(doc["items"][index]))
        if fn is not None:
            fn(dup)
        doc["items"].append(dup)
    return edit(rel, change)


def bundle(*steps: Step, manifest: bool = True) -> Callable[[Path], Path]:
    """A builder: copy the lab into dest, apply the steps, return the bundle directory."""
    def build(dest: Path) -> Path:
        root = lab(dest, manifest=manifest)
        for s in steps:
            s(root)
        return root
    return build


# -- DRA bundles (tests/data/recordings/dra-exhausted-v1.36, real v1.36.2 objects; no manifest.json) ------------

DRA = RECORDINGS / "dra-exhausted-v1.36"
DRA_WORDS = {"lab/holder-1": "node-side", "lab/holder-2": "node-side", "lab/waiter": "exhausted"}
DRA_WAITER_CLAIM = 2  # resourceclaims.json $.items[2]: lab/waiter-gpu-2p5g6, the claim the waiter is judged on


def dra_bundle(*steps: Step) -> Callable[[Path], Path]:
    """A builder: copy the recorded DRA bundle (its JSON files only) into dest, apply the steps."""
    def build(dest: Path) -> Path:
        root = dest / "bundle"
        shutil.copytree(DRA, root, ignore=shutil.ignore_patterns("manifests", "summary.txt"))
        for p in root.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        for s in steps:
            s(root)
        return root
    return build


def cel_selector(where: str, expression: str) -> Step:
    """Add a CEL selector to the DeviceClass (`class`) or to the waiter's claim request (`claim`)."""
    def change(doc: dict) -> None:
        if where == "class":
            target = doc["items"][0]["spec"]
        else:
            target = doc["items"][DRA_WAITER_CLAIM]["spec"]["devices"]["requests"][0]["exactly"]
        target.setdefault("selectors", []).append({"cel": {"expression": expression}})
    return edit("deviceclasses.json" if where == "class" else "resourceclaims.json", change, seal=False)


def cel_taint_rule(expression: str) -> Step:
    """Add devicetaintrules.json (the recording has none) with one v1alpha3 rule (v1.33/v1.34 shape) whose CEL
    selector is the expression: the tracker evaluates it against every device (resourceslice/tracker applyPatches)."""
    rule = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "hostile"},
            "spec": {"deviceSelector": {"selectors": [{"cel": {"expression": expression}}]},
                     "taint": {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoSchedule"}}}
    return raw("devicetaintrules.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [rule]}), seal=False)


def many_taint_rules(n: int) -> Step:
    """Add devicetaintrules.json with n v1beta2 rules, each with the empty selector and its own taint key: every
    device carries n taints (tracker.go applyPatches appends each rule's), which the answers must not print whole."""
    rules = [{"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": f"drain-{i:04}"},
              "spec": {"deviceSelector": {},
                       "taint": {"key": f"gpu.example.com/drain-{i:04}", "value": "true", "effect": "NoSchedule"}}}
             for i in range(n)]
    return raw("devicetaintrules.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": rules}), seal=False)


# -- generated content -----------------------------------------------------------------------

def deep_json(depth: int, leaf: str = "0") -> bytes:
    return b"[" * depth + leaf.encode() + b"]" * depth


def pad_json(extra: int) -> Callable[[bytes], bytes]:
    """The same JSON followed by `extra` bytes of whitespace (still valid JSON, far larger)."""
    return lambda old: old + b" " * extra


# -- tar archives ----------------------------------------------------------------------------

def tar_of(dest: Path, extra: list[tuple[tarfile.TarInfo, bytes | None]] = (), *, with_lab: bool = True,
           name: str = "bundle.tar.gz", mode: str = "w:gz") -> Path:
    """The lab bundle as a .tar.gz (top directory `lab/`), plus hostile members."""
    out = dest / name
    with tarfile.open(out, mode) as tf:
        if with_lab:
            tf.add(LAB, arcname="lab", filter=lambda ti: None if ti.name.startswith("lab/manifests") else ti)
        for info, payload in extra:
            if info.isreg():
                payload = payload or b""
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
            else:
                tf.addfile(info)
    return out


def member(name: str, kind: bytes = tarfile.REGTYPE, *, linkname: str = "", payload: bytes | None = b"x") -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o644
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    return info, payload if kind == tarfile.REGTYPE else None


def tar_builder(*extra: tuple[tarfile.TarInfo, bytes | None], with_lab: bool = True) -> Callable[[Path], Path]:
    return lambda dest: tar_of(dest, list(extra), with_lab=with_lab)


def lying_header_tar(dest: Path, claimed: int, actual: bytes, name: str = "lab/pods.json") -> Path:
    """A .tar.gz whose one member's header claims `claimed` bytes while `actual` follows."""
    info = tarfile.TarInfo(name)
    info.size = claimed
    info.mode = 0o644
    header = info.tobuf(tarfile.GNU_FORMAT)
    body = actual + b"\0" * (-len(actual) % 512)
    out = dest / "lying.tar.gz"
    with gzip.open(out, "wb", compresslevel=1) as gz:
        gz.write(header + body + b"\0" * 1024)
    return out


def gzip_bomb_tar(dest: Path, unpacked: int, name: str = "lab/pods.json", *, honest: bool = True) -> Path:
    """A small .tar.gz holding one member of `unpacked` zero bytes (a few MB compressed for GBs).

    honest=False: the header claims 1 KiB while the zeros follow (they then read as end-of-archive blocks).
    """
    info = tarfile.TarInfo(name)
    info.size = unpacked if honest else 1024
    info.mode = 0o644
    out = dest / ("bomb.tar.gz" if honest else "bomb-lying.tar.gz")
    chunk = b"\0" * (1 << 20)
    with gzip.open(out, "wb", compresslevel=9) as gz:
        gz.write(info.tobuf(tarfile.GNU_FORMAT))
        left = unpacked
        while left > 0:
            n = min(left, len(chunk))
            gz.write(chunk[:n])
            left -= n
        gz.write(b"\0" * (-unpacked % 512) + b"\0" * 1024)
    return out


def words_from_stdout(stdout: str) -> dict[str, str]:
    """`analyze -o words` output as {key: word}; every line must be KEY<TAB>WORD."""
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        key, sep, word = line.partition("\t")
        assert sep and key and word and "\t" not in word, f"not a words line: {line!r}"
        assert key not in out, f"{key} answered twice"
        out[key] = word
    return out


