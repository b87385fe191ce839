"""`resource-name-mismatch` (causes.md, node-start.md): GPUs under another name. Built from timeslicing-renamed-v1.36 (a
real v1.36 scheduler's message; nodes labelled as NVIDIA's GPU feature discovery labels them), changing only the nodes'
resources and labels each case needs. Resource names as NVIDIA's device plugin advertises them (k8s-device-plugin:
`nvidia.com/gpu.shared` with renameByDefault, `nvidia.com/mig-<profile>` under mixed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import analyse_dir
from helpers import RECORDINGS

from analyzer import words as w

TRAIN = "lab/train"


def bundle(tmp_path: Path, *, nodes=None, pod=None) -> Path:
    """timeslicing-renamed-v1.36, with `nodes(name, node)` and `pod(pod)` applied to the copies."""
    root = tmp_path / "ts"
    shutil.copytree(RECORDINGS / "timeslicing-renamed-v1.36", root, ignore=shutil.ignore_patterns("manifests"))
    for kind, change in (("nodes", nodes), ("pods", pod)):
        if change is None:
            continue
        doc = json.loads((root / f"{kind}.json").read_text())
        for item in doc["items"]:
            if kind == "nodes":
                change(item["metadata"]["name"], item)
            elif item["metadata"]["name"] == "train":
                change(item)
        (root / f"{kind}.json").write_text(json.dumps(doc, indent=4))
    return root


def resources(node: dict, named: dict[str, str] | None = None) -> None:
    """Replace the node's accelerator resources (capacity and allocatable alike)."""
    for part in ("capacity", "allocatable"):
        res = node["status"][part]
        for k in [k for k in res if k.startswith("nvidia.com/")]:
            del res[k]
        res.update(named or {})


def mig_mixed(name: str, node: dict, state: str = "success") -> None:
    if not name.startswith("ts"):
        return
    resources(node, {"nvidia.com/mig-1g.10gb": "56"})
    node["metadata"]["labels"].update({"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "all-1g.10gb",
                                       "nvidia.com/mig.config.state": state, "nvidia.com/gpu.sharing-strategy": "none",
                                       "nvidia.com/gpu.replicas": "1"})


def asks(resource: str):
    def change(pod: dict) -> None:
        c = pod["spec"]["containers"][0]["resources"]
        for part in ("limits", "requests"):
            c[part].pop("nvidia.com/gpu", None)
            c[part][resource] = "1"
    return change


