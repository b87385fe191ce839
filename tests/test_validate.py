"""`gpu-triage validate` on the shipped example and on broken copies of it.

Each broken copy lives in tmp_path; every case checks the documented exit
status (0 valid, 1 violations, 2 unreadable), a message naming the file and
the JSON path, no traceback, and that the bundle was not modified.
"""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from helpers import LAB, assert_clean_failure, copy_bundle, run_cli, tree_digest


def _rewrite(path, mutate) -> None:
    doc = json.loads(path.read_text())
    mutate(doc)
    path.write_text(json.dumps(doc, indent=4) + "\n")






def test_shipped_example_is_valid():
    before = tree_digest(LAB)
    r = run_cli("validate", LAB)
    assert r.returncode == 0, r.stderr
    assert "valid" in r.stderr
    assert tree_digest(LAB) == before


def test_truncated_file_is_unreadable_exit_2(tmp_path):
    b = copy_bundle(tmp_path)
    data = (b / "pods.json").read_bytes()
    (b / "pods.json").write_bytes(data[: len(data) // 2])
    before = tree_digest(b)
    r = run_cli("validate", b)
    assert_clean_failure(r, 2, "pods.json: $: not JSON")
    assert tree_digest(b) == before


def test_wrong_kind_names_item_path(tmp_path):
    b = copy_bundle(tmp_path)
    (b / "pods.json").write_bytes((LAB / "nodes.json").read_bytes())
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, 'pods.json: $.items[0].kind: expected "Pod", found string "Node"')


def test_containers_as_string(tmp_path):
    b = copy_bundle(tmp_path)
    _rewrite(b / "pods.json", lambda d: d["items"][2]["spec"].__setitem__("containers", "cuda"))
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, 'pods.json: $.items[2].spec.containers: expected array, found string "cuda"')


def test_quantity_that_is_an_object(tmp_path):
    b = copy_bundle(tmp_path)
    _rewrite(b / "nodes.json", lambda d: d["items"][0]["status"]["allocatable"].__setitem__("nvidia.com/gpu", {"value": 4}))
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, 'nodes.json: $.items[0].status.allocatable["nvidia.com/gpu"]: expected a Kubernetes quantity',
                         'found object {"value":4}')


@pytest.mark.parametrize("bad", ["four", "1.5.5Gi", "-1", "1.5Gix"])
def test_quantity_grammar_violations(tmp_path, bad):
    b = copy_bundle(tmp_path)
    _rewrite(b / "nodes.json", lambda d: d["items"][2]["status"]["capacity"].__setitem__("cpu", bad))
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, 'nodes.json: $.items[2].status.capacity.cpu: expected a Kubernetes quantity', json.dumps(bad))


def test_odd_but_valid_quantities_pass(tmp_path):
    b = copy_bundle(tmp_path)

    def odd(d):
        d["items"][2]["status"]["capacity"].update({"cpu": "32000m", "memory": "1.5Gi", "pods": "1.1e2", "example.com/x": 3})
    _rewrite(b / "nodes.json", odd)
    (b / "manifest.json").unlink()
    assert run_cli("validate", b).returncode == 0


def test_checksum_mismatch(tmp_path):
    b = copy_bundle(tmp_path)
    data = (b / "events.json").read_bytes()
    (b / "events.json").write_bytes(data.replace(b"Registered Node", b"Registered node"))  # same size, other bytes
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, "events.json changed after collection: sha256 ", "when collected (manifest.json $.files[")


def test_size_mismatch_is_reported(tmp_path):
    b = copy_bundle(tmp_path)
    with open(b / "version.json", "a") as fh:
        fh.write("\n")
    r = run_cli("validate", b)
    size = (b / "version.json").stat().st_size
    assert_clean_failure(r, 1, f"version.json changed after collection: {size} bytes now, {size - 1} when collected")


def test_missing_nodes_json(tmp_path):
    b = copy_bundle(tmp_path)
    (b / "nodes.json").unlink()
    r = run_cli("validate", b)
    assert_clean_failure(r, 2, "nodes.json: missing")


