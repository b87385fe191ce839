"""What a pod asks for and what a node has left (causes.md "Definitions"): used = non-terminated pods
bound there; effective requests with init containers, sidecars and overhead; limits-only extended
resources; the exhausted evidence; fragmentation; non-GPU pods; GPU intent (`no-gpu-request`)."""

from __future__ import annotations

import pytest

from conftest import (GPU_TAINT, analyse_dir, bound_pod, container, gpu_node, gpu_pod, lab_node, make_bundle,
                      plain_pod, runtimeclass, set_resources, verdict, words_of)


def _gpu_ok_with(*pods, pending=None, nodes=None):
    """(pods, nodes) for the lab's gpu-ok node with the given bound pods and one pending pod."""
    return [pending or gpu_pod("trainer-0")] + list(pods), nodes or [lab_node("gpu-ok")]


# -- used on a node: non-terminated pods only -------------------------------------------------------

@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminated_pods_hold_nothing(tmp_path, phase):
    # causes.md "Used on a node": pods whose phase is Succeeded or Failed hold nothing (observed.md:
    # they keep spec.nodeName; the scheduler ignores what they requested). 4 GPUs "held" by a
    # terminated pod: the node would look full to anyone who counts it.
    pods, nodes = _gpu_ok_with(bound_pod("done", "gpu-ok", gpus=4, phase=phase))
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "fits-now"
    assert v.evidence["fits_on"] == ["gpu-ok"]


def test_running_pod_holds_its_request(tmp_path):
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=4))
    assert verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0").word == "exhausted"


def test_bound_pending_pod_holds_its_request(tmp_path):
    # A Pending pod with spec.nodeName (the lab's filler-b) is not terminated: it counts.
    pods, nodes = _gpu_ok_with(bound_pod("starting", "gpu-ok", gpus=4, phase="Pending"))
    vs = analyse_dir(make_bundle(tmp_path, pods=pods, nodes=nodes))
    assert vs["lab/trainer-0"].word == "exhausted"
    assert vs["lab/starting"].word == "node-side"
    [row] = vs["lab/trainer-0"].fit.rows
    assert [u["pod"] for u in row["used_by"]] == ["lab/starting"]
    assert row["used_by"][0]["phase"] == "Pending"


def test_terminated_and_running_mixed_count_only_the_running(tmp_path):
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=3), bound_pod("done", "gpu-ok", gpus=4, phase="Succeeded"),
                               bound_pod("crashed", "gpu-ok", gpus=4, phase="Failed"),
                               pending=gpu_pod("trainer-0", gpus=2))
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    [row] = v.fit.rows
    assert row["resources"]["nvidia.com/gpu"] == {"allocatable": "4", "used": "3", "free": "1", "requested": "2"}
    assert [u["pod"] for u in row["used_by"]] == ["lab/busy"]


# -- effective requests (resourcehelper.PodRequests) -------------------------------------------------

def _with_init(pod, *inits):
    pod["spec"]["initContainers"] = list(inits)
    return pod


def _gpu(n):
    return {"nvidia.com/gpu": str(n)}


@pytest.mark.parametrize("free, word", [(2, "exhausted"), (3, "fits-now")])
def test_init_container_request_is_max_of_init_and_sum(tmp_path, free, word):
    # Effective request = max(sum of app containers, each init container): init 3 GPUs, app 1 -> 3.
    pod = _with_init(gpu_pod("trainer-0", gpus=1), container("gpu-check", requests=_gpu(3), limits=_gpu(3)))
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=4 - free), pending=pod)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == word
    assert v.evidence["requests"]["nvidia.com/gpu"] == "3"


def test_app_containers_are_summed(tmp_path):
    pod = gpu_pod("trainer-0", gpus=1)
    pod["spec"]["containers"].append(container("worker", requests=_gpu(2), limits=_gpu(2)))
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=2), pending=pod)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.evidence["requests"]["nvidia.com/gpu"] == "3"


def test_restartable_sidecar_adds_to_the_sum(tmp_path):
    # A sidecar (init container with restartPolicy: Always) runs beside the app: 1 + 1 = 2.
    pod = _with_init(gpu_pod("trainer-0", gpus=1),
                     container("profiler", requests=_gpu(1), limits=_gpu(1), restart_policy="Always"))
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=3), pending=pod)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.evidence["requests"]["nvidia.com/gpu"] == "2"
    assert v.fit.rows[0]["resources"]["nvidia.com/gpu"]["requested"] == "2"


