"""`numa-unaligned` and failed starts (causes.md: targets; node-start.md), from the real recordings
unexpected-admission-error-v1.36 (a pod the kubelet rejected, and its replacement) and multi-attach-v1.36 (a bound
trainer), changed only where a case needs, in the kubelet's own texts:
- pkg/kubelet/cm/topologymanager/topology_manager.go: reason `TopologyAffinityError`, error
  "Resources cannot be allocated with Topology locality"; kubelet.rejectPod prefixes "Pod was rejected: ";
- pkg/kubelet/kuberuntime: a container the runtime could not start ends `terminated` with reason StartError
  (exit 128); with restartPolicy Never the pod ends Failed.
"""

from __future__ import annotations

from pathlib import Path

from test_node_start import NVIDIA_CLI, REJECTED, REPLACEMENT, TRAINER, _copy, _item, _read, _write, one, trainer_bundle

from analyzer import words as w

TOPOLOGY = "Resources cannot be allocated with Topology locality"
# nvidia-container-toolkit with CDI: a device name the CDI cache does not know (NVIDIA/nvidia-container-toolkit#1116)
CDI = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply required "
       "modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI "
       "devices nvidia.com/gpu=GPU-2f6a1d0e-7d1e-4c1c-9a43-7f2a3f0e5b11: unknown")


def _numa_rejected(tmp_path: Path, labels: dict[str, str] | None = None) -> Path:
    root = _copy(tmp_path, "unexpected-admission-error-v1.36")
    pods = _read(root, "pods")
    _item(pods, REJECTED.split("/")[1])["status"].update(reason="TopologyAffinityError",
                                                         message="Pod was rejected: " + TOPOLOGY)
    _write(root, "pods", pods)
    events = _read(root, "events")
    for e in events["items"]:
        if e["reason"] == "UnexpectedAdmissionError":
            e["reason"], e["message"] = "TopologyAffinityError", TOPOLOGY
    _write(root, "events", events)
    if labels:
        nodes = _read(root, "nodes")
        _item(nodes, "g1")["metadata"]["labels"].update(labels)
        _write(root, "nodes", nodes)
    return root


def test_topology_affinity_error_is_numa_unaligned_with_the_kubelets_words(tmp_path):
    v = one(_numa_rejected(tmp_path), REJECTED)
    assert v.word == w.NUMA_UNALIGNED
    assert f'TopologyAffinityError: "Pod was rejected: {TOPOLOGY}"' in v.reason
    assert "g1" in v.reason and "1 nvidia.com/gpu" in v.reason
    assert v.evidence["numa"]["node"] == "g1" and v.evidence["numa"]["asked"] == {"nvidia.com/gpu": "1"}
    assert v.evidence["replaced_by"]["pod"] == REPLACEMENT


def test_the_replacement_of_a_numa_rejected_pod_is_judged_on_its_own(tmp_path):
    found = one(_numa_rejected(tmp_path), REPLACEMENT)
    assert found.word == w.EXHAUSTED


def test_numa_labels_are_named_where_the_node_has_them(tmp_path):
    v = one(_numa_rejected(tmp_path, {"feature.node.kubernetes.io/memory-numa": "true"}), REJECTED)
    assert "feature.node.kubernetes.io/memory-numa=true" in v.reason


def _failed_start(tmp_path: Path, *, message: str, restart: str = "Never", ran: bool = False) -> Path:
    term = {"terminated": {"exitCode": 128, "reason": "StartError", "message": message,
                           "startedAt": "1970-01-01T00:00:00Z", "finishedAt": "2026-12-01T23:21:40Z",
                           "containerID": "containerd://5f1c0e0d2a8f"}}
    if ran:
        term["terminated"].update(exitCode=1, reason="Error", startedAt="2026-12-01T23:20:00Z")
    root = trainer_bundle(tmp_path, state=term, phase="Failed",
                          events=[("Failed", "Error: " + message, "2026-12-01T23:21:40Z", 1)])
    pods = _read(root, "pods")
    _item(pods, TRAINER.split("/")[1])["spec"]["restartPolicy"] = restart
    _write(root, "pods", pods)
    return root


def test_a_pod_that_ended_failed_because_no_container_could_start_is_node_runtime(tmp_path):
    v = one(_failed_start(tmp_path, message=NVIDIA_CLI))
    assert v.word == w.NODE_RUNTIME
    assert "StartError" in v.reason and "libnvidia-ml.so.1" in v.reason and "restartPolicy Never" in v.reason


def test_unresolvable_cdi_devices_is_node_runtime_quoted(tmp_path):
    v = one(_failed_start(tmp_path, message=CDI))
    assert v.word == w.NODE_RUNTIME and "unresolvable CDI devices nvidia.com/gpu=GPU-2f6a1d0e" in v.reason


def test_a_pod_that_ran_and_then_failed_is_not_a_target(tmp_path):
    from conftest import analyse_dir

    assert TRAINER not in analyse_dir(_failed_start(tmp_path, message="exit 1", ran=True))
