"""The first three lines a person reads for the funnel's words (`why NS/NAME --explain`): the word, then the
action for this pod with its objects named (rules/funnel_actions.py; causes.md's action column with its notes
resolved), then the reason. Real bundles where one holds the case (the lab, the time-slicing and DRA
recordings); otherwise the lab's real objects changed only where the case needs (conftest.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import GPU_TAINT, bound_pod, cordon, gpu_node, gpu_pod, make_bundle
from helpers import LAB, RECORDINGS, run_cli
from test_node_health import under


def _first_lines(bundle: Path, key: str) -> tuple[str, str, str]:
    done = run_cli("why", bundle, key, "--explain")
    assert done.returncode == 0, done.stderr
    word, action, reason = done.stdout.splitlines()[:3]
    assert action.startswith("  next action: ") and reason.startswith("  reason:      ")
    return word, action.removeprefix("  next action: "), reason.removeprefix("  reason:      ")


def test_selector_mismatch_names_the_pair_no_node_has_and_the_nearest_gpu_nodes():
    word, action, reason = _first_lines(LAB, "lab/selector-mismatch")
    assert word == "lab/selector-mismatch: selector-mismatch"
    assert action == ("fix the pod's nodeSelector/affinity, or label the node meant for it: no node has gpu-type=h100 "
                      "(no node carries gpu-type); nearest: gpu-alloczero, gpu-ok, gpu-tainted, lacking gpu-type=h100")
    assert reason == "no node matches nodeSelector/affinity (0 of 4)"


def test_selector_mismatch_says_which_values_the_nodes_carry_and_which_requirement_the_nearest_lack(tmp_path):
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}]}]}}}
    nodes = [gpu_node("gpu-a", labels={"gpu-type": "a100", "topology.kubernetes.io/zone": "us-east-1a"}),
             gpu_node("gpu-b", labels={"gpu-type": "h100", "topology.kubernetes.io/zone": "us-east-1b"}),
             gpu_node("gpu-c", labels={"gpu-type": "l4", "topology.kubernetes.io/zone": "us-east-1b"})]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer", node_selector={"gpu-type": "h100"}, affinity=affinity)],
                       nodes=nodes)
    _, action, _ = _first_lines(root, "lab/trainer")
    assert action == ("fix the pod's nodeSelector/affinity, or label the node meant for it: no node has gpu-type=h100 "
                      "and topology.kubernetes.io/zone in (us-east-1a) together; nearest: gpu-a, lacking only "
                      "gpu-type=h100")
    root = make_bundle(tmp_path, name="other", nodes=nodes,
                       pods=[gpu_pod("trainer", node_selector={"gpu-type": "b200"})])
    _, action, _ = _first_lines(root, "lab/trainer")
    assert "no node has gpu-type=b200 (nodes carry gpu-type=a100, gpu-type=h100, gpu-type=l4)" in action


def test_untolerated_taint_names_the_toleration_and_the_node_carrying_the_taint():
    word, action, reason = _first_lines(LAB, "lab/taint")
    assert word == "lab/taint: untolerated-taint"
    assert action == ("add the toleration {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule} "
                      "(gpu-tainted carries nvidia.com/gpu=present:NoSchedule) to the pod, or remove the taint from "
                      "the node")
    assert reason.startswith("every candidate (1) is excluded by a taint or cordon: gpu-tainted")


def test_a_taint_on_one_node_and_a_cordon_on_another_name_both_fixes(tmp_path):
    nodes = [gpu_node("gpu-a", taints=[dict(GPU_TAINT)]), cordon(gpu_node("gpu-b"))]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=nodes)
    word, action, _ = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: untolerated-taint"
    assert action.endswith("or remove the taint from the node; or uncordon gpu-b (kubectl uncordon)")
    assert "(gpu-a carries nvidia.com/gpu=present:NoSchedule)" in action


def test_cordoned_names_the_cordoned_nodes(tmp_path):
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=[cordon(gpu_node("gpu-a")), cordon(gpu_node("gpu-b"))])
    word, action, _ = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: cordoned"
    assert action == "uncordon gpu-a, gpu-b (kubectl uncordon gpu-a) if the maintenance is over, or wait for it to end"


def test_node_unhealthy_names_each_node_its_condition_and_what_repairs_it(tmp_path):
    nodes = [under(gpu_node("gpu-a"), "DiskPressure"), under(gpu_node("gpu-b"), "NotReady")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=nodes)
    word, action, _ = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: node-unhealthy"
    assert action == ("free disk space (images, logs, emptyDir) on gpu-a (DiskPressure=True since 2026-11-29T18:02:41Z); "
                      "bring the kubelet back (its runtime, network or connection to the API server) on gpu-b "
                      "(Ready=False since 2026-11-29T18:02:41Z); a toleration is not the fix")


def test_a_user_taint_a_cordon_and_a_condition_each_get_their_own_fix(tmp_path):
    nodes = [gpu_node("gpu-a", taints=[dict(GPU_TAINT)]), cordon(gpu_node("gpu-b")),
             under(gpu_node("gpu-c"), "MemoryPressure")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=nodes)
    word, action, _ = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: untolerated-taint"
    assert action == ("add the toleration {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule} "
                      "(gpu-a carries nvidia.com/gpu=present:NoSchedule) to the pod, or remove the taint from the node; "
                      "or uncordon gpu-b (kubectl uncordon); or free memory on gpu-c (MemoryPressure=True since "
                      "2026-11-29T18:02:41Z)")


def test_allocatable_zero_names_the_node_and_the_resource():
    word, action, reason = _first_lines(LAB, "lab/allocatable-zero")
    assert word == "lab/allocatable-zero: allocatable-zero"
    assert action == ("repair the node's GPU stack (driver, validation; its device plugin reports no healthy device): "
                      "gpu-alloczero: nvidia.com/gpu allocatable 0 of capacity 4")
    assert reason.startswith("every candidate (1) reports allocatable 0")


def test_no_gpu_node_names_the_resource_and_the_gpu_labelled_node_without_it():
    word, action, _ = _first_lines(LAB, "lab/no-gpu-node")
    assert word == "lab/no-gpu-node: no-gpu-node"
    assert action == ("restore the device plugin that advertises nvidia.com/gpu on gpu-noplugin: labelled as a GPU "
                      "node, it advertises no nvidia.com/gpu, and no candidate does")


def test_no_gpu_node_for_a_claim_names_the_missing_slice():
    word, action, _ = _first_lines(RECORDINGS / "dra-no-slice-v1.36", "lab/no-slice")
    assert word == "lab/no-slice: no-gpu-node"
    assert action == ("restore the DRA driver that publishes the devices: dn1: no ResourceSlice offers a device for "
                      "ResourceClaim lab/no-slice-gpu-qm44j request 'gpu' (class gpu.example.com)")


def test_resource_name_mismatch_names_the_resource_the_nodes_advertise():
    word, action, _ = _first_lines(RECORDINGS / "timeslicing-renamed-v1.36", "lab/train")
    assert word == "lab/train: resource-name-mismatch"
    assert action == ("ask for nvidia.com/gpu.shared instead of nvidia.com/gpu (advertised by ts1: 80, ts2: 80); or "
                      "change the device plugin's sharing configuration (renameByDefault)")


def test_a_daemonset_pod_whose_node_is_gone_names_the_node_its_affinity_asks_for(tmp_path):
    """The DaemonSet controller pins each pod with required node affinity on metadata.name (matchFields)."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-gone"]}]}]}}}
    root = make_bundle(tmp_path, pods=[gpu_pod("agent", affinity=affinity)], nodes=[gpu_node("gpu-a"), gpu_node("gpu-b")])
    word, action, _ = _first_lines(root, "lab/agent")
    assert word == "lab/agent: selector-mismatch"
    # no "nearest" node: another node is no lead for a pod pinned by name; the node's absence is the fact
    assert action == ("node gpu-gone, the only one its required node affinity names (matchFields metadata.name), is "
                      "not in the bundle: if it is gone, delete the pod (a DaemonSet removes its own) or name another "
                      "node; if not, collect the bundle again")