def test_the_recording_asks_gpu_where_nodes_offer_gpu_shared():
    v = analyse_dir(RECORDINGS / "timeslicing-renamed-v1.36")[TRAIN]
    assert v.word == w.RESOURCE_NAME_MISMATCH
    [shared] = v.evidence["other_names"]
    assert shared["resource"] == "nvidia.com/gpu.shared"
    assert {(n["node"], n["free"]) for n in shared["nodes"]} == {("ts1", 79), ("ts2", 80)}  # notebook-a holds 1 on ts1
    [labels] = v.evidence["gpu_labels"]
    assert labels["labels"]["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert labels["labels"]["nvidia.com/gpu.replicas"] == "10"
    assert labels["labels"]["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
    assert "advertises nvidia.com/gpu.shared (80)" in v.reason


def test_gpu_asked_where_nodes_offer_mig_profiles_only(tmp_path):
    v = analyse_dir(bundle(tmp_path, nodes=mig_mixed))[TRAIN]
    assert v.word == w.RESOURCE_NAME_MISMATCH
    assert [o["resource"] for o in v.evidence["other_names"]] == ["nvidia.com/mig-1g.10gb"]
    assert v.evidence["gpu_labels"][0]["labels"]["nvidia.com/mig.strategy"] == "mixed"


def test_reconfigured_node_with_gpu_zero_beside_gpu_shared(tmp_path):
    # Capacity 0 is not advertising: the kubelet keeps the old name at 0 after the plugin renamed it.
    def change(name: str, node: dict) -> None:
        if name.startswith("ts"):
            node["status"]["capacity"]["nvidia.com/gpu"] = node["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    v = analyse_dir(bundle(tmp_path, nodes=change))[TRAIN]
    assert v.word == w.RESOURCE_NAME_MISMATCH
    assert "nvidia.com/gpu capacity 0; advertises nvidia.com/gpu.shared (80)" in v.reason


def test_a_mig_profile_asked_where_nodes_offer_another(tmp_path):
    v = analyse_dir(bundle(tmp_path, nodes=mig_mixed, pod=asks("nvidia.com/mig-3g.40gb")))[TRAIN]
    assert v.word == w.RESOURCE_NAME_MISMATCH
    assert v.evidence["other_names"][0]["resource"] == "nvidia.com/mig-1g.10gb"


def test_a_sibling_only_on_nodes_the_selector_excludes_is_not_resource_name_mismatch(tmp_path):
    # Candidates for `resource-name-mismatch` are the selector's survivors: c1 (no GPU at all) is all that is left.
    def pin_c1(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "c1"}
    assert analyse_dir(bundle(tmp_path, pod=pin_c1))[TRAIN].word == w.NO_GPU_NODE

    def nowhere(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert analyse_dir(bundle(tmp_path / "b", pod=nowhere))[TRAIN].word == w.SELECTOR_MISMATCH


def test_a_node_mid_reconfiguration_is_named_first(tmp_path):
    def change(name: str, node: dict) -> None:
        mig_mixed(name, node, state="pending" if name == "ts2" else "success")
    v = analyse_dir(bundle(tmp_path, nodes=change))[TRAIN]
    assert v.word == w.RESOURCE_NAME_MISMATCH
    [changing] = v.evidence["mig_reconfiguring"]
    assert changing.startswith("ts2 (nvidia.com/mig.config.state=pending") and "wait for the MIG manager" in changing
    assert v.evidence["gpu_labels"][0]["nodes"] == ["ts2"]  # the changing node's labels come first


def test_no_gpu_node_evidence_names_the_gfd_labels(tmp_path):
    def unplugged(name: str, node: dict) -> None:
        if name.startswith("ts"):
            resources(node)
    v = analyse_dir(bundle(tmp_path, nodes=unplugged))[TRAIN]
    assert v.word == w.NO_GPU_NODE
    assert "other_names" not in v.evidence
    assert v.evidence["gpu_labels"][0]["labels"]["nvidia.com/gpu.sharing-strategy"] == "time-slicing"


# -- `nodes` and the report: shared and MIG resources beside full GPUs, bound pods that did not start ----------

def nodes_json(root: Path) -> dict:
    import io

    from analyzer.occupancy.command import run
    from analyzer.output import NODES, formats_for
    out, err = io.StringIO(), io.StringIO()
    assert run(root, formats_for(NODES)["json"], out=out, err=err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_nodes_shows_gpu_shared_as_one_row_with_its_replicas():
    doc = nodes_json(RECORDINGS / "timeslicing-renamed-v1.36")
    rows = {(r["node"], r["resource"]): r for r in doc["rows"]}
    assert set(rows) == {("ts1", "nvidia.com/gpu.shared"), ("ts2", "nvidia.com/gpu.shared")}
    assert rows[("ts1", "nvidia.com/gpu.shared")]["sharing"] == "time-slicing, 10 replicas per GPU"
    assert rows[("ts1", "nvidia.com/gpu.shared")]["used"] == 1  # notebook-a


def test_nodes_shows_each_mig_profile_beside_full_gpus_and_names_a_reconfiguration(tmp_path):
    def change(name: str, node: dict) -> None:
        if name == "ts1":
            resources(node, {"nvidia.com/gpu": "4", "nvidia.com/mig-1g.10gb": "14", "nvidia.com/mig-3g.40gb": "4"})
            node["metadata"]["labels"].update({"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config.state": "rebooting"})
    doc = nodes_json(bundle(tmp_path, nodes=change))
    ts1 = {r["resource"]: r for r in doc["rows"] if r["node"] == "ts1"}
    # notebook-a still holds one nvidia.com/gpu.shared there: that row stays, overcommitted
    assert set(ts1) == {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb", "nvidia.com/gpu.shared"}
    assert "overcommitted" in ts1["nvidia.com/gpu.shared"]["states"]
    assert ts1["nvidia.com/mig-1g.10gb"]["sharing"] == "MIG profile 1g.10gb (mixed strategy)"
    assert all(r["mig_config_state"] == "rebooting" for r in ts1.values())
    import io

    from analyzer.occupancy.command import run
    table = io.StringIO()
    run(bundle(tmp_path / "again", nodes=change), out=table, err=io.StringIO())
    ts1_lines = [line for line in table.getvalue().splitlines() if line.startswith("ts1 ")]
    assert len(ts1_lines) == 4 and all("MIG config rebooting: wait for the MIG manager" in line for line in ts1_lines)


def test_nodes_and_report_list_bound_pods_that_did_not_start_under_their_node():
    doc = nodes_json(RECORDINGS / "multi-attach-v1.36")
    assert doc["not_started"] == {"g1": [{"pod": "lab/trainer-6bd8c5b5-4h9dk", "word": "volume-mount"}]}
    from conftest import run_cli
    page = run_cli("report", RECORDINGS / "unexpected-admission-error-v1.36", "-o", "markdown", "--file", "-", check=True).stdout
    assert "not started: lab/infer-ddc5f997d-9pshn: node-runtime" in page
    assert "replaced by lab/infer-ddc5f997d-xsf49 (Pending)" in page
