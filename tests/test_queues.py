"""Queues (causes.md `queue-misconfigured`, `queue-quota`, `scheduling-gated`; queues.md): Kueue and Volcano, on the
recordings made with a real Kueue v0.19.2 (tests/data/recordings/quota-exhausted-now-v1.36, clusterqueue-missing-v1.36)
and copies of their objects changed only where a case needs. Kueue's rules:
pkg/scheduler/flavorassigner/flavorassigner.go, pkg/cache/scheduler/resource_node.go,
pkg/controller/core/workload_controller.go; Volcano's: pkg/scheduler/plugins/capacity/capacity.go, plugins/gang/gang.go."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import RECORDINGS

from analyzer import words as w
from analyzer.pipeline import Options, analyse

QUOTA = RECORDINGS / "quota-exhausted-now-v1.36"
MISSING_CQ = RECORDINGS / "clusterqueue-missing-v1.36"
WL = "workloads.kueue.x-k8s.io.json"
CQ = "clusterqueues.kueue.x-k8s.io.json"
LQ = "localqueues.kueue.x-k8s.io.json"
RF = "resourceflavors.kueue.x-k8s.io.json"
COHORTS = "cohorts.kueue.x-k8s.io.json"
CHECKS = "admissionchecks.kueue.x-k8s.io.json"
PENDING = "team-a/train-resnet50"


def copy(tmp_path: Path, src: Path = QUOTA) -> Path:
    dest = tmp_path / src.name
    shutil.copytree(src, dest)
    return dest


def edit(root: Path, name: str, change) -> None:
    doc = json.loads((root / name).read_text())
    change(doc["items"])
    (root / name).write_text(json.dumps(doc, indent=4))


def verdicts(root: Path) -> dict:
    a = analyse(root, Options())
    return {v.key: v for v in a.verdicts}


def pending_workload(items: list) -> dict:
    return next(i for i in items if i["metadata"]["name"].startswith("pod-train-resnet50"))


# -- the recordings -------------------------------------------------------------------------------------------

def test_quota_taken_by_admitted_workloads_is_queue_quota_though_nodes_have_free_gpus():
    v = verdicts(QUOTA)[PENDING]
    assert v.word == w.QUEUE_QUOTA
    q = v.evidence["queue"]
    assert q["clusterQueue"] == "gpu-cluster-queue" and q["localQueue"] == "team-a/team-a-queue" and not q["too_large"]
    # Kueue's own condition message, rebuilt from the objects, word for word.
    assert q["rebuilt"] == q["kueue_said"]["message"] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed")
    assert q["agrees"] is True
    gpu = next(r for r in q["flavors"][0]["resources"] if r["resource"] == "nvidia.com/gpu")
    assert (gpu["nominal"], gpu["reserved"], gpu["free"], gpu["asked"]) == ("8", "8", "0", "4")
    assert gpu["reserved_by"] == ["team-a/job-sweep-lr-1e4-bb5d7 (4)", "team-a/job-sweep-lr-3e4-b7662 (4)"]


def test_clusterqueue_that_does_not_exist_and_the_suspended_job_with_no_pods():
    got = verdicts(MISSING_CQ)
    assert got["team-a/eval-llama-8b"].word == w.QUEUE_MISCONFIGURED
    job = got["team-a/job/finetune-llama-8b"]  # a suspended Job: no pods at all, answered per owner
    assert job.word == w.QUEUE_MISCONFIGURED and job.target.owner["suspended"] is True
    for v in (got["team-a/eval-llama-8b"], job):
        assert v.reason == "ClusterQueue team-a-cq doesn't exist"
        assert v.evidence["queue"]["kueue_said"]["message"] == "ClusterQueue team-a-cq doesn't exist"
        assert v.evidence["queue"]["agrees"] is True


# -- queue-misconfigured --------------------------------------------------------------------------------------

def test_localqueue_that_does_not_exist(tmp_path):
    root = copy(tmp_path)
    edit(root, LQ, lambda items: items.clear())
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED and v.reason == "LocalQueue team-a-queue doesn't exist"


def test_stopped_clusterqueue(tmp_path):
    root = copy(tmp_path)
    edit(root, CQ, lambda items: items[0]["spec"].update(stopPolicy="Hold"))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED
    assert v.reason == "ClusterQueue gpu-cluster-queue is inactive: Can't admit new workloads: is stopped."


def test_inactive_clusterqueue_missing_resourceflavor(tmp_path):
    root = copy(tmp_path)
    edit(root, RF, lambda items: items.clear())
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED
    assert v.reason.endswith("Can't admit new workloads: references missing ResourceFlavor(s): a100.")


def test_resource_not_covered_by_the_clusterqueue(tmp_path):
    root = copy(tmp_path)

    def drop_memory(items):
        group = items[0]["spec"]["resourceGroups"][0]
        group["coveredResources"].remove("memory")
        group["flavors"][0]["resources"] = [r for r in group["flavors"][0]["resources"] if r["name"] != "memory"]
    edit(root, CQ, drop_memory)
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED
    assert v.reason == "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue"


def test_cohort_cycle_is_a_clear_finding_not_a_hang(tmp_path):
    root = copy(tmp_path)
    cohort = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort"}
    edit(root, COHORTS, lambda items: items.extend([
        {**cohort, "metadata": {"name": "a"}, "spec": {"parentName": "b"}},
        {**cohort, "metadata": {"name": "b"}, "spec": {"parentName": "a"}},
        {**cohort, "metadata": {"name": "self"}, "spec": {"parentName": "self"}}]))
    edit(root, CQ, lambda items: items[0]["spec"].update(cohortName="a"))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED and "a -> b -> a" in v.reason


# -- queue-quota: too-large, borrowing, limits ----------------------------------------------------------------

def test_more_than_the_queue_can_ever_give_is_too_large(tmp_path):
    root = copy(tmp_path)
    edit(root, WL, lambda items: pending_workload(items)["spec"]["podSets"][0].update(count=3))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_QUOTA and v.evidence["queue"]["too_large"] is True
    assert ("insufficient quota for nvidia.com/gpu in flavor a100, previously considered podsets requests (0) + "
            "current podset request (12) > maximum capacity (8)") in v.reason


def _with_cohort(root: Path, *, lending: str | None = None, borrowing: str | None = None) -> None:
    def add(items):
        cq = items[0]
        cq["spec"]["cohortName"] = "research"
        if borrowing is not None:
            gpu = next(r for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"] if r["name"] == "nvidia.com/gpu")
            gpu["borrowingLimit"] = borrowing
        spare = json.loads(json.dumps(cq))
        spare["metadata"] = {"name": "spare"}
        spare["spec"].pop("borrowingLimit", None)
        for r in spare["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            r.pop("borrowingLimit", None)
            if lending is not None and r["name"] == "nvidia.com/gpu":
                r["lendingLimit"] = lending
        spare["status"] = {}
        items.append(spare)
    edit(root, CQ, add)


def test_borrowing_from_the_cohort_lets_the_queue_admit(tmp_path):
    root = copy(tmp_path)
    _with_cohort(root)
    v = verdicts(root)[PENDING]
    # The queue would admit it by borrowing 4 of spare's 8: no queue word; the gate is what is left.
    assert v.word == w.SCHEDULING_GATED and v.evidence["queue"]["cohort"] == ["research"]


def test_lending_and_borrowing_limits_bound_what_the_cohort_gives(tmp_path):
    root = copy(tmp_path)
    _with_cohort(root, lending="2")
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_QUOTA and "insufficient unused quota for nvidia.com/gpu in flavor a100, 2 more needed" in v.reason
    root = copy(tmp_path / "b")
    _with_cohort(root, borrowing="1")
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_QUOTA and "3 more needed" in v.reason


# -- flavors ruled out by the pod's selector or tolerations ------------------------------------------------

def test_every_flavor_ruled_out_by_node_labels_is_selector_mismatch(tmp_path):
    root = copy(tmp_path)
    edit(root, WL, lambda items: pending_workload(items)["spec"]["podSets"][0]["template"]["spec"].update(
        nodeSelector={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}))
    v = verdicts(root)[PENDING]
    assert v.word == w.SELECTOR_MISMATCH and "a100" in v.reason
    assert v.evidence["queue"]["flavors"][0]["ruled_out"] == "flavor a100 doesn't match node affinity"
    # the flavor's nodeLabels named: what the selector must accept (Kueue's flavorassigner checks them)
    assert v.action.startswith("make the pod's nodeSelector/affinity accept a ResourceFlavor of ClusterQueue ")
    assert "a100 (" in v.action and "nvidia.com/gpu.product=" in v.action and v.action.endswith("; or change those "
                                                                                                 "flavors' nodeLabels")


def test_every_flavor_ruled_out_by_taints_is_untolerated_taint(tmp_path):
    root = copy(tmp_path)
    edit(root, RF, lambda items: items[0]["spec"].update(
        nodeTaints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]))
    v = verdicts(root)[PENDING]
    assert v.word == w.UNTOLERATED_TAINT and "a100: dedicated=training:NoSchedule" in v.reason
    assert v.evidence["queue"]["rebuilt"].endswith("untolerated taint dedicated=training:NoSchedule in flavor a100")
    assert v.action == ("add the toleration {key: dedicated, operator: Equal, value: training, effect: NoSchedule} to "
                        "the pod (ResourceFlavor a100 carries it as a nodeTaint), or remove the nodeTaint from the flavor")


# -- admitted workloads, admission checks, no Kueue files ------------------------------------------------------

def test_admitted_job_whose_pod_waits_for_gpus_is_exhausted(tmp_path):
    root = copy(tmp_path)

    def pending_pod(items):
        # One more pod of the admitted Job sweep-lr-1e4 (no gate: Kueue ungated it), asking 8 GPUs; each DGX
        # node has 4 of 8 taken by the two sweeps.
        pod = json.loads(json.dumps(next(p for p in items if p["metadata"]["name"] == "sweep-lr-1e4-58l7v")))
        pod["metadata"].update(name="sweep-lr-1e4-x2k9p", uid="7d1c2a9e-0000-4000-8000-000000000001")
        pod["spec"].pop("nodeName")
        pod["status"] = {"phase": "Pending"}
        for c in pod["spec"]["containers"]:
            c["resources"] = {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}
        items.append(pod)
    edit(root, "pods.json", pending_pod)
    v = verdicts(root)["team-a/sweep-lr-1e4-x2k9p"]
    assert v.word == w.EXHAUSTED and "queue" not in v.evidence


def test_admission_checks_pending_is_scheduling_gated(tmp_path):
    root = copy(tmp_path)

    def reserve(items):
        wl = pending_workload(items)
        wl["status"]["conditions"] = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                                       "message": "Quota reserved in ClusterQueue gpu-cluster-queue"}]
        wl["status"]["admission"] = {"clusterQueue": "gpu-cluster-queue", "podSetAssignments": []}
        wl["status"]["admissionChecks"] = [{"name": "dws-prov", "state": "Pending", "message": "waiting for capacity"}]
    edit(root, WL, reserve)
    edit(root, CHECKS, lambda items: items.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
                                                    "metadata": {"name": "dws-prov"},
                                                    "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"}}))
    edit(root, CQ, lambda items: items[0]["spec"].update(admissionChecks=["dws-prov"]))
    v = verdicts(root)[PENDING]
    assert v.word == w.SCHEDULING_GATED and "dws-prov (Pending)" in v.reason
    # the check's controller (its spec.controllerName) is where to look; Kueue ungates once every check is Ready
    assert v.action == (f"look at kueue.x-k8s.io/provisioning-request, the controller of AdmissionCheck dws-prov: it "
                        f"has not set the check Ready for Workload {v.evidence['queue']['workload']} (Pending: "
                        f"\"waiting for capacity\"); Kueue removes the gate once every check is Ready")


def test_kueue_gate_in_a_bundle_without_kueue_files_names_them(tmp_path):
    root = copy(tmp_path)
    for f in root.glob("*.kueue.x-k8s.io.json"):
        f.unlink()
    v = verdicts(root)[PENDING]
    assert v.word == w.SCHEDULING_GATED
    assert "workloads.kueue.x-k8s.io.json" in v.evidence["missing"] and "kueue.x-k8s.io/admission" in v.reason
    # Not "look at the controller that owns the gate": the controller is named, what is missing is its objects.
    assert v.action.startswith("collect workloads.kueue.x-k8s.io, localqueues.kueue.x-k8s.io, ")
    assert v.action.endswith("and run again; meanwhile `kubectl get workloads.kueue.x-k8s.io -n team-a` shows why "
                             "Kueue holds it")


# -- Volcano ----------------------------------------------------------------------------------------------------

def _volcano(root: Path, *, members: int, min_member: int, phase: str, capability: str, state: str = "Open",
             running: int = 0) -> None:
    """The recording's pending pod made a Volcano gang member (Kueue's gate and labels removed); `running`: that
    many of the two Running sweep pods (4 GPUs each, one per DGX node) are members already placed."""
    def pods(items):
        for p in items:
            if p["metadata"]["name"] in ("sweep-lr-1e4-58l7v", "sweep-lr-3e4-9mshm")[:running]:
                p["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "pg-train"}
        base = next(p for p in items if p["metadata"]["name"] == "train-resnet50")
        items.remove(base)
        for i in range(members):
            pod = json.loads(json.dumps(base))
            pod["metadata"].update(name=f"gang-{i}", uid=f"5b0e6a1c-0000-4000-8000-00000000000{i}", labels={},
                                   annotations={"scheduling.k8s.io/group-name": "pg-train"})
            pod["spec"].pop("schedulingGates")
            pod["spec"]["schedulerName"] = "volcano"
            items.append(pod)
    edit(root, "pods.json", pods)
    for f in root.glob("*.kueue.x-k8s.io.json"):
        f.unlink()
    (root / "podgroups.scheduling.volcano.sh.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "pg-train", "namespace": "team-a"},
         "spec": {"minMember": min_member, "queue": "research", "minResources": {"nvidia.com/gpu": str(4 * min_member)}},
         "status": {"phase": phase, **({"running": running} if running else {})}}]}))
    (root / "queues.scheduling.volcano.sh.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
         "spec": {"capability": {"nvidia.com/gpu": capability}}, "status": {"state": state}}]}))


def test_volcano_queue_capability_below_minresources(tmp_path):
    root = copy(tmp_path)
    _volcano(root, members=1, min_member=1, phase="Pending", capability="2")
    v = verdicts(root)["team-a/gang-0"]
    assert v.word == w.QUEUE_QUOTA and v.evidence["queue"]["too_large"] is True
    assert v.evidence["queue"]["rebuilt"] == "queue resource quota insufficient: insufficient nvidia.com/gpu"


def test_volcano_closed_queue_is_misconfigured(tmp_path):
    root = copy(tmp_path)
    _volcano(root, members=1, min_member=1, phase="Pending", capability="16", state="Closed")
    assert verdicts(root)["team-a/gang-0"].word == w.QUEUE_MISCONFIGURED


def test_volcano_gang_that_does_not_fit_at_once_is_exhausted(tmp_path):
    root = copy(tmp_path)
    # Each member asks 4 GPUs; the two DGX nodes have 4 free each: any one fits, three at once do not.
    _volcano(root, members=3, min_member=3, phase="Pending", capability="32")
    got = verdicts(root)
    for i in range(3):
        v = got[f"team-a/gang-{i}"]
        assert v.word == w.EXHAUSTED and "2 of 3 members fit now" in v.reason
        assert v.evidence["gang"]["placed"] == 0


def test_running_gang_needs_only_the_members_not_yet_placed(tmp_path):
    root = copy(tmp_path)
    # minMember 4, two members Running (status.running 2): the two still needed fit, one per DGX node.
    _volcano(root, members=2, min_member=4, phase="Running", capability="32", running=2)
    got = verdicts(root)
    for i in range(2):
        assert got[f"team-a/gang-{i}"].word != w.EXHAUSTED and "gang" not in got[f"team-a/gang-{i}"].evidence


def test_running_gang_whose_remaining_members_do_not_fit_is_exhausted_naming_the_placed(tmp_path):
    root = copy(tmp_path)
    # minMember 5, two placed: three still needed, two fit.
    _volcano(root, members=3, min_member=5, phase="Running", capability="32", running=2)
    v = verdicts(root)["team-a/gang-0"]
    assert v.word == w.EXHAUSTED
    assert "2 of 3 members fit now (2 of minMember 5 already placed)" in v.reason
    assert (v.evidence["gang"]["placed"], v.evidence["gang"]["needed_now"]) == (2, 3)


def test_nodes_and_report_show_the_queue_table_on_the_real_kueue_recording():
    """queues.md: per ClusterQueue and flavor, GPU nominal / reserved (by which workloads) / borrowed / waiting.
    The recording: gpu-cluster-queue's 8 nominal nvidia.com/gpu in flavor a100, all reserved by two admitted Jobs."""
    import json as _json

    from helpers import RECORDINGS, run_cli

    bundle = RECORDINGS / "quota-exhausted-now-v1.36"
    doc = _json.loads(run_cli("nodes", bundle, "-o", "json").stdout)
    [row] = doc["queues"]
    assert (row["cluster_queue"], row["flavor"], row["resource"], row["nominal"], row["reserved"], row["borrowed"],
            row["waiting"]) == ("gpu-cluster-queue", "a100", "nvidia.com/gpu", 8, 8, 0, 1)
    assert row["reserved_by"].count("(4)") == 2
    page = run_cli("report", bundle, "-o", "markdown", "--file", "-").stdout
    assert "## Queues" in page and "| gpu-cluster-queue |  | a100 | nvidia.com/gpu | 8 | **8** |" in page
    assert "Kueue ClusterQueues" not in run_cli("nodes", RECORDINGS / "lab-seven-states-v1.36").stdout  # no Kueue: no table