def test_no_gpu_node_among_cpu_nodes_only_asks_for_a_gpu_node_not_a_device_plugin(tmp_path):
    """A node with no GPU capacity and no GPU label is a CPU node (model/gpu_labels.cpu_node)."""
    cpu = gpu_node("cpu-a", base="gpu-noplugin")
    cpu["metadata"]["labels"] = {k: v for k, v in cpu["metadata"]["labels"].items() if not k.startswith("nvidia.com/")}
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=[cpu])
    word, action, _ = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: no-gpu-node"
    assert action == ("add a node that has the GPU (or a node group that makes one): no candidate advertises "
                      "nvidia.com/gpu and none is labelled as a GPU node")


def _daemonset_pod(name: str, node: str, **amounts) -> dict:
    """A pod as the DaemonSet controller makes it: owned by the DaemonSet, pinned by required node affinity on
    metadata.name (kubernetes pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    pod = gpu_pod(name, affinity=affinity, **amounts)
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "node-agent",
                                           "uid": "5b1c0c1e-0000-4000-8000-00000000d5e7", "controller": True}]
    return pod


def test_a_daemonset_pod_short_on_its_node_is_told_to_free_that_node_or_preempt_not_to_add_nodes(tmp_path):
    # Its node is full (four GPUs held); gpu-b has GPUs free but is not its node: waiting for "one node" or adding
    # capacity cannot help it. kube-scheduler places DaemonSet pods, so a higher priority class makes room.
    holders = [bound_pod(f"holder-{i}", "gpu-a") for i in range(4)]
    root = make_bundle(tmp_path, pods=[*holders, _daemonset_pod("agent", "gpu-a")],
                       nodes=[gpu_node("gpu-a", gpus="4"), gpu_node("gpu-b", gpus="4")])
    word, action, reason = _first_lines(root, "lab/agent")
    assert word == "lab/agent: exhausted"
    assert action == ("free 1 nvidia.com/gpu on gpu-a, the only node its required node affinity (matchFields "
                      "metadata.name) allows (the pods holding it are listed there), or give DaemonSet lab/node-agent a "
                      "priority class above theirs so the scheduler preempts for it; another node cannot help this pod")
    assert reason == "no candidate (1) has room: gpu-a: nvidia.com/gpu: 0 free of 4 allocatable, 1 requested"


def test_a_daemonset_pod_too_large_for_its_node_is_told_to_shrink_the_daemonsets_request(tmp_path):
    root = make_bundle(tmp_path, pods=[_daemonset_pod("agent", "gpu-a", memory="4Ti")],
                       nodes=[gpu_node("gpu-a"), gpu_node("gpu-b", memory="8Ti")])
    _, action, _ = _first_lines(root, "lab/agent")
    assert action == ("shrink the memory request in DaemonSet lab/node-agent to fit gpu-a: its required node affinity "
                      "(matchFields metadata.name) allows only that node, which has 128Gi allocatable even empty, and "
                      "the pod asks 4Ti")


def test_explain_names_the_nodes_a_daemonset_pods_affinity_leaves_out_on_one_line(tmp_path):
    root = make_bundle(tmp_path, pods=[_daemonset_pod("agent", "gpu-a", memory="4Ti")],
                       nodes=[gpu_node(f"gpu-{c}") for c in "abcdef"])
    out = run_cli("why", root, "lab/agent", "--explain", check=True).stdout
    selector = [line.strip() for line in out.split("  selector ")[1].split("\n  advertised")[0].splitlines()]
    assert selector == ["6 -> 1", "removed gpu-b, gpu-c, gpu-d (+2 more): required node affinity names only gpu-a "
                                  "(matchFields metadata.name)"]
    # the candidate's amounts as a table: one header, one line per resource
    table = out.split("Candidates at the fit stage")[1].splitlines()[2:7]
    assert [line.split()[0] for line in table] == ["allocatable", "nvidia.com/gpu", "cpu", "memory", "pods"]
    assert table[0].split() == ["allocatable", "used", "free", "requested"]
    assert table[3].split() == ["memory", "128Gi", "0", "128Gi", "4Ti", "SHORT"]
    ends = [len(line.removesuffix("  SHORT")) for line in table]  # the requested column, right-aligned
    assert len(set(ends)) == 1
    # no node "one change away": moving a DaemonSet's pod to another node is no change a person can make
    nearest = out.split("Nearest nodes")[1].split("\n\n")[0]
    assert "it may run only on gpu-a (its required node affinity names that node alone)" in " ".join(nearest.split())
    assert "gpu-b" not in nearest


def test_fits_now_names_the_nodes_and_when_the_scheduler_tries_again(tmp_path):
    # kube-scheduler's queue flushes unschedulable pods after podMaxInUnschedulablePodsDuration (5 minutes,
    # pkg/scheduler/internal/queue DefaultPodMaxInUnschedulablePodsDuration), sooner when the cluster changes.
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer")], nodes=[gpu_node("gpu-a"), gpu_node("gpu-b")])
    word, action, reason = _first_lines(root, "lab/trainer")
    assert word == "lab/trainer: fits-now"
    assert action == ("wait for the scheduler's next try (within 5 minutes): by the bundle it fits on gpu-a, gpu-b; if "
                      "it stays Pending, the scheduler sees what the bundle does not: compare its message with this "
                      "evidence")
    assert reason == "fits now on gpu-a, gpu-b"
