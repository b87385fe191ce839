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
    assert says([{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1"}], {"app": "train"}) == ((), (), ())
    assert not runs("my-scheduler", *says(HAMI_SCHEDULER))
    # hostile values: no traceback, nothing recognised
    assert says([{"name": 3, "image": None, "args": "--scheduler-name=x"}, "junk"], {"app": ["sched"]}) == ((), (), ())


# -- HAMi's and Volcano's device accounting --------------------------------------------------------------------
# Node registration in HAMi's JSON (v2.8.0 and later, pkg/device/devices.go DeviceInfo) and colon format (v2.7.1
# DecodeNodeDevices); the handshake as pkg/device/devices.go CheckHealth reads it; allocations as
# EncodeContainerDevices writes them. Volcano's as pkg/scheduler/api/devices/nvidia/vgpu/utils.go writes them.

CARDS = [f"GPU-{i}a1b2c3d4-0000-4000-8000-00000000000{i}" for i in range(4)]


def _hami_json(memory: int = 40960, card_type: str = "NVIDIA-NVIDIA A100-SXM4-40GB") -> str:
    return json.dumps([{"id": u, "index": i, "count": 10, "devmem": memory, "devcore": 100, "type": card_type,
                        "numa": 0, "mode": "hami-core", "health": True} for i, u in enumerate(CARDS)])


def _hami_colon() -> str:
    return "".join(f"{u},10,40960,100,NVIDIA-NVIDIA A100-SXM4-40GB,0,true,{i},hami-core:" for i, u in enumerate(CARDS))


def _hami_bundle(tmp_path: Path, *, register: str | None = None, handshake: str = "Reported_2026-11-29 17:17:10",
                 image: str = "docker.io/projecthami/hami:v2.8.0", asks: dict | None = None,
                 annotations: dict | None = None, allocation: str | None = None) -> Path:
    """gpu-ok registered with HAMi (4 A100 40 GB cards, 10 shares each, advertised as 40 nvidia.com/gpu); the
    recording's filler-a holds 3 of kube-scheduler's count and, by its allocation, nearly all of 3 cards' memory;
    a second bound pod nearly all of the fourth's; `lab/hami-train` asks 1 card with 8000 MiB."""
    root, pods, events = _bundle(tmp_path)
    nodes = json.loads((root / "nodes.json").read_text())
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == "gpu-ok")
    node["metadata"]["annotations"][HAMI_REGISTER] = _hami_json() if register is None else register
    node["metadata"]["annotations"]["hami.io/node-handshake"] = handshake
    for part in ("capacity", "allocatable"):
        node["status"][part]["nvidia.com/gpu"] = "40"
    (root / "nodes.json").write_text(json.dumps(nodes))
    filler = _pod(pods, "filler-a")
    filler["metadata"].setdefault("annotations", {})[HAMI_ALLOCATED] = (
        "".join(f"{u},NVIDIA,38000,0:" for u in CARDS[:3]) + ";" if allocation is None else allocation)
    other = copy.deepcopy(filler)
    other["metadata"].update(name="filler-c", uid="uid-filler-c")
    other["metadata"]["annotations"] = {HAMI_ALLOCATED: f"{CARDS[3]},NVIDIA,36000,30:;"}
    other["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    pods["items"].append(other)
    _unseen(pods, events, name="hami-train", scheduler="hami-scheduler", annotations=annotations,
            limits=asks or {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "8000"})
    hami = copy.deepcopy(HAMI_SCHEDULER)
    hami[1]["image"] = image
    _scheduler_pod(pods, namespace="kube-system", name="hami-scheduler-7d9c", containers=hami,
                   labels={"app.kubernetes.io/component": "hami-scheduler"})
    _save(root, pods, events)
    return root


HAMI_REGISTER = "hami.io/node-nvidia-register"
HAMI_ALLOCATED = "hami.io/vgpu-devices-allocated"


def test_hami_every_card_short_of_memory_is_exhausted_per_card(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path)
    v = analyse_dir(root)["lab/hami-train"]
    assert v.word == w.EXHAUSTED, v.reason  # kube-scheduler's count: 36 of 40 nvidia.com/gpu free
    assert "gpu-ok" in v.reason and "8000 MiB asked" in v.reason
    cards = v.evidence["vgpu"]["nodes"]["gpu-ok"]["cards"]
    assert any(CARDS[3] in c and "4960 of 40960 MiB free" in c for c in cards)
    assert any(CARDS[0] in c and "2960 of 40960 MiB free" in c for c in cards)
    out = run_cli("why", root, "lab/hami-train", "--explain", check=True).stdout
    assert "On node gpu-ok, HAMi cannot take it" in out and "{" not in out.split("Evidence:")[1]
    # the default scheduler's pod on the same node is judged by kube-scheduler's count alone (40 GPUs now: it fits)
    assert "vgpu" not in analyse_dir(root)["lab/exhausted"].evidence


def test_hamis_own_filteringfailed_event_is_quoted_as_the_cross_check(tmp_path: Path) -> None:
    """HAMi records one FilteringFailed event per failure reason, `<n> nodes <Reason>(<nodes>)` (pkg/scheduler/
    scheduler.go calcScore, the reasons of pkg/device/common: CardInsufficientMemory), under its component's name;
    the answer comes from the registration and allocations, the event is quoted beside it."""
    root = _hami_bundle(tmp_path)
    events = json.loads((root / "events.json").read_text())
    _event_for(events, "hami-train", component="hami-scheduler", message="1 nodes CardInsufficientMemory(gpu-ok)")
    events["items"][-1]["reason"] = "FilteringFailed"
    (root / "events.json").write_text(json.dumps(events))
    v = analyse_dir(root)["lab/hami-train"]
    assert v.word == w.EXHAUSTED, v.reason
    assert v.evidence["vgpu"]["scheduler_said"]["message"] == "1 nodes CardInsufficientMemory(gpu-ok)"
    out = run_cli("why", root, "lab/hami-train", "--explain", check=True).stdout
    assert "said (FilteringFailed event at" in out and "CardInsufficientMemory(gpu-ok)" in out


def test_hami_colon_format_before_v2_8_reads_the_same(tmp_path: Path) -> None:
    assert analyse_dir(_hami_bundle(tmp_path, register=_hami_colon()))["lab/hami-train"].word == w.EXHAUSTED


def test_hami_small_ask_fits(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, asks={"nvidia.com/gpu": "1", "nvidia.com/gpumem": "2000"})
    v = analyse_dir(root)["lab/hami-train"]
    assert v.word == w.FITS_NOW, v.reason
    assert v.evidence["vgpu"]["fits_on"] == ["gpu-ok"]


def test_hami_stale_handshake_is_no_gpu_node_with_its_age(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, handshake="Requesting_2026-11-29 17:10:00")
    v = analyse_dir(root)["lab/hami-train"]
    assert v.word == w.NO_GPU_NODE and "gpu-ok" in v.reason and "437 s" in v.reason
    # From v2.9.0 an expired handshake is ignored while the node still advertises nvidia.com/gpu.
    root = _hami_bundle(tmp_path / "v29", handshake="Requesting_2026-11-29 17:10:00",
                        image="docker.io/projecthami/hami:v2.9.0")
    assert analyse_dir(root)["lab/hami-train"].word == w.EXHAUSTED


def test_hami_gpu_type_no_card_meets_is_selector_mismatch(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, annotations={"nvidia.com/use-gputype": "H100"})
    v = analyse_dir(root)["lab/hami-train"]
    assert v.word == w.SELECTOR_MISMATCH and "A100" in v.reason


def test_hami_bad_annotations_are_findings_not_tracebacks(tmp_path: Path) -> None:
    for i, (register, handshake, allocation) in enumerate((
            ("garbage", "Reported_2026-11-29 17:17:10", None),
            (_hami_json(memory=-1), "Reported_2026-11-29 17:17:10", None),
            (None, "Requesting_2099-01-01 00:00:00", None),  # in the future: read as fresh
            (None, "Requesting_not a time", "GPU-x,NVIDIA,lots,0:;"))):
        root = _hami_bundle(tmp_path / str(i), register=register, handshake=handshake, allocation=allocation)
        result = run_cli("analyze", root, "-o", "json")
        assert "Traceback" not in result.stderr and result.returncode in (0, 1, 2), result.stderr
        v = analyse_dir(root)["lab/hami-train"]
        if i < 2:
            assert v.word == w.NO_GPU_NODE and "unreadable" in v.reason, v.reason
        else:
            assert v.word in (w.EXHAUSTED, w.FITS_NOW, w.UNCLASSIFIED), v.reason
        if i == 2:
            assert "hami.io/node-handshake" in result.stderr + result.stdout  # the future time is a finding


def test_volcano_vgpu_memory_accounting(tmp_path: Path) -> None:
    """Volcano registers `uuid,count,devmem,type,health,mode` per card and is registered only while its three
    resources are allocatable (vgpu/device_info.go NewGPUDevices)."""
    root, pods, events = _bundle(tmp_path)
    nodes = json.loads((root / "nodes.json").read_text())
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == "gpu-ok")
    node["metadata"]["annotations"]["volcano.sh/node-vgpu-register"] = "".join(
        f"{u},10,40960,NVIDIA-A100-SXM4-40GB,true,hami-core:" for u in CARDS[:2])
    for part in ("capacity", "allocatable"):
        node["status"][part].update({"volcano.sh/vgpu-number": "20", "volcano.sh/vgpu-memory": "81920",
                                     "volcano.sh/vgpu-cores": "200"})
    (root / "nodes.json").write_text(json.dumps(nodes))
    filler = _pod(pods, "filler-a")
    filler["metadata"].setdefault("annotations", {})["volcano.sh/vgpu-ids-new"] = (
        f"{CARDS[0]},NVIDIA,38000,0:{CARDS[1]},NVIDIA,39000,0:;")
    _unseen(pods, events, name="vc-train", scheduler="volcano",
            limits={"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "8000"})
    _scheduler_pod(pods, namespace="volcano-system", name="volcano-scheduler-0", labels={"app": "volcano-scheduler"},
                   containers=[{"name": "volcano-scheduler", "image": "docker.io/volcanosh/vc-scheduler:v1.12.1"}])
    _save(root, pods, events)
    v = analyse_dir(root)["lab/vc-train"]
    assert v.word == w.EXHAUSTED and "Volcano" in v.reason, v.reason
    # Its resources no longer allocatable: not registered.
    for part in ("capacity", "allocatable"):
        node["status"][part]["volcano.sh/vgpu-cores"] = "0"
    (root / "nodes.json").write_text(json.dumps(nodes))
    v = analyse_dir(root)["lab/vc-train"]
    assert v.word in (w.NO_GPU_NODE, w.ALLOCATABLE_ZERO), v.reason


def test_nodes_shows_each_shared_card_as_its_scheduler_counts_it(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, handshake="Requesting_2026-11-29 17:10:00")
    out = run_cli("nodes", root, check=True).stdout
    line = next(x for x in out.splitlines() if CARDS[3] in x)
    assert "36000 MiB" in line and "4960 MiB" in line and "30%" in line and "1/10" in line and "437s ago" in line
    assert "handshake" in line  # the problem: an expired handshake


def test_generator_hami_world_keeps_every_truth_word(tmp_path: Path) -> None:
    """`generate_bundle.py --hami`: half the GPU pods for hami-scheduler, the GPU nodes registered with HAMi (JSON,
    fresh handshake), HAMi's scheduler running; whole cards keep kube-scheduler's and HAMi's counts equal."""
    from helpers import generate_with_truth

    bundle, truth = generate_with_truth(tmp_path, "--hami")
    result = run_cli("analyze", bundle, "-o", "words")
    assert sorted(result.stdout.splitlines()) == truth.read_text().splitlines()
    pods = json.loads((bundle / "pods.json").read_text())["items"]
    hami = [p for p in pods if p["spec"].get("schedulerName") == "hami-scheduler"]
    gpu = [p for p in pods if any("nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {})
                                  for c in p["spec"]["containers"])]
    assert 0.4 * len(gpu) <= len(hami) <= 0.6 * len(gpu)
    assert any(HAMI_ALLOCATED in (p["metadata"].get("annotations") or {}) for p in hami)
    nodes = json.loads((bundle / "nodes.json").read_text())["items"]
    assert any(HAMI_REGISTER in (n["metadata"].get("annotations") or {}) for n in nodes)
    assert "HAMi" in run_cli("nodes", bundle, check=True).stdout


def test_kai_failed_reservation_pod_is_node_runtime_for_the_pod_it_serves(tmp_path: Path) -> None:
    """KAI's binder binds a fraction pod only once its GPU's reservation pod runs (pkg/binder/binding/
    resourcereservation/resource_reservation.go; the pods share the `runai-gpu-group` label, the reservation pod
    lives in `kai-resource-reservation`, pkg/common/constants/constants.go)."""
    root, pods, events = _bundle(tmp_path)
    frac = _unseen(pods, events, name="kai-frac", scheduler="kai-scheduler", annotations={"gpu-fraction": "0.5"},
                   limits={})
    frac["metadata"]["labels"]["runai-gpu-group"] = "3f1c9a2e-group"
    _event_for(events, "kai-frac", component="kai-scheduler", message="Binding failed: reservation pod not running")
    _scheduler_pod(pods, namespace="kai-scheduler", name="scheduler-6c8f", containers=KAI_SCHEDULER,
                   labels={"app": "scheduler"})
    res = copy.deepcopy(_pod(pods, "filler-a"))
    res["metadata"].update(namespace="kai-resource-reservation", name="gpu-reservation-gpu-ok-x7k2p",
                           uid="uid-reservation", labels={"app": "kai-resource-reservation",
                                                          "runai-gpu-group": "3f1c9a2e-group"})
    res["spec"]["containers"][0]["image"] = "ghcr.io/nvidia/kai-scheduler/resource-reservation:v0.9.3"
    res["status"]["phase"] = "Pending"
    res["status"]["containerStatuses"][0].update(ready=False, started=False, state={"waiting": {
        "reason": "ImagePullBackOff", "message": 'Back-off pulling image "ghcr.io/nvidia/kai-scheduler/resource-reservation:v0.9.3"'}})
    pods["items"].append(res)
    _save(root, pods, events)
    v = analyse_dir(root)["lab/kai-frac"]
    assert v.word == w.NODE_RUNTIME, v.reason
    assert "kai-resource-reservation/gpu-reservation-gpu-ok-x7k2p" in v.reason and "gpu-ok" in v.reason
    assert "ImagePullBackOff" in v.reason
