"""Pods nominated to a node by preemption count as running there for the fit and host-port filters, when their
priority is at least the incoming pod's (kube-scheduler RunFilterPluginsWithNominatedPods / addGENominatedPods).

From the real lab recording (v1.36.2): node gpu-ok has 4 GPUs; lab/filler-a runs there with 3; lab/exhausted
(priority 0) is pinned there by its nodeSelector and asks 1. Here lab/filler-b, which held the fourth GPU, is
instead the preemptor: unbound, `status.nominatedNodeName: gpu-ok`, priority 1000, still waiting for its victim to
go. Nothing else changes."""

from __future__ import annotations

from conftest import copy_lab, verdict

from analyzer.report import explain

GPU = "nvidia.com/gpu"


def _nominate(priority: int = 1000, *, ports: bool = False, gpus: bool = True):
    def run(pods: list[dict]) -> list[dict]:
        for p in pods:
            if p["metadata"]["name"] != "filler-b":
                continue
            del p["spec"]["nodeName"]
            p["spec"]["priority"] = priority
            p["status"]["nominatedNodeName"] = "gpu-ok"
            p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                          "lastTransitionTime": "2026-11-29T17:17:16Z",
                                          "message": "0/4 nodes are available: 1 Insufficient nvidia.com/gpu."}]
            c = p["spec"]["containers"][0]
            if ports:
                c["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
            if not gpus:
                for kind in ("requests", "limits"):
                    c["resources"].get(kind, {}).pop(GPU, None)
        return pods
    return run


def _exhausted(priority: int | None = None, *, ports: bool = False):
    def run(pods: list[dict]) -> list[dict]:
        for p in pods:
            if p["metadata"]["name"] != "exhausted":
                continue
            if priority is not None:
                p["spec"]["priority"] = priority
            if ports:
                p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
        return pods
    return run


def _both(*fns):
    def run(pods: list[dict]) -> list[dict]:
        for fn in fns:
            pods = fn(pods)
        return pods
    return run


def test_a_higher_priority_pod_nominated_to_the_node_takes_the_free_gpu_and_is_named(tmp_path):
    v = verdict(copy_lab(tmp_path, edit={"pods": _nominate()}), "lab/exhausted")
    assert v.word == "exhausted"
    [row] = v.fit.rows
    assert row["node"] == "gpu-ok" and row["resources"][GPU]["used"] == "4" and row["resources"][GPU]["free"] == "0"
    assert row["nominated"] == ["nominated here by preemption: lab/filler-b holds 1 nvidia.com/gpu"]
    assert {"pod": "lab/filler-b", "phase": "Pending", "nominated": True, "requests": {GPU: "1"}} in row["used_by"]
    lines: list[str] = []
    explain.render(v, type("W", (), {"write": lambda self, s: lines.append(s)})())
    assert "nominated here by preemption: lab/filler-b holds 1 nvidia.com/gpu" in "".join(lines)


def test_an_equal_priority_nominated_pod_counts_too(tmp_path):
    v = verdict(copy_lab(tmp_path, edit={"pods": _both(_nominate(0), _exhausted(0))}), "lab/exhausted")
    assert v.word == "exhausted"


def test_a_lower_priority_nominated_pod_does_not_count(tmp_path):
    v = verdict(copy_lab(tmp_path, edit={"pods": _both(_nominate(), _exhausted(2000))}), "lab/exhausted")
    assert v.word == "fits-now"
    assert v.evidence["fits_on"] == ["gpu-ok"]


def test_the_nominated_pod_does_not_count_against_itself(tmp_path):
    v = verdict(copy_lab(tmp_path, edit={"pods": _nominate()}), "lab/filler-b")
    assert v.word == "fits-now"  # the GPU it was promised is free: it waits for the retry


def test_a_host_port_of_a_nominated_pod_is_held(tmp_path):
    edit = _both(_nominate(ports=True, gpus=False), _exhausted(ports=True))
    v = verdict(copy_lab(tmp_path, edit={"pods": edit}), "lab/exhausted")
    assert v.word == "exhausted"
    assert "host port 8080/TCP is held by lab/filler-b (nominated here by preemption)" in v.reason
    lower = _both(_nominate(ports=True, gpus=False), _exhausted(2000, ports=True))
    assert verdict(copy_lab(tmp_path, name="lower", edit={"pods": lower}), "lab/exhausted").word == "fits-now"