@pytest.mark.parametrize("order, expected", [
    (("sidecar", "init"), "3"),  # the sidecar already runs while the init container does: 1 + 2
    (("init", "sidecar"), "2"),  # the init container ran alone before the sidecar started: max(2, 1 + 1)
])
def test_sidecar_adds_to_later_init_containers_only(tmp_path, order, expected):
    parts = {"sidecar": container("profiler", requests=_gpu(1), limits=_gpu(1), restart_policy="Always"),
             "init": container("warmup", requests=_gpu(2), limits=_gpu(2))}
    pod = _with_init(gpu_pod("trainer-0", gpus=1), *(parts[o] for o in order))
    pods, nodes = _gpu_ok_with(pending=pod)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.evidence["requests"]["nvidia.com/gpu"] == expected


def test_overhead_is_added(tmp_path):
    # spec.overhead (set by the RuntimeClass admission plugin) is added to the effective request.
    node = gpu_node("gpu-small", cpu="1")
    ok = gpu_pod("fits", cpu="500m", overhead={"cpu": "500m", "memory": "64Mi"})
    over = gpu_pod("over", cpu="500m", overhead={"cpu": "501m", "memory": "64Mi"})
    vs = analyse_dir(make_bundle(tmp_path, pods=[ok, over], nodes=[node]))
    assert vs["lab/fits"].word == "fits-now"
    assert vs["lab/fits"].evidence["requests"]["cpu"] == "1"
    assert vs["lab/over"].word == "exhausted"
    assert vs["lab/over"].fit.rows[0]["short"] == ["cpu"]
    assert vs["lab/over"].fit.rows[0]["resources"]["cpu"]["requested"] == "1001m"


def test_extended_resource_only_in_limits_counts(tmp_path):
    # causes.md: a container's request for an extended resource is its limit when requests is absent
    # (manifests/41 asks `limits: nvidia.com/gpu: "2"` and nothing else for the GPU).
    pod = gpu_pod("trainer-0", gpus=None)
    pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "2"}
    pods, nodes = _gpu_ok_with(bound_pod("busy", "gpu-ok", gpus=3), pending=pod)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.evidence["accelerator_requests"] == {"nvidia.com/gpu": 2}
    assert v.fit.rows[0]["resources"]["nvidia.com/gpu"]["requested"] == "2"


def test_bound_pod_with_limits_only_counts_as_used(tmp_path):
    busy = bound_pod("busy", "gpu-ok", gpus=None)
    busy["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "4"}
    pods, nodes = _gpu_ok_with(busy)
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.fit.rows[0]["resources"]["nvidia.com/gpu"]["used"] == "4"


# -- exhausted evidence, fragmentation, resource order -------------------------------------------------

def test_exhausted_evidence_per_candidate(tmp_path):
    # causes.md Evidence: for exhausted, each candidate's allocatable, used (and by which pods), free, requested.
    nodes = [gpu_node("gpu-a"), gpu_node("gpu-b")]
    pods = [gpu_pod("trainer-0", gpus=2), bound_pod("a1", "gpu-a", gpus=3), bound_pod("b1", "gpu-b", gpus=2),
            bound_pod("b2", "gpu-b", gpus=1), bound_pod("b-done", "gpu-b", gpus=4, phase="Succeeded")]
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    rows = {r["node"]: r for r in v.fit.rows}
    assert set(rows) == {"gpu-a", "gpu-b"}
    assert rows["gpu-a"]["resources"]["nvidia.com/gpu"] == {"allocatable": "4", "used": "3", "free": "1", "requested": "2"}
    assert rows["gpu-b"]["resources"]["nvidia.com/gpu"] == {"allocatable": "4", "used": "3", "free": "1", "requested": "2"}
    assert sorted(u["pod"] for u in rows["gpu-b"]["used_by"]) == ["lab/b1", "lab/b2"]
    assert rows["gpu-a"]["resources"]["cpu"] == {"allocatable": "32", "used": "500m", "free": "31500m", "requested": "500m"}
    assert rows["gpu-a"]["short"] == ["nvidia.com/gpu"]
    assert v.to_dict()["fit"] == v.fit.rows


def test_fragmented_when_the_sum_would_cover_but_no_node_does(tmp_path):
    # observed.md: 2 GPUs requested with 1 free on each of two nodes -> `2 Insufficient nvidia.com/gpu`.
    nodes = [gpu_node("gpu-a"), gpu_node("gpu-b")]
    pods = [gpu_pod("trainer-0", gpus=2), bound_pod("a1", "gpu-a", gpus=3), bound_pod("b1", "gpu-b", gpus=3)]
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.fit.fragmented is True
    assert v.to_dict()["fragmented"] is True


def test_not_fragmented_when_the_sum_is_short_too(tmp_path):
    nodes = [gpu_node("gpu-a"), gpu_node("gpu-b")]
    pods = [gpu_pod("trainer-0", gpus=2), bound_pod("a1", "gpu-a", gpus=3), bound_pod("b1", "gpu-b", gpus=4)]
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=nodes), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.fit.fragmented is False