def test_not_a_bundle(tmp_path):
    (tmp_path / "empty").mkdir()
    r = run_cli("validate", tmp_path / "empty")
    assert_clean_failure(r, 2, "not a bundle")
    r = run_cli("validate", tmp_path / "nowhere")
    assert_clean_failure(r, 2, "no such file or directory")


def _tar_with(tmp_path, extra: tarfile.TarInfo, payload: bytes = b"x") -> str:
    out = tmp_path / "bundle.tar.gz"
    with tarfile.open(out, "w:gz") as tf:
        tf.add(LAB, arcname="lab")
        tf.addfile(extra, io.BytesIO(payload) if extra.isfile() else None)
    return str(out)


def test_tar_with_dotdot_entry_is_refused(tmp_path):
    info = tarfile.TarInfo("lab/../../escape.txt")
    info.size = 1
    archive = _tar_with(tmp_path, info)
    r = run_cli("validate", archive)
    assert_clean_failure(r, 2, "refusing archive member 'lab/../../escape.txt'", "'..' leaves the bundle")
    assert not (tmp_path.parent / "escape.txt").exists()


def test_tar_of_the_example_validates_and_analyses_the_same(tmp_path):
    archive = tmp_path / "lab.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(LAB, arcname="lab-seven-states-v1.36")
    assert run_cli("validate", archive).returncode == 0
    assert run_cli("analyze", archive, "-o", "words").stdout == run_cli("analyze", LAB, "-o", "words").stdout


def test_bare_directory_with_pods_and_nodes_only(tmp_path):
    b = tmp_path / "bare"
    b.mkdir()
    for name in ("pods.json", "nodes.json"):
        (b / name).write_bytes((LAB / name).read_bytes())
    assert run_cli("validate", b).returncode == 0


def test_single_object_files_are_accepted(tmp_path):
    """`kubectl get pod X -o json` writes one object, not a List: accepted where a List is expected."""
    b = tmp_path / "single"
    b.mkdir()
    pods = json.loads((LAB / "pods.json").read_text())
    pod = next(p for p in pods["items"] if p["metadata"]["name"] == "exhausted")
    (b / "pods.json").write_text(json.dumps(pod, indent=4))
    (b / "nodes.json").write_bytes((LAB / "nodes.json").read_bytes())
    assert run_cli("validate", b).returncode == 0
    r = run_cli("analyze", b, "-o", "words")
    # Only this pod is in the bundle: nothing holds gpu-ok's GPUs, so by this bundle it fits.
    assert r.stdout == "lab/exhausted\tfits-now\n"
    # and a violation inside a single-object file is reported at $ paths, not $.items[0]
    pod["spec"]["containers"] = "cuda"
    (b / "pods.json").write_text(json.dumps(pod, indent=4))
    assert_clean_failure(run_cli("validate", b), 1, "pods.json: $.spec.containers: expected array")


def test_unknown_fields_and_old_clusters_load(tmp_path):
    """Lenient elsewhere: fields Kubernetes adds in later releases, or lacks in older ones, are fine."""
    b = copy_bundle(tmp_path)

    def future(d):
        for p in d["items"]:
            p["spec"]["someFieldFromV1_40"] = {"x": [1, 2]}
            p["status"].pop("qosClass", None)
    _rewrite(b / "pods.json", future)
    (b / "manifest.json").unlink()
    assert run_cli("validate", b).returncode == 0


def test_findings_are_capped_with_total_count(tmp_path):
    b = copy_bundle(tmp_path)

    def many(d):
        base = d["items"][0]
        d["items"] = []
        for i in range(120):
            p = json.loads(json.dumps(base))
            p["metadata"]["name"] = f"p{i}"
            p["spec"]["containers"] = "x"
            d["items"].append(p)
    _rewrite(b / "pods.json", many)
    (b / "manifest.json").unlink()
    r = run_cli("validate", b)
    assert_clean_failure(r, 1, "… 70 more", "120 violation(s)")
    assert len(r.stdout.splitlines()) == 51


def test_runs_from_any_directory_with_its_packaged_schemas(tmp_path):
    """Run outside the checkout: the installed package (non-editable in CI) must find its own schemas."""
    r = run_cli("validate", LAB, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("analyze", LAB, "-o", "words", cwd=tmp_path)
    assert "lab/exhausted\texhausted" in r.stdout
