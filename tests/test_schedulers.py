"""Other schedulers (schedulers.md): GPU intent the sharing schedulers' way, and `no-scheduler`.

Built from the real lab-seven-states-v1.36 recording (tests/data/recordings): each case copies one of its pods and
changes only what it needs. The sharing resources and annotations are the schedulers' own names (HAMi
`charts/hami/values.yaml`, `pkg/device/nvidia/device.go`; Volcano `pkg/scheduler/api/devices/config/vgpu.go`;
KAI-Scheduler `pkg/common/constants/constants.go`); the scheduler pods are shaped as their charts ship them
(HAMi `charts/hami/templates/scheduler/deployment.yaml`: a `kube-scheduler` container with
`--scheduler-name=hami-scheduler` beside the `vgpu-scheduler-extender`; KAI's `scheduler` Deployment, image
`ghcr.io/nvidia/kai-scheduler/scheduler`, and its `binder`).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from conftest import analyse_dir
from helpers import RECORDINGS, run_cli

from analyzer import words as w
from analyzer.model.schedulers import runs, scheduler_names

LAB = RECORDINGS / "lab-seven-states-v1.36"
OLD = "2026-11-29T17:10:00Z"  # 7 minutes before the recording's newest event (17:17:17)


def _bundle(tmp_path: Path) -> tuple[Path, dict, dict]:
    root = tmp_path / "lab"
    shutil.copytree(LAB, root, ignore=shutil.ignore_patterns("manifests"))
    return root, json.loads((root / "pods.json").read_text()), json.loads((root / "events.json").read_text())


def _save(root: Path, pods: dict, events: dict) -> None:
    (root / "pods.json").write_text(json.dumps(pods))
    (root / "events.json").write_text(json.dumps(events))


def _pod(pods: dict, name: str) -> dict:
    return next(p for p in pods["items"] if p["metadata"]["name"] == name)


def _unseen(pods: dict, events: dict, *, name: str, scheduler: str, created: str = OLD,
            annotations: dict | None = None, limits: dict | None = None) -> dict:
    """The recording's `exhausted` pod under another name and scheduler, never looked at: no PodScheduled
    condition, no event."""
    p = copy.deepcopy(_pod(pods, "exhausted"))
    meta = p["metadata"]
    meta["name"], meta["uid"], meta["creationTimestamp"] = name, f"uid-{name}", created
    meta["annotations"] = dict(annotations or {})
    p["spec"]["schedulerName"] = scheduler
    if limits is not None:
        p["spec"]["containers"][0]["resources"] = {"limits": limits, "requests": dict(limits)}
    p["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    pods["items"].append(p)
    return p


def _scheduler_pod(pods: dict, *, namespace: str, name: str, labels: dict, containers: list[dict]) -> None:
    """The recording's Running `filler-a`, as a scheduler's pod (no GPU held)."""
    p = copy.deepcopy(_pod(pods, "filler-a"))
    meta = p["metadata"]
    meta.update(namespace=namespace, name=name, uid=f"uid-{name}", labels=labels, annotations={})
    meta.pop("ownerReferences", None)
    p["spec"]["containers"] = [{"name": c["name"], "image": c["image"], "args": c.get("args", []),
                                "resources": {"requests": {"cpu": "100m"}}} for c in containers]
    pods["items"].append(p)


def _event_for(events: dict, pod: str, *, component: str, message: str) -> None:
    e = copy.deepcopy(next(x for x in events["items"] if x["involvedObject"]["name"] == "exhausted"))
    e["metadata"]["name"] = f"{pod}.kai"
    e["involvedObject"].update(name=pod, uid=f"uid-{pod}")
    e["reportingComponent"], e["message"] = component, message
    e["source"] = {"component": component}
    events["items"].append(e)


KAI_SCHEDULER = [{"name": "scheduler", "image": "ghcr.io/nvidia/kai-scheduler/scheduler:v0.9.3",
                  "args": ["--scheduler-conf=/etc/config/config.yaml"]}]
KAI_BINDER = [{"name": "binder", "image": "ghcr.io/nvidia/kai-scheduler/binder:v0.9.3",
               "args": ["--scheduler-name=kai-scheduler"]}]
HAMI_SCHEDULER = [{"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.31.0",
                   "args": ["--config=/config/config.yaml", "--scheduler-name=hami-scheduler"]},
                  {"name": "vgpu-scheduler-extender", "image": "docker.io/projecthami/hami:v2.6.0",
                   "args": ["--scheduler-name=hami-scheduler"]}]


# -- GPU intent the sharing schedulers' way ------------------------------------------------------------

def test_sharing_requests_are_gpu_requests(tmp_path: Path) -> None:
    """A pod with GPU intent that asks HAMi's memory, Volcano's vGPU or KAI's fraction is never no-gpu-request;
    the recording's own no-gpu-request pod keeps its word."""
    root, pods, events = _bundle(tmp_path)
    base = _pod(pods, "no-gpu-request")
    for name, limits, ann, sched in (("hami-mem", {"nvidia.com/gpumem": "3000"}, {}, "default-scheduler"),
                                     ("volcano-vgpu", {"volcano.sh/vgpu-number": "1"}, {}, "default-scheduler"),
                                     ("kai-half", None, {"gpu-fraction": "0.5"}, "kai-scheduler")):
        p = copy.deepcopy(base)
        p["metadata"].update(name=name, uid=f"uid-{name}", annotations=ann)
        p["spec"]["schedulerName"] = sched
        p["spec"].pop("nodeName")
        if limits:
            p["spec"]["containers"][0]["resources"]["limits"] = limits
        pods["items"].append(p)
    _save(root, pods, events)
    found = analyse_dir(root)
    assert found["lab/no-gpu-request"].word == w.NO_GPU_REQUEST
    for key in ("lab/hami-mem", "lab/volcano-vgpu", "lab/kai-half"):
        assert found[key].word != w.NO_GPU_REQUEST, (key, found[key].reason)
        assert found[key].evidence["gpu_sharing_request"]
    # HAMi's memory is the extender's to count: no node advertises it, so it never fails the funnel's
    # "advertised" check (the pod asks no nvidia.com/gpu here: it fits by kube-scheduler's count).
    assert found["lab/hami-mem"].word not in (w.NO_GPU_NODE, w.RESOURCE_NAME_MISMATCH)


