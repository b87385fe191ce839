"""`node-unhealthy` at the taint stage (causes.md; node-start.md): every remaining candidate excluded only by condition
taints the pod does not tolerate. The nodes are the lab's real Node objects with the conditions and taints the kubelet
(pkg/kubelet/nodestatus/setters.go: MemoryPressure "KubeletHasInsufficientMemory", "kubelet has insufficient memory
available") and the node lifecycle controller (pkg/controller/nodelifecycle: Ready Unknown "NodeStatusUnknown",
"Kubelet stopped posting node status.", taint node.kubernetes.io/unreachable) set; the taint keys are
k8s.io/api/core/v1 well_known_taints.go."""

from __future__ import annotations

import pytest

from conftest import GPU_TAINT, gpu_node, gpu_pod, make_bundle, stage_of, verdict

SINCE = "2026-11-29T18:02:41Z"


def under(node: dict, condition: str, *, since: str | None = SINCE) -> dict:
    """The node as the kubelet and the node lifecycle controller leave it for one condition."""
    kinds = {
        "MemoryPressure": ("True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
                           [("node.kubernetes.io/memory-pressure", "NoSchedule")]),
        "DiskPressure": ("True", "KubeletHasDiskPressure", "kubelet has disk pressure",
                         [("node.kubernetes.io/disk-pressure", "NoSchedule")]),
        "NotReady": ("False", "KubeletNotReady", "container runtime network not ready: NetworkReady=false "
                     "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                     [("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute")]),
        "Unreachable": ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.",
                        [("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")]),
    }
    status, reason, message, taints = kinds[condition]
    kind = "Ready" if condition in ("NotReady", "Unreachable") else condition
    for c in node["status"]["conditions"]:
        if c["type"] == kind:
            c.update(status=status, reason=reason, message=message)
            if since is None:
                c.pop("lastTransitionTime", None)
            else:
                c["lastTransitionTime"] = since
    spec = node.setdefault("spec", {})
    spec["taints"] = (spec.get("taints") or []) + [
        {"key": k, "effect": e, **({"timeAdded": since} if e == "NoExecute" and since else {})} for k, e in taints]
    return node


@pytest.mark.parametrize("condition, words_in_reason", [
    ("MemoryPressure", ("memory-pressure", "MemoryPressure=True", "KubeletHasInsufficientMemory", SINCE)),
    ("DiskPressure", ("disk-pressure", "DiskPressure=True", "kubelet has disk pressure")),
    ("NotReady", ("not-ready", "Ready=False", "cni plugin not initialized")),
    ("Unreachable", ("unreachable", "Ready=Unknown", "Kubelet stopped posting node status.")),
])
def test_every_candidate_under_a_condition_is_node_unhealthy_naming_it(tmp_path, condition, words_in_reason):
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[under(gpu_node("gpu-a"), condition)])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "node-unhealthy"
    assert "gpu-a" in v.reason and "a toleration is not the fix" in v.reason
    for word in words_in_reason:
        assert word in v.reason
    assert v.evidence["unhealthy_nodes"][0]["node"] == "gpu-a"


def test_a_user_taint_beside_a_condition_taint_on_another_node_is_untolerated_taint(tmp_path):
    # Counter-case: adding a toleration is still the fix for gpu-b, so row untolerated-taint holds.
    nodes = [under(gpu_node("gpu-a"), "MemoryPressure"), gpu_node("gpu-b", taints=[dict(GPU_TAINT)])]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "untolerated-taint"
    removed = stage_of(v, "taints")[3]
    assert "memory-pressure" in removed["gpu-a"] and "nvidia.com/gpu" in removed["gpu-b"]


def test_a_user_taint_and_a_condition_taint_on_one_node_is_untolerated_taint(tmp_path):
    node = under(gpu_node("gpu-a", taints=[dict(GPU_TAINT)]), "DiskPressure")
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    assert verdict(root, "lab/trainer-0").word == "untolerated-taint"


def test_a_healthy_node_elsewhere_leaves_the_later_stages_to_decide(tmp_path):
    nodes = [under(gpu_node("gpu-a"), "NotReady"), gpu_node("gpu-b")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "fits-now"
    assert "gpu-a" in stage_of(v, "taints")[3]


def test_a_condition_with_no_transition_time_is_still_an_answer(tmp_path):
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")],
                       nodes=[under(gpu_node("gpu-a"), "MemoryPressure", since=None)])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "node-unhealthy"
    assert "no lastTransitionTime" in v.reason


def test_a_condition_of_the_wrong_type_is_an_answer_not_a_traceback(tmp_path):
    node = under(gpu_node("gpu-a"), "MemoryPressure")
    node["status"]["conditions"] = [{"type": "MemoryPressure", "status": True, "reason": 7}, "junk", None]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "node-unhealthy"
    assert "memory-pressure" in v.reason


def test_the_taint_outliving_its_condition_says_so(tmp_path):
    node = under(gpu_node("gpu-a"), "MemoryPressure")
    for c in node["status"]["conditions"]:
        if c["type"] == "MemoryPressure":
            c["status"] = "False"
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "node-unhealthy" and "is not adverse" in v.reason


def test_nearest_nodes_and_why_explain_name_the_condition(tmp_path):
    nodes = [under(gpu_node("gpu-a"), "MemoryPressure"), under(gpu_node("gpu-b"), "Unreachable")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    near = {n["node"]: n["reason"] for n in v.evidence["nearest"]}
    assert "MemoryPressure=True" in near["gpu-a"] and "Ready=Unknown" in near["gpu-b"]
    from helpers import run_cli

    out = run_cli("why", root, "lab/trainer-0", "--explain", check=True).stdout
    assert "node-unhealthy" in out and "Node gpu-b is unhealthy" in out and "{" not in out.split("\n")[2]


def test_nodes_command_says_which_nodes_are_unhealthy_and_why(tmp_path):
    nodes = [under(gpu_node("gpu-a"), "DiskPressure"), gpu_node("gpu-b")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    import json

    from helpers import run_cli

    rows = {r["node"]: r for r in json.loads(run_cli("nodes", root, "-o", "json", check=True).stdout)["rows"]}
    assert "unhealthy" in rows["gpu-a"]["states"] and "unhealthy" not in rows["gpu-b"]["states"]
    assert any("DiskPressure=True" in c for c in rows["gpu-a"]["conditions"])


def test_a_hostile_condition_message_is_clipped_in_the_reason_and_kept_whole_in_the_evidence(tmp_path):
    node = under(gpu_node("gpu-a"), "DiskPressure")
    for c in node["status"]["conditions"]:
        if c["type"] == "DiskPressure":
            c["message"] = "x" * 100_000
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "node-unhealthy" and len(v.reason) < 2_000
    assert v.evidence["unhealthy_nodes"][0]["conditions"][0]["message"] == "x" * 100_000