def test_accelerators_reported_first_when_several_are_short(tmp_path):
    # causes.md `exhausted`: accelerators first, then cpu, memory, pods, ephemeral-storage.
    node = gpu_node("gpu-a", cpu="2", memory="4Gi")
    pods = [gpu_pod("trainer-0", gpus=1, cpu="2", memory="4Gi"),
            bound_pod("busy", "gpu-a", gpus=4, cpu="1", memory="1Gi")]
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=[node]), "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.fit.rows[0]["short"] == ["nvidia.com/gpu", "cpu", "memory"]
    assert v.reason.split(": ", 2)[2].startswith("nvidia.com/gpu")
    assert list(v.fit.rows[0]["resources"])[0] == "nvidia.com/gpu"


@pytest.mark.parametrize("case, short", [
    ("cpu", "cpu"), ("memory", "memory"), ("pods", "pods"),
])
def test_exhausted_on_native_resources_for_a_pod_without_gpu_intent(tmp_path, case, short):
    # An ordinary pod (no intent, no accelerator): `no-gpu-request` skips it, the funnel checks cpu, memory, pods.
    node = gpu_node("worker-1", base="gpu-noplugin", pods="2" if case == "pods" else None)
    pending = {"cpu": plain_pod("web-0", cpu="40"), "memory": plain_pod("web-0", memory="200Gi"),
               "pods": plain_pod("web-0")}[case]
    pods = [pending, bound_pod("a", "worker-1", gpus=None), bound_pod("b", "worker-1", gpus=None)]
    v = verdict(make_bundle(tmp_path, pods=pods, nodes=[node]), "lab/web-0")
    assert v.word == "exhausted"
    assert "gpu_intent" not in v.evidence
    assert v.fit.rows[0]["short"] == [short]


def test_pod_without_gpu_intent_or_request_fits_on_a_plain_node(tmp_path):
    root = make_bundle(tmp_path, pods=[plain_pod("web-0")], nodes=[gpu_node("worker-1", base="gpu-noplugin")])
    assert verdict(root, "lab/web-0").word == "fits-now"


def test_other_extended_resource_goes_through_the_same_stages(tmp_path):
    # causes.md: any other extended resource (domain-prefixed, outside kubernetes.io) goes through `no-gpu-node`,
    # `allocatable-zero` and `exhausted`;
    # observed.md: `Insufficient rdma/hca_shared_devices_a`.
    rdma = "rdma/hca_shared_devices_a"
    pod = gpu_pod("trainer-0", gpus=1)
    pod["spec"]["containers"][0]["resources"]["requests"][rdma] = "1"
    pod["spec"]["containers"][0]["resources"]["limits"][rdma] = "1"
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a")])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "no-gpu-node"
    assert rdma in v.funnel[-1]["removed"][0]["reason"]


# -- GPU intent (`no-gpu-request`): each signal alone ---------------------------------------------------

INTENT = {
    "runtimeclass-handler": dict(runtimeClassName="gpu"),  # handler nvidia (see bundle)
    "runtimeclass-name": dict(runtimeClassName="nvidia-cdi"),
    "node-selector-key": dict(nodeSelector={"nvidia.com/gpu.present": "true"}),
    "node-selector-value": dict(nodeSelector={"accelerator": "nvidia-a100"}),
    "node-affinity": dict(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}]}]}}}),
    "gpu-toleration": dict(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]),
    "env-all": "env:all",
    "env-uuid": "env:GPU-3c6a5e9c-0000-1111-2222-333344445555",
}


