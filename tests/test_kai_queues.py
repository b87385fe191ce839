"""KAI-Scheduler's Queues and PodGroups (schedulers.md, rules/kai_queues.py).

Built from the real lab-seven-states-v1.36 recording as tests/test_schedulers.py builds its KAI cases: KAI's
scheduler pod running, one pod of `schedulerName: kai-scheduler` naming its PodGroup in the `pod-group-name`
annotation. The Queues are shaped as KAI ships them (docs/quickstart/default-queues.yaml,
docs/priority/example/limited-queue.yaml: scheduling.run.ai/v2, gpu/cpu/memory with quota, limit and
overQuotaWeight, -1 unlimited); the PodGroup as pkg/apis/scheduling/v2alpha2/podgroup_types.go; the refusals as
pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go and quota_check.go decide them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import analyse_dir
from helpers import run_cli
from stand_in import Kube
from test_collect import entry, manifest_of
from test_schedulers import KAI_SCHEDULER, _bundle, _save, _scheduler_pod, _unseen

from analyzer import words as w

UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}


def _queue(name: str, *, parent: str = "", gpu: dict | None = None, allocated: dict | None = None,
           allocated_np: dict | None = None) -> dict:
    spec: dict = {"resources": {"cpu": dict(UNLIMITED), "gpu": gpu or dict(UNLIMITED), "memory": dict(UNLIMITED)}}
    if parent:
        spec["parentQueue"] = parent
    status = {"allocated": allocated or {}, "allocatedNonPreemptible": allocated_np or {}}
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "uid": f"uid-q-{name}", "creationTimestamp": "2026-11-29T16:00:00Z"},
            "spec": spec, "status": status}


def _podgroup(name: str, queue: str, *, preemptibility: str = "preemptible", message: str = "") -> dict:
    status: dict = {"phase": "Pending"}
    if message:
        status["schedulingConditions"] = [{"type": "UnschedulableOnNodePool", "nodePool": "default",
                                           "reason": "OverLimit", "message": message, "transitionID": "0"}]
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "lab", "uid": f"uid-pg-{name}",
                         "creationTimestamp": "2026-11-29T17:10:00Z"},
            "spec": {"minMember": 1, "queue": queue, "preemptibility": preemptibility}, "status": status}


def _kai(tmp_path: Path, *, queues: list[dict] | None, podgroups: list[dict] | None, group: str = "pg-train",
         limits: dict | None = None) -> Path:
    root, pods, events = _bundle(tmp_path)
    _unseen(pods, events, name="kai-train", scheduler="kai-scheduler", annotations={"pod-group-name": group},
            limits=limits or {"nvidia.com/gpu": "2"})
    _scheduler_pod(pods, namespace="kai-scheduler", name="scheduler-6c8f", containers=KAI_SCHEDULER,
                   labels={"app": "scheduler"})
    _save(root, pods, events)
    for name, items in (("queues.scheduling.run.ai", queues), ("podgroups.scheduling.run.ai", podgroups)):
        if items is not None:
            (root / f"{name}.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return root


def test_a_podgroup_naming_a_missing_queue_is_queue_misconfigured(tmp_path: Path) -> None:
    """cluster_info.go: "Queue '%s' does not exist"; the PodGroup is never scheduled."""
    root = _kai(tmp_path, queues=[_queue("default-queue")], podgroups=[_podgroup("pg-train", "team-a")])
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.QUEUE_MISCONFIGURED, v.reason
    assert "team-a" in v.reason and "pg-train" in v.reason


def test_a_queue_over_its_gpu_limit_is_queue_quota_naming_it(tmp_path: Path) -> None:
    """max_allowed_check.go isOverLimit: limit 4 < allocated 3 + requested 2, on the parent of the job's queue."""
    parent = _queue("research", gpu={"quota": 2, "limit": 4, "overQuotaWeight": 1}, allocated={"nvidia.com/gpu": "3"})
    message = "podgroup pg-train is over the limit of queue research"
    root = _kai(tmp_path, queues=[parent, _queue("team-a", parent="research")],
                podgroups=[_podgroup("pg-train", "team-a", message=message)])
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.QUEUE_QUOTA, v.reason
    assert "research" in v.reason and "gpu" in v.reason
    r = run_cli("why", root, "lab/kai-train", "--explain")
    assert r.returncode == 0 and message in r.stdout and "Queue research" in r.stdout


