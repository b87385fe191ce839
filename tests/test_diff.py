"""`gpu-triage diff OLD NEW`: what changed between two bundles.

Bundles are copies of the lab (dumps/lab-seven-states-v1.36, real kubectl output) changed only where a
case needs: filler-a finished (phase Succeeded: kubelet's terminal phase, after which the scheduler's
NodeInfo no longer counts its requests) and gpu-alloczero repaired (device plugin re-registered:
status.allocatable["nvidia.com/gpu"] back to 4).
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import Callable

import pytest

from analyzer.diff.command import diff_bundles
from conftest import LAB, bound_pod, cordon, gpu_node, gpu_pod, run_cli

HOSTILE = "evil\x1b]0;pwned\x07<img src=x onerror=alert(1)>|x|*y*\nlab/forged"


def lab_copy(tmp_path: Path, name: str, *, pods: Callable[[list[dict]], list[dict]] | None = None,
             nodes: Callable[[list[dict]], list[dict]] | None = None, quotas: Callable[[list[dict]], list[dict]] | None = None,
             manifest: Callable[[dict], None] | None = None) -> Path:
    """A full copy of the lab bundle (manifest included), each file changed by its function."""
    root = tmp_path / name
    shutil.copytree(LAB, root)
    for kind, fn in (("pods", pods), ("nodes", nodes), ("resourcequotas", quotas)):
        if fn is not None:
            path = root / f"{kind}.json"
            doc = json.loads(path.read_text())
            doc["items"] = fn(doc["items"])
            path.write_text(json.dumps(doc, indent=4))
    if manifest is not None:
        m = json.loads((root / "manifest.json").read_text())
        manifest(m)
        for e in m["files"]:  # the checksums follow the edited files, as seal_bundle.py would write them
            e.pop("sha256", None)
            e.pop("bytes", None)
        (root / "manifest.json").write_text(json.dumps(m, indent=2))
    elif pods or nodes or quotas:
        m = json.loads((root / "manifest.json").read_text())
        for e in m["files"]:
            e.pop("sha256", None)
            e.pop("bytes", None)
        (root / "manifest.json").write_text(json.dumps(m, indent=2))
    return root


def by_name(items: list[dict], name: str) -> dict:
    return next(i for i in items if i["metadata"]["name"] == name)


def finished_and_repaired(tmp_path: Path) -> Path:
    def pods(items: list[dict]) -> list[dict]:
        by_name(items, "filler-a")["status"]["phase"] = "Succeeded"
        return items

    def nodes(items: list[dict]) -> list[dict]:
        by_name(items, "gpu-alloczero")["status"]["allocatable"]["nvidia.com/gpu"] = "4"
        return items
    return lab_copy(tmp_path, "new", pods=pods, nodes=nodes)


def diff_json(old: Path, new: Path, status: int = 0) -> dict:
    proc = run_cli("diff", old, new, "-o", "json")
    assert proc.returncode == status, proc.stderr
    return json.loads(proc.stdout)


def test_finished_filler_and_repaired_node_make_two_targets_fit_now(tmp_path):
    doc = diff_json(LAB, finished_and_repaired(tmp_path))
    assert {(t["key"], t["before"], t["after"]) for t in doc["changed"]} == {
        ("lab/exhausted", "exhausted", "fits-now"), ("lab/allocatable-zero", "allocatable-zero", "fits-now")}
    assert doc["appeared"] == [] and doc["resolved"] == []
    changes = {(n["node"], c["field"]): (c["before"], c["after"]) for n in doc["nodes"] for c in n["changes"]}
    assert changes == {("gpu-alloczero", "allocatable"): ({"nvidia.com/gpu": 0}, {"nvidia.com/gpu": 4}),
                       ("gpu-ok", "used"): ({"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 1})}
    [pool] = doc["pools"]
    assert (pool["before"], pool["after"], pool["changed"]) == ([8, 4, 4], [12, 1, 11], True)


def test_table_states_collection_first_then_targets(tmp_path):
    def later(m: dict) -> None:
        m["created"] = "2026-11-30T09:00:00Z"
    new = lab_copy(tmp_path, "new", manifest=later)
    proc = run_cli("diff", LAB, new)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("OLD") and "collected 2026-11-29T17:17:20Z" in lines[0]
    assert lines[1].startswith("NEW") and "collected 2026-11-30T09:00:00Z" in lines[1]
    assert lines[2] == "Collected: the same files in both."
    assert "Targets: 0 appeared, 0 resolved, 0 changed word" in proc.stdout


def test_collection_differences_are_stated(tmp_path):
    def quota_failed(m: dict) -> None:
        for e in m["files"]:
            if e["path"] == "resourcequotas.json":
                e["status"] = "failed"
                e["stderr"] = "Error from server (Forbidden): resourcequotas is forbidden"
    new = lab_copy(tmp_path, "new", manifest=quota_failed)
    (new / "resourcequotas.json").unlink()
    (new / "runtimeclasses.json").unlink()
    d = diff_bundles(LAB, new)
    assert ("resourcequotas.json", "collected", "failed") in d.collection.status_changed
    assert ("runtimeclasses.json", "collected", "missing") in d.collection.status_changed
    # The quota is gone from the new bundle: each of its keys shows as removed.
    assert [(q.namespace, q.quota, q.key, q.before, q.after) for q in d.quotas] == [
        ("quota-lab", "gpu-quota", "requests.nvidia.com/gpu", ("1", "0"), None)]


def test_deleted_pod_is_resolved_deleted_and_a_bound_pod_now_runs(tmp_path):
    def pods(items: list[dict]) -> list[dict]:
        items = [p for p in items if p["metadata"]["name"] != "taint"]
        runs = by_name(items, "no-gpu-node")
        runs["spec"]["nodeName"] = "gpu-tainted"
        runs["status"]["phase"] = "Running"
        return items
    d = diff_bundles(LAB, lab_copy(tmp_path, "new", pods=pods))
    resolved = {t.key: (t.before, t.why) for t in d.resolved}
    assert resolved["lab/taint"] == ("untolerated-taint", "deleted (not in the new pods.json)")
    assert resolved["lab/no-gpu-node"] == ("no-gpu-node", "now runs on gpu-tainted (phase Running)")


def test_appeared_target_node_cordoned_and_quota_used(tmp_path):
    def pods(items: list[dict]) -> list[dict]:
        return items + [gpu_pod("newcomer", node_selector={"kubernetes.io/hostname": "gpu-ok"})]

    def nodes(items: list[dict]) -> list[dict]:
        cordon(by_name(items, "gpu-tainted"))
        return items

    def quotas(items: list[dict]) -> list[dict]:
        items[0]["status"]["used"]["requests.nvidia.com/gpu"] = "1"
        return items
    d = diff_bundles(LAB, lab_copy(tmp_path, "new", pods=pods, nodes=nodes, quotas=quotas))
    assert [(t.key, t.after) for t in d.appeared] == [("lab/newcomer", "exhausted")]
    [node] = d.nodes
    fields = {c.field: (c.before, c.after) for c in node.changes}
    assert node.node == "gpu-tainted" and fields["cordoned"] == (False, True)
    assert fields["taints"][1] == ("node.kubernetes.io/unschedulable:NoSchedule", "nvidia.com/gpu=present:NoSchedule")
    assert [(q.key, q.before, q.after) for q in d.quotas] == [("requests.nvidia.com/gpu", ("1", "0"), ("1", "1"))]
    # causes.md `cordoned`: only when the cordon is the only exclusion; gpu-tainted keeps its own taint.
    assert d.changed == ()


def test_tar_gz_input_gives_the_same_diff(tmp_path):
    new = finished_and_repaired(tmp_path)
    old_tar = tmp_path / "old.tar.gz"
    new_tar = tmp_path / "new.tar.gz"
    for src, dest in ((LAB, old_tar), (new, new_tar)):
        with tarfile.open(dest, "w:gz") as tf:
            tf.add(src, arcname="bundle")
    from_dirs = diff_json(LAB, new)
    from_tars = diff_json(old_tar, new_tar)
    for key in ("appeared", "resolved", "changed", "nodes", "pools", "quotas"):
        assert from_tars[key] == from_dirs[key], key


@pytest.mark.parametrize("make, needle", [
    (lambda tmp: tmp / "nowhere", "no such file or directory"),
    (lambda tmp: (tmp / "junk.tar.gz").write_bytes(b"\x1f\x8bnot really") and tmp / "junk.tar.gz", "not a readable tar archive"),
])
def test_unreadable_bundle_exits_2_with_a_clear_message(tmp_path, make, needle):
    bad = make(tmp_path)
    for args in ((LAB, bad), (bad, LAB)):
        proc = run_cli("diff", *args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert needle in proc.stderr and str(bad) in proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_bundle_with_unparsable_nodes_json_names_the_file(tmp_path):
    new = lab_copy(tmp_path, "new")
    (new / "nodes.json").write_text("[{")
    proc = run_cli("diff", LAB, new)
    assert proc.returncode == 2 and "nodes.json" in proc.stderr and "Traceback" not in proc.stderr


def test_hostile_names_escaped_in_every_format(tmp_path):
    def pods(items: list[dict]) -> list[dict]:
        return items + [gpu_pod(HOSTILE), bound_pod("holder", HOSTILE, gpus=1)]

    def nodes(items: list[dict]) -> list[dict]:
        return items + [gpu_node(HOSTILE)]
    new = lab_copy(tmp_path, "new", pods=pods, nodes=nodes)
    table = run_cli("diff", LAB, new)
    assert table.returncode == 0, table.stderr
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert not any(line.startswith("lab/forged") for line in table.stdout.splitlines())
    assert "evil\\x1b]0;pwned\\x07" in table.stdout
    md = run_cli("diff", LAB, new, "-o", "markdown").stdout
    assert "\x1b" not in md and "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "evil" in line]
    assert len(rows) == 2  # the appeared target and the added node, each one table row
    for line in rows:
        cells = line.count("|") - line.count("\\|")  # the name's pipes are escaped: the columns stay
        assert cells in (5 + 1, 4 + 1), line
        assert "\\|x\\|\\*y\\*" in line
    doc = diff_json(LAB, new)
    assert any(t["key"] == f"lab/{HOSTILE}" for t in doc["appeared"])  # JSON escapes control characters itself
    assert any(n["node"] == HOSTILE and n["kind"] == "added" for n in doc["nodes"])


def test_bundle_without_manifest_says_so_and_names_what_only_one_collected(tmp_path):
    from conftest import copy_lab as bare_lab  # the lab's JSON files without manifest.json or attempts/

    bare = bare_lab(tmp_path)
    d = diff_bundles(LAB, bare)
    assert (d.collection.old_created, d.collection.new_created) == ("2026-11-29T17:17:20Z", None)
    assert d.collection.only_old == ("attempts/41-pod-quota-exceeded.json", "attempts/42-pod-runtimeclass-missing.json")
    assert d.collection.only_new == () and d.collection.status_changed == ()
    # The stored attempts are targets only where they were collected.
    assert {t.key for t in d.resolved} == {"quota-lab/quota-exceeded", "lab/runtimeclass-missing"}
    assert all(t.why == "no longer a target (the attempt is not in the new bundle and no such pod exists)" for t in d.resolved)
    table = run_cli("diff", LAB, bare).stdout
    assert "collected unknown (no manifest)" in table.splitlines()[1]


def test_each_bundle_is_read_once_and_a_finished_target_says_where(tmp_path, monkeypatch):
    """diff reads a bundle the way analyze does: pods.json once, streamed (on a 150,000-pod bundle reading it
    whole, twice, took 9 GB), and a target that has since finished still says where it ran."""
    from analyzer.bundle.reading import Bundle

    reads: list[str] = []
    original = Bundle.read_mapped
    whole = Bundle.read_bytes

    def mapped(self, rel):
        reads.append(rel)
        monkeypatch.setattr(Bundle, "read_bytes", whole)  # read_mapped reads a small file with read_bytes
        try:
            return original(self, rel)
        finally:
            monkeypatch.setattr(Bundle, "read_bytes", counted)

    def counted(self, rel):
        reads.append(rel)
        return whole(self, rel)

    monkeypatch.setattr(Bundle, "read_mapped", mapped)
    monkeypatch.setattr(Bundle, "read_bytes", counted)

    def finish(items: list[dict]) -> list[dict]:
        done = {"nodeName": "gpu-ok"}
        return [{**p, "spec": {**p["spec"], **done}, "status": {**p["status"], "phase": "Succeeded"}}
                if p["metadata"]["name"] == "exhausted" else p for p in items]

    d = diff_bundles(LAB, lab_copy(tmp_path, "new", pods=finish))
    assert reads.count("pods.json") == 2 and reads.count("nodes.json") == 2  # once per bundle
    assert {t.key: t.why for t in d.resolved}["lab/exhausted"] == "finished (Succeeded) on gpu-ok"


def test_one_bad_node_is_one_problem_line_and_a_pod_that_cannot_be_read_makes_usage_unknown(tmp_path):
    """A node label that is not a string: one line for the node (analyze's words), not one per reader. A running
    pod holding 3 GPUs whose annotation is not a string cannot be counted: the node says its usage is now
    unknown beside the lower `used`, instead of a drop in use that did not happen."""
    def nodes(items: list[dict]) -> list[dict]:
        for n in items:
            if n["metadata"]["name"] == "gpu-tainted":
                n["metadata"]["labels"] = {**n["metadata"].get("labels", {}), "rack": 5}
        return items

    def pods(items: list[dict]) -> list[dict]:
        for p in items:
            if p["metadata"]["name"] == "filler-a":
                p["metadata"]["annotations"] = {"owner": 5}
        return items

    new = lab_copy(tmp_path, "new", nodes=nodes, pods=pods)
    proc = run_cli("diff", LAB, new)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith(str(new))]
    assert len([line for line in lines if "nodes.json" in line]) == 1, lines
    assert len([line for line in lines if "pods.json" in line]) == 1, lines
    assert "gpu-triage: 2 item(s) could not be read" in proc.stderr
    assert "gpu-ok  usage_unknown: no -> yes" in proc.stdout


def test_a_kind_one_manifest_could_not_collect_is_said_so_not_only_in_new(tmp_path):
    # As scripts/collect.py records them: kubectl's failure ("failed") and a kind the API server does not serve.
    from helpers import copy_bundle

    new = copy_bundle(tmp_path)
    manifest = json.loads((new / "manifest.json").read_text())
    manifest["files"] += [{"path": "volumeattachments.json", "kind": "volumeattachments", "status": "failed",
                           "stderr": "Error from server (Forbidden)"},
                          {"path": "workloads.kueue.x-k8s.io.json", "kind": "workloads.kueue.x-k8s.io",
                           "status": "not-served"}]
    (new / "manifest.json").write_text(json.dumps(manifest))
    d = diff_bundles(LAB, new)
    assert d.collection.only_new == ()
    assert ("volumeattachments.json", "new", "failed") in d.collection.not_collected
    table = run_cli("diff", LAB, new).stdout
    assert "only in NEW" not in table
    assert "1 file(s) not served by the API server in the new bundle (not in the other): workloads.kueue.x-k8s.io.json" in table
    markdown = run_cli("diff", LAB, new, "-o", "markdown").stdout
    assert "in the new bundle (not in the other): volumeattachments.json" in markdown


def test_every_target_change_says_why_in_every_format(tmp_path):
    from conftest import copy_lab as bare_lab

    bare = bare_lab(tmp_path)
    doc = diff_json(bare, LAB)
    assert doc["appeared"] and all(t["why"] for t in doc["appeared"])
    markdown = run_cli("diff", bare, LAB, "-o", "markdown").stdout
    assert "| appeared | quota-lab/quota-exceeded | - | quota-exceeded | quota gpu-quota" in markdown
    assert "appeared  quota-lab/quota-exceeded  quota-exceeded: quota gpu-quota" in run_cli("diff", bare, LAB).stdout
