"""`gpu-triage nodes` and the occupancy API (analyzer/occupancy/).

The numbers are checked against the test's own sum over the raw JSON (independent of analyzer code):
used = effective requests of pods bound to the node whose phase is not Succeeded/Failed
(staging/src/k8s.io/kubectl/pkg/describe/describe.go: describe node lists pods with the field selector
spec.nodeName=<node>,status.phase!=Succeeded,status.phase!=Failed, then getPodsTotalRequestsAndLimits), and a
pod's effective request is resourcehelper.PodRequests (k8s.io/component-helpers/resource/helpers.go):
max(app containers + sidecars, each init container + the sidecars started before it) + overhead.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile
from collections import defaultdict
from fnmatch import fnmatchcase
from pathlib import Path

import jsonschema
import pytest

from helpers import RECORDINGS, SCHEMAS

import tempfile

from analyzer.model.matching import Taint
from analyzer.model.nodes import NodeView
from analyzer.occupancy.compute import compute
from analyzer.occupancy.records import PodUse
from analyzer.occupancy.from_analysis import occupancy_of
from analyzer.pipeline import Options, analyse
from conftest import (GPU_TAINT, LAB, bound_pod, copy_lab, cordon, gpu_node, gpu_pod, lab_items, make_bundle, run_cli)

SCHEMA = json.loads((SCHEMAS / "nodes-output.schema.json").read_text())
ACCELERATORS = ("nvidia.com/gpu", "nvidia.com/mig-*", "amd.com/gpu", "gpu.intel.com/*", "habana.ai/*",
                "aws.amazon.com/neuron*", "google.com/tpu")
HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J<b>x</b>|a|b|\nlab/forged"


def nodes_json(bundle: Path, *args: str) -> dict:
    proc = run_cli("nodes", bundle, "-o", "json", *args)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    return doc


def rows_by(doc: dict) -> dict[tuple[str, str], dict]:
    return {(r["node"], r["resource"]): r for r in doc["rows"]}


# -- the test's own arithmetic over raw JSON ------------------------------------------------------------

def _whole(value: object) -> int:
    """Accelerator amounts are whole numbers ("4", 4, "1e1" does not occur in these bundles)."""
    return int(str(value))


def _container(c: dict, resource: str) -> int:
    res = c.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    if resource in req:
        return _whole(req[resource])
    return _whole(lim[resource]) if resource in lim else 0


def _pod_request(spec: dict, resource: str) -> int:
    app = sum(_container(c, resource) for c in spec.get("containers") or ())
    sidecars = 0
    init_peak = 0
    for c in spec.get("initContainers") or ():
        own = _container(c, resource)
        if c.get("restartPolicy") == "Always":
            sidecars += own
            init_peak = max(init_peak, sidecars)
        else:
            init_peak = max(init_peak, sidecars + own)
    total = max(app + sidecars, init_peak)
    overhead = (spec.get("overhead") or {}).get(resource)
    return total + (_whole(overhead) if overhead is not None else 0)


def independent_sum(bundle: Path) -> dict[tuple[str, str], tuple[int | None, int | None, int]]:
    """(node, accelerator resource) -> (capacity, allocatable, used) from the raw files."""
    nodes = json.loads((bundle / "nodes.json").read_text())["items"]
    pods = json.loads((bundle / "pods.json").read_text())["items"]
    used: dict[tuple[str, str], int] = defaultdict(int)
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        names = {r for c in (p["spec"].get("containers") or []) + (p["spec"].get("initContainers") or [])
                 for sec in ("requests", "limits") for r in ((c.get("resources") or {}).get(sec) or {})}
        for r in names:
            if any(fnmatchcase(r, pat) for pat in ACCELERATORS):
                used[(node, r)] += _pod_request(p["spec"], r)
    out = {}
    for n in nodes:
        st = n["status"]
        for r in set(st.get("capacity", {})) | set(st.get("allocatable", {})):
            if any(fnmatchcase(r, pat) for pat in ACCELERATORS):
                cap, alloc = st["capacity"].get(r), st["allocatable"].get(r)
                out[(n["metadata"]["name"], r)] = (None if cap is None else _whole(cap),
                                                   None if alloc is None else _whole(alloc), used.get((n["metadata"]["name"], r), 0))
    for key, units in used.items():
        if key not in out and units:
            out[key] = (None, None, units)
    return out


def assert_equals_independent_sum(bundle: Path) -> dict:
    doc = nodes_json(bundle)
    expected = independent_sum(bundle)
    got = rows_by(doc)
    for key, (cap, alloc, used) in expected.items():
        assert key in got, f"{key} missing from nodes -o json"
        row = got[key]
        assert (row["capacity"], row["allocatable"], row["used"]) == (cap, alloc, used), key
        assert row["free"] == max(0, (alloc or 0) - used), key
        assert row["overcommitted"] == (used > (alloc or 0)), key
    # Rows beyond the reported resources are only GPU-looking nodes without the resource: nothing used there.
    for key in set(got) - set(expected):
        assert got[key]["capacity"] is None and got[key]["used"] == 0 and "no-plugin" in got[key]["states"], key
    pools: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in doc["rows"]:
        p = pools[(row["pool"], row["resource"])]
        p[0] += row["allocatable"] or 0
        p[1] += row["used"]
        p[2] += row["free"]
    assert {(p["pool"], p["resource"]): [p["allocatable"], p["used"], p["free"]] for p in doc["pools"]} == dict(pools)
    return doc


# -- the lab: each node's GPUs, who holds them, and why a node cannot serve ---------------------------------

def test_lab_picture_gpu_ok_full_alloczero_noplugin_tainted():
    doc = nodes_json(LAB)
    rows = rows_by(doc)
    ok = rows[("gpu-ok", "nvidia.com/gpu")]
    assert (ok["allocatable"], ok["used"], ok["free"]) == (4, 4, 0)
    assert [(h["name"], h["units"]) for h in ok["holders"]] == [("filler-a", 3), ("filler-b", 1)]  # finished-job Succeeded
    assert ok["states"] == ["full"]
    zero = rows[("gpu-alloczero", "nvidia.com/gpu")]
    assert (zero["capacity"], zero["allocatable"], zero["free"]) == (4, 0, 0)
    assert "allocatable-zero" in zero["states"]
    noplugin = rows[("gpu-noplugin", "nvidia.com/gpu")]
    assert noplugin["capacity"] is None and noplugin["allocatable"] is None and noplugin["states"] == ["no-plugin"]
    tainted = rows[("gpu-tainted", "nvidia.com/gpu")]
    assert (tainted["allocatable"], tainted["used"], tainted["free"]) == (4, 0, 4)
    assert tainted["states"] == ["tainted", "free"] and tainted["taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    # lab/taint wants it and does not tolerate the taint: its 4 free GPUs are not free for the waiting pods
    assert (tainted["pending_wanting"], tainted["pending_tolerating"], tainted["free_behind_taint"]) == (["lab/taint"], [], 4)
    assert {r["pool"] for r in doc["rows"]} == {"-"}  # no pool label on the lab's nodes
    assert doc["pools"] == [{"pool": "-", "resource": "nvidia.com/gpu", "nodes": 4, "allocatable": 8, "used": 4, "free": 4,
                             "free_behind_taint": 4}]


def test_lab_table_order_usable_free_first_then_broken_or_behind_a_taint_then_full():
    proc = run_cli("nodes", LAB)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:7] == ["NODE", "POOL", "RESOURCE", "ALLOC", "USED", "FREE", "STATE"]
    order = [line.split()[0] for line in lines[1:5]]
    assert order == ["gpu-alloczero", "gpu-noplugin", "gpu-tainted", "gpu-ok"]  # gpu-tainted's free sit behind its taint
    assert "allocatable 0 of capacity 4" in lines[1]
    assert "tainted nvidia.com/gpu=present:NoSchedule (not tolerated by lab/taint)" in lines[3]
    assert "1: lab/exhausted" in lines[4]  # the pod pinned to gpu-ok by nodeSelector waits for it


def test_lab_pending_wanting_follows_node_selector():
    doc = nodes_json(LAB)
    rows = rows_by(doc)
    assert rows[("gpu-ok", "nvidia.com/gpu")]["pending_wanting"] == ["lab/exhausted"]
    assert rows[("gpu-tainted", "nvidia.com/gpu")]["pending_wanting"] == ["lab/taint"]  # nodeSelector pool=tainted
    wanted = {k for r in doc["rows"] for k in r["pending_wanting"]}
    assert "lab/selector-mismatch" not in wanted  # gpu-type=h100 is on no node
    assert "lab/selector-mismatch" in doc["pending"]["nvidia.com/gpu"]
    assert "lab/filler-b" not in doc["pending"]["nvidia.com/gpu"]  # bound: it holds, it does not wait
    assert doc["unmatched"] == {"nvidia.com/gpu": ["lab/selector-mismatch"]}
    table = run_cli("nodes", LAB).stdout
    assert ("pending pods asking for nvidia.com/gpu: 5; 1 whose nodeSelector matches no node above "
            "(lab/selector-mismatch)") in table


def test_lab_equals_independent_sum():
    assert_equals_independent_sum(LAB)


def test_csv_has_header_and_one_row_per_json_row():
    proc = run_cli("nodes", LAB, "-o", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    assert rows[0][:7] == ["node", "pool", "resource", "capacity", "allocatable", "used", "free"]
    body = {r[0]: r for r in rows[1:]}
    assert len(rows) == 5
    assert body["gpu-ok"][5:7] == ["4", "0"] and body["gpu-ok"][9] == "lab/filler-a=3 lab/filler-b=1"
    assert body["gpu-noplugin"][3:5] == ["", ""]


def test_tar_gz_bundle(tmp_path):
    archive = tmp_path / "lab.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(LAB, arcname="lab")
    assert rows_by(nodes_json(archive)) == rows_by(nodes_json(LAB))


# -- generated bundles -------------------------------------------------------------------------------

def test_generated_equals_independent_sum(generated):
    doc = assert_equals_independent_sum(generated)
    resources = {r["resource"] for r in doc["rows"]}
    assert "nvidia.com/gpu" in resources and any(r.startswith("nvidia.com/mig-") for r in resources)
    assert all(r["pool"] != "-" for r in doc["rows"])  # every generated node has nvidia.com/gpu.product or an instance type


def test_generated_resource_filter_pattern(generated):
    doc = nodes_json(generated, "--resource", "nvidia.com/mig-*")
    assert doc["rows"] and all(r["resource"].startswith("nvidia.com/mig-") for r in doc["rows"])
    assert all(p["resource"].startswith("nvidia.com/mig-") for p in doc["pools"])


# -- Kubernetes rules, one each -----------------------------------------------------------------------

def _occ(nodes: list[dict], pods: list[dict]):
    """The picture as `gpu-triage nodes` builds it: the bundle read and modelled once, then occupancy_of."""
    with tempfile.TemporaryDirectory() as tmp:
        analysis = analyse(make_bundle(Path(tmp), nodes=nodes, pods=pods), Options())
        with analysis.bundle:
            occ = occupancy_of(analysis)
    assert occ is not None
    return {(r.node, r.resource): r for r in occ.rows}


def test_terminated_pods_free_their_units_bound_pending_holds_them():
    # describe.go getPodsTotalRequestsAndLimits: non-terminated pods only; a bound Pending pod (image pull) holds.
    pods = [bound_pod("run", "n1", gpus=1), bound_pod("pull", "n1", gpus=2, phase="Pending"),
            bound_pod("done", "n1", gpus=4, phase="Succeeded"), bound_pod("crashed", "n1", gpus=4, phase="Failed")]
    row = _occ([gpu_node("n1", gpus="8")], pods)[("n1", "nvidia.com/gpu")]
    assert (row.used, row.free) == (3, 5)
    assert [h.name for h in row.holders] == ["pull", "run"]


def test_prefer_no_schedule_taint_does_not_block_and_cordon_is_not_a_taint():
    # scheduler plugins/tainttoleration Filter with helper.DoNotScheduleTaintsFilterFunc: only NoSchedule, NoExecute block.
    soft = gpu_node("soft", taints=[{"key": "gpu", "value": "x", "effect": "PreferNoSchedule"}])
    cordoned = cordon(gpu_node("c"))
    hard = gpu_node("hard", taints=[dict(GPU_TAINT)])
    rows = _occ([soft, cordoned, hard], [])
    assert rows[("soft", "nvidia.com/gpu")].states == ("free",) and rows[("soft", "nvidia.com/gpu")].taints == ()
    assert rows[("c", "nvidia.com/gpu")].states == ("cordoned", "free")
    assert rows[("hard", "nvidia.com/gpu")].states == ("tainted", "free")


def test_not_ready_and_zero_gpu_nodes_are_shown():
    sick = gpu_node("sick")
    for c in sick["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"] = "Unknown"
    zero = gpu_node("zero", gpus="0")
    rows = _occ([sick, zero], [])
    assert rows[("sick", "nvidia.com/gpu")].states[0] == "not-ready"
    assert rows[("zero", "nvidia.com/gpu")].capacity == 0 and "no-plugin" in rows[("zero", "nvidia.com/gpu")].states


def test_mig_profiles_are_separate_rows_and_pool_label_precedence():
    node = gpu_node("mig", gpus="7", resource="nvidia.com/mig-1g.10gb",
                    labels={"node.kubernetes.io/instance-type": "a2-highgpu", "nvidia.com/gpu.product": "A100"})
    node["status"]["capacity"]["nvidia.com/mig-2g.20gb"] = node["status"]["allocatable"]["nvidia.com/mig-2g.20gb"] = "3"
    pods = [bound_pod("m1", "mig", gpus=2, resource="nvidia.com/mig-1g.10gb")]
    rows = _occ([node], pods)
    assert rows[("mig", "nvidia.com/mig-1g.10gb")].used == 2 and rows[("mig", "nvidia.com/mig-2g.20gb")].free == 3
    assert {r.pool for r in rows.values()} == {"A100"}


def test_overcommitted_when_a_pod_holds_more_than_allocatable():
    rows = _occ([gpu_node("n", gpus="4", alloc_gpus="0")], [bound_pod("old", "n", gpus=2)])
    row = rows[("n", "nvidia.com/gpu")]
    assert (row.used, row.free) == (2, 0) and row.states == ("allocatable-zero", "overcommitted")


def test_plain_nodes_are_left_out_of_the_picture():
    plain = gpu_node("cpu-only")
    for section in ("capacity", "allocatable"):
        plain["status"][section].pop("nvidia.com/gpu")
    del plain["metadata"]["labels"]["nvidia.com/gpu.present"]
    assert _occ([plain], []) == {}


def test_compute_over_slim_records():
    occ = compute([NodeView(name="a", index=0, labels={}, unschedulable=False, capacity={"amd.com/gpu": 2},
                            allocatable={"amd.com/gpu": 2}, taints=(Taint("k", "", "NoExecute"),), ready=True)],
                  [PodUse(namespace="ns", name="p", node="a", phase="Running", requests={"amd.com/gpu": 1}),
                   PodUse(namespace="ns", name="w", phase="Pending", requests={"amd.com/gpu": 2})])
    [row] = occ.rows
    assert (row.resource, row.used, row.free, row.states, row.wanting) == ("amd.com/gpu", 1, 1, ("tainted", "free"), ("ns/w",))


# -- bad input and hostile names ----------------------------------------------------------------------

def test_unreadable_bundle_exits_2_naming_the_file(tmp_path):
    root = copy_lab(tmp_path)
    (root / "nodes.json").write_text("{not json")
    proc = run_cli("nodes", root)
    assert proc.returncode == 2 and "nodes.json" in proc.stderr and "Traceback" not in proc.stderr
    (root / "nodes.json").unlink()
    proc = run_cli("nodes", root)
    assert proc.returncode == 2 and "nodes.json is not in the bundle" in proc.stderr


def test_one_bad_quantity_names_its_path_and_the_rest_is_answered(tmp_path):
    def edit(nodes: list[dict]) -> list[dict]:
        nodes[0]["status"]["allocatable"]["nvidia.com/gpu"] = "four"
        return nodes
    root = copy_lab(tmp_path, edit={"nodes": edit})
    proc = run_cli("nodes", root, "-o", "json")
    assert proc.returncode == 2, proc.stderr
    # Said once, as validate and analyze say it: the picture reads the analysis's model, not the file again.
    assert proc.stderr.count('nodes.json: $.items[0].status.allocatable["nvidia.com/gpu"]') == 1
    assert "Traceback" not in proc.stderr
    assert len(json.loads(proc.stdout)["rows"]) == 3


def test_hostile_names_escaped_in_table_csv_and_json(tmp_path):
    formula = "=HYPERLINK(\"http://x\")"
    nodes = lab_items("nodes") + [gpu_node(HOSTILE), gpu_node(formula)]
    pods = lab_items("pods") + [bound_pod(HOSTILE, HOSTILE, gpus=1), gpu_pod("w", node_selector={"x": HOSTILE})]
    root = make_bundle(tmp_path, pods=pods, nodes=nodes)
    table = run_cli("nodes", root)
    assert table.returncode == 0, table.stderr
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert "evil\\x1b]0;pwned\\x07" in table.stdout and "\\nlab/forged" in table.stdout
    assert not any(line.startswith("lab/forged") for line in table.stdout.splitlines())
    out = run_cli("nodes", root, "-o", "csv").stdout
    assert "\x1b" not in out
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 1 + 6 and any("evil\\x1b" in r[0] and "|a|b|" in r[0] for r in rows)
    assert "'" + formula in [r[0] for r in rows]  # a spreadsheet shows the name, never evaluates it
    doc = nodes_json(root)
    assert any(r["node"] == HOSTILE and r["holders"][0]["name"] == HOSTILE for r in doc["rows"])  # JSON escapes, exact round trip


def test_resource_option_adds_an_accelerator_the_defaults_do_not_count(tmp_path):
    fpga = gpu_node("fpga-1", gpus="2", resource="example.com/fpga")
    root = make_bundle(tmp_path, nodes=[fpga], pods=[bound_pod("f", "fpga-1", gpus=1, resource="example.com/fpga")])
    [row] = nodes_json(root, "--resource", "example.com/fpga")["rows"]
    assert (row["resource"], row["allocatable"], row["used"], row["free"]) == ("example.com/fpga", 2, 1, 1)
    # Without the option the node is still shown (it looks like a GPU node), as nvidia.com/gpu, but with no fpga row.
    assert "example.com/fpga" not in {r["resource"] for r in nodes_json(root)["rows"]}


@pytest.mark.parametrize("breakage, path", [
    (lambda n: n.__setitem__("metadata", "x"), "$.items[0].metadata: expected object"),
    (lambda n: n["metadata"].__setitem__("labels", {"a": 1}), "$.items[0].metadata.labels"),
    (lambda n: n["spec"].__setitem__("taints", [{"key": "k"}]), "$.items[0].spec.taints[0]"),
    (lambda n: n["status"]["capacity"].__setitem__("nvidia.com/gpu", "1e400"), '$.items[0].status.capacity["nvidia.com/gpu"]: expected a Kubernetes quantity'),
    (lambda n: n["status"]["allocatable"].__setitem__("nvidia.com/gpu", "-1"), '$.items[0].status.allocatable["nvidia.com/gpu"]: expected a Kubernetes quantity'),
])
def test_malformed_node_is_named_and_left_out(tmp_path, breakage, path):
    bad = gpu_node("bad")
    breakage(bad)
    root = make_bundle(tmp_path, nodes=[bad, gpu_node("good")], pods=[])
    proc = run_cli("nodes", root, "-o", "json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count(f"nodes.json: {path}") == 1  # the analysis's finding, said once
    assert [r["node"] for r in json.loads(proc.stdout)["rows"]] == ["good"]


def test_unreadable_bound_pod_marks_its_node_usage_unknown(tmp_path):
    bad = bound_pod("bad", "n1", gpus=1)
    bad["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "0.5"  # extended resources are integers
    root = make_bundle(tmp_path, nodes=[gpu_node("n1")], pods=[bad, bound_pod("ok", "n1", gpus=1)])
    proc = run_cli("nodes", root, "-o", "json")
    assert proc.returncode == 2 and "pods.json: $.items[0].spec" in proc.stderr
    [row] = json.loads(proc.stdout)["rows"]
    assert row["used"] == 1 and "usage-unknown" in row["states"]


def test_dra_devices_per_device_class_in_the_picture():
    # DRA devices per DeviceClass beside the device-plugin resources. The recorded dra-exhausted
    # bundle: dx1 offers two gpu.example.com devices, both allocated (holder-1, holder-2); the waiter wants one.
    proc = run_cli("nodes", RECORDINGS / "dra-exhausted-v1.36", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [row] = [r for r in doc["rows"] if r["resource"] == "deviceclass.resource.kubernetes.io/gpu.example.com"]
    assert (row["node"], row["allocatable"], row["used"], row["free"]) == ("dx1", 2, 2, 0)
    assert sorted(h["name"] for h in row["holders"]) == ["holder-1", "holder-2"]
    assert row["pending_wanting"] == ["lab/waiter"]