def test_a_non_preemptible_job_is_refused_at_quota(tmp_path: Path) -> None:
    """quota_check.go: a non-preemptible job may not go over its queue's quota, even below the limit."""
    q = _queue("team-a", gpu={"quota": 2, "limit": 8, "overQuotaWeight": 1}, allocated={"nvidia.com/gpu": "1"},
               allocated_np={"nvidia.com/gpu": "1"})
    root = _kai(tmp_path, queues=[q], podgroups=[_podgroup("pg-train", "team-a", preemptibility="non-preemptible")])
    assert analyse_dir(root)["lab/kai-train"].word == w.QUEUE_QUOTA
    root2 = _kai(tmp_path / "p", queues=[q], podgroups=[_podgroup("pg-train", "team-a")])
    assert analyse_dir(root2)["lab/kai-train"].word != w.QUEUE_QUOTA


def test_a_podgroup_naming_itself_as_its_queue_and_a_looping_parent_are_findings(tmp_path: Path) -> None:
    root = _kai(tmp_path, queues=[_queue("default-queue")], podgroups=[_podgroup("pg-train", "pg-train")])
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.QUEUE_MISCONFIGURED and "names itself" in v.reason
    loop = [_queue("a", parent="b"), _queue("b", parent="a")]
    root2 = _kai(tmp_path / "loop", queues=loop, podgroups=[_podgroup("pg-train", "a")])
    v2 = analyse_dir(root2)["lab/kai-train"]
    assert v2.word == w.QUEUE_MISCONFIGURED and "loops" in v2.reason


def test_a_queue_naming_itself_as_its_parent_and_a_longer_cycle_are_queue_misconfigured(tmp_path: Path) -> None:
    """KAI walks parentQueue up to the root (max_allowed_check.go): a queue that is its own parent, or a cycle of
    three, never reaches one. Named as a user can fix it, never a traceback."""
    root = _kai(tmp_path, queues=[_queue("a", parent="a")], podgroups=[_podgroup("pg-train", "a")])
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.QUEUE_MISCONFIGURED and "Queue a names itself as its parent" in v.reason, v.reason
    cycle = [_queue("team", parent="b"), _queue("b", parent="c"), _queue("c", parent="b")]
    root2 = _kai(tmp_path / "cycle", queues=cycle, podgroups=[_podgroup("pg-train", "team")])
    r = run_cli("why", root2, "lab/kai-train", "--explain")
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr
    assert "queue-misconfigured" in r.stdout and "(b -> c -> b)" in r.stdout


def test_a_negative_quota_or_limit_is_a_finding_and_admits_nothing(tmp_path: Path) -> None:
    """KAI compares a limit (and, for a non-preemptible job, a quota) as it stands, -1 alone meaning unlimited
    (max_allowed_check.go isOverLimit, quota_check.go), and its Queue webhook does not refuse a negative one
    (queue_webhook.go): no job ever fits, so the queue is misconfigured, not full; the value is a finding naming
    the file and JSON path (exit 2)."""
    limit = _queue("team-a", gpu={"quota": 1, "limit": -5, "overQuotaWeight": 1})
    root = _kai(tmp_path, queues=[limit], podgroups=[_podgroup("pg-train", "team-a")])
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.QUEUE_MISCONFIGURED and "gpu limit is -5 GPU" in v.reason, v.reason
    r = run_cli("why", root, "lab/kai-train")
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert "queues.scheduling.run.ai.json: $.items[0].spec.resources.gpu.limit" in r.stderr and "-5" in r.stderr
    quota = _queue("team-a", gpu={"quota": -3, "limit": 8, "overQuotaWeight": 1})
    root2 = _kai(tmp_path / "np", queues=[quota],
                 podgroups=[_podgroup("pg-train", "team-a", preemptibility="non-preemptible")])
    v2 = analyse_dir(root2)["lab/kai-train"]
    assert v2.word == w.QUEUE_MISCONFIGURED and "gpu quota is -3 GPU" in v2.reason, v2.reason
    # A preemptible job is capped by the limit alone: the negative quota is only the finding.
    root3 = _kai(tmp_path / "p", queues=[quota], podgroups=[_podgroup("pg-train", "team-a")])
    assert analyse_dir(root3)["lab/kai-train"].word not in (w.QUEUE_MISCONFIGURED, w.QUEUE_QUOTA)
    assert run_cli("validate", root3).returncode == 1


def test_a_hostile_queue_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    """An unreadable Queue is not a missing one: insufficient-evidence naming where it is, exit status 2."""
    for i, bad in enumerate((_queue("team-a", allocated={"nvidia.com/gpu": "lots"}),
                             _queue("team-a", gpu={"quota": "two", "limit": [], "overQuotaWeight": None}))):
        root = _kai(tmp_path / str(i), queues=[bad], podgroups=[_podgroup("pg-train", "team-a")])
        r = run_cli("why", root, "lab/kai-train")
        assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
        v = analyse_dir(root)["lab/kai-train"]
        assert v.word == w.INSUFFICIENT_EVIDENCE and "queues.scheduling.run.ai.json" in v.reason, v.reason