def test_workload_admitted_by_borrowing_from_the_cohort_is_not_a_target_and_the_table_shows_the_loan(tmp_path):
    """Kueue v0.19 admitted train-resnet50 (4 GPUs) into gpu-cluster-queue, whose 8 nominal GPUs the two sweeps
    already hold, by borrowing 4 from ClusterQueue spare in cohort research (8 nominal, nothing used); Kueue then
    ungated its pod (adding flavor a100's nodeLabels to its nodeSelector) and the scheduler bound it."""
    from helpers import run_cli

    root = copy(tmp_path)

    def borrowed(items):
        cq = items[0]
        cq["spec"]["cohortName"] = "research"
        spare = json.loads(json.dumps(cq))
        spare["metadata"].update(name="spare", uid="0b7c3f4e-5d6a-4e8b-9c0d-1e2f3a4b5c6d")
        cq["status"].update(admittedWorkloads=3, reservingWorkloads=3, pendingWorkloads=0)
        for key in ("flavorsReservation", "flavorsUsage"):
            cq["status"][key] = [{"name": "a100", "resources": [
                {"borrowed": "0", "name": "cpu", "total": "32"}, {"borrowed": "0", "name": "memory", "total": "256Gi"},
                {"borrowed": "4", "name": "nvidia.com/gpu", "total": "12"}]}]
        spare["status"].update(admittedWorkloads=0, reservingWorkloads=0, pendingWorkloads=0)
        for key in ("flavorsReservation", "flavorsUsage"):
            spare["status"][key] = [{"name": "a100", "resources": [
                {"borrowed": "0", "name": r, "total": "0"} for r in ("cpu", "memory", "nvidia.com/gpu")]}]
        items.append(spare)

    def admit(items):
        wl = pending_workload(items)
        at = wl["status"]["conditions"][0]["lastTransitionTime"]
        wl["status"] = {
            "admission": {"clusterQueue": "gpu-cluster-queue", "podSetAssignments": [{
                "count": 1, "flavors": {"cpu": "a100", "memory": "a100", "nvidia.com/gpu": "a100"}, "name": "main",
                "resourceUsage": {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "4"}}]},
            "conditions": [
                {"lastTransitionTime": at, "message": "All pods reached readiness and the workload is running",
                 "observedGeneration": 1, "reason": "Started", "status": "True", "type": "PodsReady"},
                {"lastTransitionTime": at, "message": "Quota reserved in ClusterQueue gpu-cluster-queue",
                 "observedGeneration": 1, "reason": "QuotaReserved", "status": "True", "type": "QuotaReserved"},
                {"lastTransitionTime": at, "message": "The workload is admitted", "observedGeneration": 1,
                 "reason": "Admitted", "status": "True", "type": "Admitted"}]}

    def schedule(items):
        pod = next(p for p in items if p["metadata"]["name"] == "train-resnet50")
        pod["spec"].pop("schedulingGates")
        pod["spec"]["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
        pod["spec"]["nodeName"] = "dgx-a100-01"  # beside sweep-lr-1e4 (4 of its 8 GPUs)
        at = pod["status"]["conditions"][0]["lastTransitionTime"]
        pod["status"] = {"phase": "Running", "conditions": [
            {"lastProbeTime": None, "lastTransitionTime": at, "status": "True", "type": "PodScheduled"}]}

    edit(root, CQ, borrowed)
    edit(root, WL, admit)
    edit(root, "pods.json", schedule)
    assert PENDING not in verdicts(root)  # admitted, ungated, bound: not a target
    rows = {r["cluster_queue"]: r for r in json.loads(run_cli("nodes", root, "-o", "json").stdout)["queues"]}
    loan = rows["gpu-cluster-queue"]
    assert (loan["cohort"], loan["nominal"], loan["reserved"], loan["borrowed"], loan["waiting"]) == ("research", 8, 12, 4, 0)
    assert loan["reserved_by"].count("(4)") == 3
    assert (rows["spare"]["reserved"], rows["spare"]["borrowed"]) == (0, 0)
    page = run_cli("report", root, "-o", "markdown", "--file", "-").stdout
    assert "| gpu-cluster-queue | research | a100 | nvidia.com/gpu | 8 | 12 | 4 |" in page
