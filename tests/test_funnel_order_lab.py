"""causes.md's funnel order, from the real lab bundle: the funnel checks what a node has before its taints.

A node that does not have the resource at all is not a candidate whose taints matter: the stages go from what is
most fixed about a node to what changes by the minute. The rebuilt scheduler message keeps the scheduler's own
order (it checks the cordon and taints first).
"""

from __future__ import annotations

from conftest import copy_lab, cordon, funnel_table, lab_items, verdict


def _without_selector(name: str):
    def edit(pods: list[dict]) -> list[dict]:
        for p in pods:
            if p["metadata"]["name"] == name:
                p["spec"].pop("nodeSelector", None)
        return pods
    return edit


def _only_nodes(*names: str, cordoned: tuple[str, ...] = ()):
    def edit(nodes: list[dict]) -> list[dict]:
        return [cordon(n) if n["metadata"]["name"] in cordoned else n for n in nodes if n["metadata"]["name"] in names]
    return edit


def test_only_gpu_node_tainted_beside_a_node_without_gpus_is_untolerated_taint(tmp_path):
    # Not no-gpu-node (as a taint stage run first would say, leaving only the plugin-less node): add the toleration.
    root = copy_lab(tmp_path, edit={"pods": _without_selector("no-gpu-node"),
                                    "nodes": _only_nodes("gpu-tainted", "gpu-noplugin")})
    v = verdict(root, "lab/no-gpu-node")
    assert v.word == "untolerated-taint"
    table = funnel_table(v)
    assert [row[0] for row in table] == ["selector", "advertised", "device-selectors", "taints"]
    assert table[1][3] == {"gpu-noplugin": "no nvidia.com/gpu in status.capacity"}
    assert "nvidia.com/gpu=present:NoSchedule" in table[3][3]["gpu-tainted"]
    # The scheduler's own order: it names the taint for the GPU node and Insufficient for the other.
    assert v.scheduler["rebuilt"] == ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                      "1 node(s) had untolerated taint(s).")


def test_cordoned_gpu_node_beside_a_node_without_gpus_is_cordoned(tmp_path):
    root = copy_lab(tmp_path, edit={"pods": _without_selector("exhausted"),
                                    "nodes": _only_nodes("gpu-ok", "gpu-noplugin", cordoned=("gpu-ok",))})
    v = verdict(root, "lab/exhausted")
    assert v.word == "cordoned"
    assert [row[0] for row in funnel_table(v)] == ["selector", "advertised", "device-selectors", "taints"]
    assert v.scheduler["rebuilt"] == ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                      "1 node(s) were unschedulable.")


def test_lab_nodes_are_real():
    # The two cases above start from the recorded nodes, unchanged but for the cordon.
    names = {n["metadata"]["name"] for n in lab_items("nodes")}
    assert {"gpu-ok", "gpu-noplugin", "gpu-tainted", "gpu-alloczero"} <= names