def test_without_kais_files_the_queue_cannot_be_checked(tmp_path: Path) -> None:
    """As for Kueue's objects (causes.md "When the bundle cannot decide"): the answer names the missing files."""
    v = analyse_dir(_kai(tmp_path, queues=None, podgroups=None))["lab/kai-train"]
    assert v.word == w.INSUFFICIENT_EVIDENCE and "queues.scheduling.run.ai.json" in v.reason


def test_a_queue_with_room_passes_the_pod_on(tmp_path: Path) -> None:
    root = _kai(tmp_path, queues=[_queue("team-a")], podgroups=[_podgroup("pg-train", "team-a")])
    assert analyse_dir(root)["lab/kai-train"].word not in (w.QUEUE_QUOTA, w.QUEUE_MISCONFIGURED,
                                                          w.INSUFFICIENT_EVIDENCE)



def test_a_whole_gpu_pod_its_queue_admits_is_judged_by_the_node_filters_kai_runs(tmp_path: Path) -> None:
    """predicates.go evaluateTaskOnPredicates: resources, pod count, Ready, then kube-scheduler's own filters; so
    a whole-GPU pod with queue room that a node fits is fits-now, and one asking a fraction (KAI's own device
    accounting, not modelled) stays unclassified."""
    root = _kai(tmp_path, queues=[_queue("team-a")], podgroups=[_podgroup("pg-train", "team-a")],
                limits={"nvidia.com/gpu": "1"})
    pods = json.loads((root / "pods.json").read_text())
    # The lab's gpu-ok is full: its GPU pods are gone, so it has room.
    pods["items"] = [p for p in pods["items"] if p["spec"].get("nodeName") != "gpu-ok"
                    or p["metadata"]["namespace"] == "kai-scheduler"]
    (root / "pods.json").write_text(json.dumps(pods))
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.FITS_NOW, v.reason
    for p in pods["items"]:
        if p["metadata"]["name"] == "kai-train":
            p["metadata"]["annotations"]["gpu-fraction"] = "0.5"
            del p["spec"]["containers"][0]["resources"]
    (root / "pods.json").write_text(json.dumps(pods))
    v = analyse_dir(root)["lab/kai-train"]
    assert v.word == w.UNCLASSIFIED, v.reason
    assert "schedulerName" in v.reason


# -- collected by scripts/collect.py from the stand-in kubectl ---------------------------------------------

KAI_FILES = ("queues.scheduling.run.ai.json", "podgroups.scheduling.run.ai.json")


def test_the_collector_copies_kais_objects_and_the_answer_holds(kube: Kube, tmp_path: Path) -> None:
    parent = _queue("research", gpu={"quota": 2, "limit": 4, "overQuotaWeight": 1}, allocated={"nvidia.com/gpu": "3"})
    src = _kai(tmp_path / "src", queues=[parent, _queue("team-a", parent="research")],
               podgroups=[_podgroup("pg-train", "team-a")])
    for f in kube.data.iterdir():
        f.unlink()
    for f in src.glob("*.json"):
        shutil.copy(f, kube.data / f.name)
    r = kube.collect()
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    for name in KAI_FILES:
        assert entry(manifest_of(bundle), name)["status"] == "ok"
        assert json.loads((bundle / name).read_text())["items"] == json.loads((src / name).read_text())["items"]
    assert analyse_dir(bundle)["lab/kai-train"].word == w.QUEUE_QUOTA


def test_a_cluster_without_kais_crds_is_not_a_failure(kube: Kube, tmp_path: Path) -> None:
    src = _kai(tmp_path / "src", queues=None, podgroups=None)
    shutil.copy(src / "pods.json", kube.data / "pods.json")
    r = kube.collect(FAKE_KUBECTL_UNSERVED="scheduling.run.ai")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert m["partial"] is False
    for name in KAI_FILES:
        e = entry(m, name)
        plural = name.split(".")[0]
        assert e["status"] == "not-served" and e["stderr"] == f'error: the server doesn\'t have a resource type "{plural}"\n'
        assert not (bundle / name).exists()
    v = analyse_dir(bundle)["lab/kai-train"]
    assert v.word == w.INSUFFICIENT_EVIDENCE and "queues.scheduling.run.ai" in v.reason, v.reason