# -- no-scheduler ------------------------------------------------------------------------------------------

def test_misspelt_and_uninstalled_schedulers_are_no_scheduler(tmp_path: Path) -> None:
    root, pods, events = _bundle(tmp_path)
    _unseen(pods, events, name="misspelt", scheduler="hami-schedular")
    _unseen(pods, events, name="kai-frac", scheduler="kai-scheduler", annotations={"gpu-fraction": "0.5"}, limits={})
    _unseen(pods, events, name="fresh", scheduler="hami-schedular", created="2026-11-29T17:16:50Z")
    _scheduler_pod(pods, namespace="kube-system", name="hami-scheduler-7d9c", containers=HAMI_SCHEDULER,
                   labels={"app.kubernetes.io/component": "hami-scheduler"})
    # KAI's binder carries --scheduler-name=kai-scheduler but schedules nothing: it does not count.
    _scheduler_pod(pods, namespace="kai-scheduler", name="binder-5f6d", containers=KAI_BINDER, labels={"app": "binder"})
    _save(root, pods, events)
    found = analyse_dir(root)
    assert found["lab/misspelt"].word == w.NO_SCHEDULER
    assert "'hami-schedular'" in found["lab/misspelt"].reason and "7m" in found["lab/misspelt"].reason
    assert found["lab/kai-frac"].word == w.NO_SCHEDULER
    assert found["lab/fresh"].word != w.NO_SCHEDULER  # 27 s old: maybe not seen yet
    assert found["lab/exhausted"].word == w.EXHAUSTED  # the default scheduler's answers stand
    out = run_cli("why", root, "lab/misspelt", "--explain", check=True).stdout
    assert "no-scheduler" in out and "kube-system/hami-scheduler-7d9c" in out and "{" not in out


def test_running_scheduler_with_its_events_is_judged_by_its_rules(tmp_path: Path) -> None:
    root, pods, events = _bundle(tmp_path)
    _unseen(pods, events, name="kai-frac", scheduler="kai-scheduler", annotations={"gpu-fraction": "0.5"}, limits={})
    _unseen(pods, events, name="hami-pod", scheduler="hami-scheduler",
            limits={"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3000"})
    _scheduler_pod(pods, namespace="kai-scheduler", name="scheduler-6c8f", containers=KAI_SCHEDULER,
                   labels={"app": "scheduler"})
    _scheduler_pod(pods, namespace="kube-system", name="hami-scheduler-7d9c", containers=HAMI_SCHEDULER,
                   labels={"app.kubernetes.io/component": "hami-scheduler"})
    said = "0/4 nodes are available: 4 node(s) didn't have enough resources: gpu fraction."
    _event_for(events, "kai-frac", component="kai-scheduler", message=said)
    _save(root, pods, events)
    found = analyse_dir(root)
    kai = found["lab/kai-frac"]
    assert kai.word == w.UNCLASSIFIED and kai.scheduler["message"] == said
    assert found["lab/hami-pod"].word != w.NO_SCHEDULER


def test_which_pod_runs_a_scheduler() -> None:
    """model/schedulers.py's rule: the scheduler's own pod, not its project's controllers, binders or webhooks."""
    def says(containers: list[dict], labels: dict | None = None) -> tuple:
        return scheduler_names({"containers": containers}, labels or {})

    assert runs("kai-scheduler", *says(KAI_SCHEDULER))
    assert not runs("kai-scheduler", *says(KAI_BINDER))
    assert runs("hami-scheduler", *says(HAMI_SCHEDULER))
    volcano = [{"name": "volcano-scheduler", "image": "docker.io/volcanosh/vc-scheduler:v1.12.1",
                "args": ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]}]
    controllers = [{"name": "volcano-controllers", "image": "docker.io/volcanosh/vc-controller-manager:v1.12.1",
                    "args": ["--scheduler-name=volcano"]}]
    webhook = [{"name": "admission", "image": "docker.io/volcanosh/vc-webhook-manager:v1.12.1",
                "args": ["--scheduler-name=volcano"]}]
    assert runs("volcano", *says(volcano, {"app": "volcano-scheduler"}))
    assert not runs("volcano", *says(controllers, {"app": "volcano-controller"}))
    assert not runs("volcano", *says(webhook, {"app": "volcano-admission"}))
    assert says([{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1"}], {"app": "train"}) == ((), ())
    assert not runs("my-scheduler", *says(HAMI_SCHEDULER))
    # hostile values: no traceback, nothing recognised
    assert says([{"name": 3, "image": None, "args": "--scheduler-name=x"}, "junk"], {"app": ["sched"]}) == ((), ())