@pytest.mark.parametrize("case", sorted(INTENT))
def test_gpu_intent_without_accelerator_request_is_no_gpu_request(tmp_path, case):
    pod = plain_pod("cuda-job")
    signal = INTENT[case]
    if isinstance(signal, str):
        pod["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": signal[4:]}]
    else:
        for k, v in signal.items():
            if k == "tolerations":
                pod["spec"]["tolerations"] = pod["spec"]["tolerations"] + v
            else:
                pod["spec"][k] = v
    nodes = [gpu_node("gpu-a", labels={"accelerator": "nvidia-a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})]
    rcs = [runtimeclass("gpu", "nvidia"), runtimeclass("nvidia-cdi", "nvidia-cdi"), runtimeclass("standard", "runc")]
    v = verdict(make_bundle(tmp_path, pods=[pod], nodes=nodes, runtimeclasses=rcs), "lab/cuda-job")
    assert v.word == "no-gpu-request"
    assert v.evidence["gpu_intent"]
    assert v.evidence["accelerator_requests"] == {}


@pytest.mark.parametrize("value", ["void", "none", "VOID"])
def test_nvidia_visible_devices_void_or_none_is_not_intent(tmp_path, value):
    pod = plain_pod("cpu-job")
    pod["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": value}]
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a")])
    assert verdict(root, "lab/cpu-job").word == "fits-now"


def test_runtimeclass_without_nvidia_is_not_intent(tmp_path):
    pod = plain_pod("cpu-job", runtimeClassName="standard")
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a")], runtimeclasses=[runtimeclass("standard", "runc")])
    assert verdict(root, "lab/cpu-job").word == "fits-now"


def test_gpu_pod_flag_declares_intent(tmp_path):
    root = make_bundle(tmp_path, pods=[plain_pod("cpu-job")], nodes=[gpu_node("gpu-a")])
    assert verdict(root, "lab/cpu-job").word == "fits-now"
    v = verdict(root, "lab/cpu-job", gpu_pods=["lab/cpu-job"])
    assert v.word == "no-gpu-request"
    assert "--gpu-pod" in v.evidence["gpu_intent"]
    # only the named pod
    assert words_of(root, gpu_pods=["lab/other"])["lab/cpu-job"] == "fits-now"


def test_intent_with_an_accelerator_request_is_not_no_gpu_request(tmp_path):
    pod = gpu_pod("trainer-0", node_selector={"nvidia.com/gpu.present": "true"})
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a")])
    assert verdict(root, "lab/trainer-0").word == "fits-now"


def test_accelerator_request_in_an_init_container_only_is_a_request(tmp_path):
    # causes.md `no-gpu-request`: "no container (or init container) asks for an accelerator resource".
    pod = _with_init(plain_pod("cuda-job", nodeSelector={"nvidia.com/gpu.present": "true"}),
                     container("gpu-check", requests=_gpu(1), limits=_gpu(1)))
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a")])
    assert verdict(root, "lab/cuda-job").word == "fits-now"


@pytest.mark.parametrize("resource", ["nvidia.com/mig-1g.10gb", "amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi",
                                      "aws.amazon.com/neuroncore", "google.com/tpu"])
def test_default_accelerator_resources_count_as_requests(tmp_path, resource):
    pod = gpu_pod("trainer-0", gpus=None, node_selector={"nvidia.com/gpu.present": "true"})
    pod["spec"]["containers"][0]["resources"]["limits"] = {resource: "1"}
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-a", gpus="2", resource=resource)])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "fits-now"
    assert v.evidence["accelerator_requests"] == {resource: 1}


def test_resource_flag_makes_a_resource_an_accelerator(tmp_path):
    # --resource NAME adds an accelerator resource.
    fpga = "example.com/fpga"
    pod = plain_pod("fpga-job", nodeSelector={"nvidia.com/gpu.present": "true"})
    pod["spec"]["containers"][0]["resources"]["limits"] = {fpga: "1"}
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("fpga-a", gpus="2", resource=fpga)])
    # without the flag: the nvidia label is intent, and an fpga is no accelerator
    assert verdict(root, "lab/fpga-job").word == "no-gpu-request"
    v = verdict(root, "lab/fpga-job", resources=[fpga])
    assert v.word == "fits-now"
    assert v.evidence["accelerator_requests"] == {fpga: 1}


def test_resource_flag_accelerator_goes_first_in_shortages(tmp_path):
    fpga = "example.com/fpga"
    pod = plain_pod("fpga-job", cpu="2")
    pod["spec"]["containers"][0]["resources"]["limits"] = {fpga: "1"}
    busy = bound_pod("busy", "fpga-a", gpus=2, resource=fpga, cpu="1")
    node = gpu_node("fpga-a", gpus="2", resource=fpga, cpu="2")
    v = verdict(make_bundle(tmp_path, pods=[pod, busy], nodes=[node]), "lab/fpga-job", resources=[fpga])
    assert v.word == "exhausted"
    assert v.fit.rows[0]["short"] == [fpga, "cpu"]


def test_gpu_toleration_tolerates_and_signals_intent(tmp_path):
    # The lab's tainted node: a pod tolerating nvidia.com/gpu and asking a GPU fits there.
    pod = gpu_pod("trainer-0", node_selector={"pool": "tainted"})
    pod["spec"]["tolerations"].append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
    root = make_bundle(tmp_path, pods=[pod], nodes=[lab_node("gpu-tainted")])
    assert verdict(root, "lab/trainer-0").word == "fits-now"
    set_resources(pod["spec"]["containers"][0], {"cpu": "500m"})
    root2 = make_bundle(tmp_path, name="b2", pods=[pod], nodes=[lab_node("gpu-tainted")])
    assert verdict(root2, "lab/trainer-0").word == "no-gpu-request"
    assert GPU_TAINT["key"] in verdict(root2, "lab/trainer-0").evidence["gpu_intent"]
