"""`image-pull`, `volume-mount`, `node-runtime` and `node-side` (causes.md, node-start.md): bound pods the node will
not start, and pods the kubelet rejected.

Built from the real recordings (tests/data/recordings): multi-attach-v1.36 (a bound trainer, the attach/detach
controller's real Multi-Attach event), unexpected-admission-error-v1.36 (a pod the kubelet rejected, and its
replacement) and dra-exhausted-v1.36 (bound DRA pods). Each case changes only what it needs: the container
status and the pod's events, written as the kubelet's source writes them (texts cited per test).
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import analyse_dir
from helpers import RECORDINGS

from analyzer import words as w

TRAINER = "lab/trainer-6bd8c5b5-4h9dk"
REJECTED = "lab/infer-ddc5f997d-9pshn"
REPLACEMENT = "lab/infer-ddc5f997d-xsf49"
IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"
# containerd's error for a tag that does not exist, as the kubelet's image manager wraps it (images/image_manager.go)
PULL_ERROR = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{IMAGE}": failed to resolve reference '
              f'"{IMAGE}": {IMAGE}: not found')
# runc's prestart hook failing in nvidia-container-cli on a node without its driver libraries (NVIDIA/gpu-operator#480)
NVIDIA_CLI = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
              "unable to start container process: error during container init: error running hook #0: error running hook: "
              "exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: load library failed: "
              "libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown")


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(RECORDINGS / name, root, ignore=shutil.ignore_patterns("manifests"))
    return root


def _read(root: Path, kind: str) -> dict:
    return json.loads((root / f"{kind}.json").read_text())


def _write(root: Path, kind: str, doc: dict) -> None:
    (root / f"{kind}.json").write_text(json.dumps(doc, indent=4))


def _item(doc: dict, name: str) -> dict:
    return next(i for i in doc["items"] if i["metadata"]["name"] == name)


def kubelet_event(template: dict, *, reason: str, message: str, at: str, count: int = 1, type_: str = "Warning",
                  component: str = "kubelet") -> dict:
    """A pod event as the kubelet's recorder writes it (core/v1, count and first/lastTimestamp), from a real one."""
    e = copy.deepcopy(template)
    e["reason"], e["message"], e["count"], e["type"] = reason, message, count, type_
    e["firstTimestamp"] = e["lastTimestamp"] = at
    e["metadata"]["name"] = f"{e['involvedObject']['name']}.{hashlib.sha256((reason + message + at).encode()).hexdigest()[:16]}"
    e["reportingComponent"] = component
    e["source"] = {"component": component, "host": "g1"} if component == "kubelet" else {"component": component}
    return e


def trainer_bundle(tmp_path: Path, *, state: dict | None, last: dict | None = None, events: list[tuple] = (),
                   keep_volume_events: bool = False, phase: str = "Pending") -> Path:
    """multi-attach-v1.36 with the trainer's container state and its node events replaced."""
    root = _copy(tmp_path, "multi-attach-v1.36")
    pods = _read(root, "pods")
    pod = _item(pods, TRAINER.split("/")[1])
    pod["status"]["phase"] = phase
    cs = pod["status"]["containerStatuses"][0]
    if state is None:
        del pod["status"]["containerStatuses"]
    else:
        cs["state"] = state
        cs["lastState"] = last or {}
    _write(root, "pods", pods)
    evs = _read(root, "events")
    template = next(e for e in evs["items"] if e["reason"] == "FailedMount")
    if not keep_volume_events:
        evs["items"] = [e for e in evs["items"] if e["reason"] not in ("FailedMount", "FailedAttachVolume")]
    evs["items"] += [kubelet_event(template, reason=r, message=m, at=t, count=n, **kw) for r, m, t, n, *rest in events
                     for kw in [rest[0] if rest else {}]]
    _write(root, "events", evs)
    return root


def one(root: Path, key: str = TRAINER):
    found = analyse_dir(root)
    assert key in found, sorted(found)
    return found[key]


# -- image-pull (pkg/kubelet/images: ErrImagePull, ImagePullBackOff, InvalidImageName) ---------------------

IMAGE_CASES = {
    "ErrImagePull": ({"waiting": {"reason": "ErrImagePull", "message": PULL_ERROR}},
                     [("Failed", f'Failed to pull image "{IMAGE}": {PULL_ERROR}', "2026-12-01T23:21:30Z", 3),
                      ("Failed", "Error: ErrImagePull", "2026-12-01T23:21:31Z", 3)]),
    "ImagePullBackOff": ({"waiting": {"reason": "ImagePullBackOff",
                                      "message": f'Back-off pulling image "{IMAGE}": ErrImagePull: {PULL_ERROR}'}},
                         [("Failed", f'Failed to pull image "{IMAGE}": {PULL_ERROR}', "2026-12-01T23:21:30Z", 4),
                          ("BackOff", f'Back-off pulling image "{IMAGE}"', "2026-12-01T23:22:40Z", 12, {"type_": "Normal"}),
                          ("Failed", "Error: ImagePullBackOff", "2026-12-01T23:22:40Z", 12)]),
    "InvalidImageName": ({"waiting": {"reason": "InvalidImageName", "message":
                                      'Failed to apply default image tag "nvcr.io/nvidia/pytorch:24.05 -py3": couldn\'t parse '
                                      'image name "nvcr.io/nvidia/pytorch:24.05 -py3": invalid reference format'}},
                         [("InspectFailed", ('Failed to apply default image tag "nvcr.io/nvidia/pytorch:24.05 -py3": couldn\'t '
                                             'parse image name "nvcr.io/nvidia/pytorch:24.05 -py3": invalid reference format'),
                           "2026-12-01T23:21:00Z", 9),
                          ("Failed", "Error: InvalidImageName", "2026-12-01T23:21:00Z", 9)]),
}


@pytest.mark.parametrize("waiting", sorted(IMAGE_CASES))
def test_image_pull_from_the_waiting_reason_with_message_quoted_and_events_newest_first(tmp_path, waiting):
    state, events = IMAGE_CASES[waiting]
    v = one(trainer_bundle(tmp_path, state=state, events=events))
    assert v.word == w.IMAGE_PULL
    message = state["waiting"]["message"]
    assert f'container train waits with {waiting}: "{message}"' == v.reason  # verbatim
    shown = v.evidence["node_events"]
    assert [e["time"] for e in shown] == sorted((e["time"] for e in shown), reverse=True)
    assert all(e["count"] >= 1 and e["component"] == "kubelet" for e in shown)
    assert "agrees" in v.evidence["cross_check"]


def _pull_fails_with(tmp_path, error: str, **spec):
    state = {"waiting": {"reason": "ErrImagePull", "message": error}}
    root = trainer_bundle(tmp_path, state=state, events=[("Failed", f'Failed to pull image "{IMAGE}": {error}',
                                                          "2026-12-01T23:21:30Z", 3)])
    if spec:
        pods = _read(root, "pods")
        _item(pods, TRAINER.split("/")[1])["spec"].update(spec)
        _write(root, "pods", pods)
    return one(root)


def test_image_pull_action_names_the_image_when_the_registry_says_it_does_not_exist(tmp_path):
    # containerd: failed to resolve reference …: not found (the tag is not in the registry)
    v = _pull_fails_with(tmp_path, PULL_ERROR)
    assert v.action == (f"fix the image {IMAGE!r} of container train: nvcr.io says it does not exist (the tag, the "
                        f"digest or the repository)")


def test_image_pull_action_asks_for_a_pull_secret_when_the_registry_refuses(tmp_path):
    error = (f'rpc error: code = Unknown desc = failed to pull and unpack image "{IMAGE}": failed to resolve reference '
             f'"{IMAGE}": failed to authorize: failed to fetch oauth token: unexpected status from GET request to '
             f'https://nvcr.io/proxy_auth?scope=repository%3Anvidia%2Fpytorch%3Apull: 401 Unauthorized')
    v = _pull_fails_with(tmp_path, error)
    assert v.action == (f"give the pod a pull secret that nvcr.io accepts for {IMAGE} (it has no imagePullSecrets), or "
                        f"fix the image {IMAGE!r} of container train")
    # Docker Hub's "pull access denied, repository does not exist or may require authorization" is the same fix
    v = _pull_fails_with(tmp_path / "hub", 'pull access denied, repository does not exist or may require authorization: '
                                           'server message: insufficient_scope', imagePullSecrets=[{"name": "ngc"}])
    assert "(its imagePullSecrets ngc)" in v.action


def test_image_pull_action_names_the_node_and_registry_when_the_node_cannot_reach_it(tmp_path):
    error = (f'rpc error: code = Unknown desc = failed to pull and unpack image "{IMAGE}": failed to do request: Head '
             f'"https://nvcr.io/v2/nvidia/pytorch/manifests/24.05-py3": dial tcp 203.0.113.7:443: i/o timeout')
    v = _pull_fails_with(tmp_path, error)
    assert v.action == "let node g1 reach nvcr.io (DNS, proxy, firewall, the registry's certificate), or use a mirror"


def test_image_pull_wins_over_volume_events(tmp_path):
    # The table's order: `image-pull` before `volume-mount` (node-start.md: the first in the table wins).
    state, events = IMAGE_CASES["ErrImagePull"]
    v = one(trainer_bundle(tmp_path, state=state, events=events, keep_volume_events=True))
    assert v.word == w.IMAGE_PULL


# -- volume-mount (kubelet volumemanager FailedMount; attachdetach-controller FailedAttachVolume) ----------

def test_multi_attach_recording_is_volume_mount_with_both_events_named():
    v = one(RECORDINGS / "multi-attach-v1.36")
    assert v.word == w.VOLUME_MOUNT
    # The kubelet's newer FailedMount only times out waiting for the attach: the attach/detach controller's
    # Multi-Attach event is the reason, with the node volumeattachments.json shows holding the volume.
    assert v.reason.startswith("Multi-Attach: volume pvc-79e085e6-cbfd-47dd-92d5-2cd64986c3bd (claim lab/checkpoints) "
                               "is attached to node g2")
    assert "node g2" in v.next_action
    reasons = [(e["reason"], e["component"]) for e in v.evidence["node_events"]]
    assert reasons == [("FailedMount", "kubelet"), ("FailedAttachVolume", "attachdetach-controller")]
    assert "Multi-Attach error for volume" in v.evidence["node_events"][1]["message"]
    assert v.evidence["waiting"] == [{"container": "train", "reason": "ContainerCreating", "message": None}]


def test_multi_attach_event_alone_is_volume_mount(tmp_path):
    root = _copy(tmp_path, "multi-attach-v1.36")
    evs = _read(root, "events")
    evs["items"] = [e for e in evs["items"] if e["reason"] != "FailedMount"]
    _write(root, "events", evs)
    v = one(root)
    assert v.word == w.VOLUME_MOUNT
    assert v.evidence["deciding_event"]["component"] == "attachdetach-controller"
    assert "Volume is already exclusively attached to one node" in v.reason


def test_failed_mount_alone_is_volume_mount(tmp_path):
    msg = ('MountVolume.SetUp failed for volume "pvc-79e085e6-cbfd-47dd-92d5-2cd64986c3bd" : rpc error: code = Internal '
           'desc = rbd: map failed with error an error (exit status 110) occurred while running rbd args')
    v = one(trainer_bundle(tmp_path, state={"waiting": {"reason": "ContainerCreating"}},
                           events=[("FailedMount", msg, "2026-12-01T23:21:10Z", 6)]))
    assert v.word == w.VOLUME_MOUNT
    assert v.evidence["deciding_event"]["count"] == 6 and msg in v.reason


# -- node-runtime --------------------------------------------------------------------------------------

def test_unexpected_admission_error_recording_names_its_replacement():
    # lifecycle/predicate.go UnexpectedAdmissionError; kubelet.rejectPod writes "Pod was rejected: " + message.
    vs = analyse_dir(RECORDINGS / "unexpected-admission-error-v1.36")
    v = vs[REJECTED]
    assert v.word == w.NODE_RUNTIME
    assert v.target.phase == "Failed"
    assert ('UnexpectedAdmissionError: "Pod was rejected: Allocate failed due to requested number of devices unavailable '
            'for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected"') in v.reason
    assert v.evidence["replaced_by"]["pod"] == REPLACEMENT
    assert v.evidence["rejection"]["event"]["message"].startswith("Allocate failed")  # the event has no prefix
    assert vs[REPLACEMENT].word == w.EXHAUSTED
    # the device plugin on that node is the repair; the controller has already replaced the pod
    assert v.action == (f"repair the device plugin for nvidia.com/gpu on g1; {REPLACEMENT} (Pending) already replaces "
                        f"this pod, which can be deleted")


def test_unexpected_admission_error_no_healthy_devices(tmp_path):
    # devicemanager/manager.go devicesToAllocate: "no healthy devices present; cannot allocate unhealthy devices %s"
    root = _copy(tmp_path, "unexpected-admission-error-v1.36")
    pods = _read(root, "pods")
    text = "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected"
    _item(pods, REJECTED.split("/")[1])["status"]["message"] = "Pod was rejected: " + text
    _write(root, "pods", pods)
    v = one(root, REJECTED)
    assert v.word == w.NODE_RUNTIME
    assert "no healthy devices present" in v.reason and REPLACEMENT in v.reason
    assert v.action.startswith("repair the device plugin for nvidia.com/gpu on g1; ")


def test_out_of_gpu_for_a_pod_placed_with_node_name_is_exhausted(tmp_path):
    # predicate.go: reason OutOf<resource>, message InsufficientResourceError.Error() (capacity is the allocatable).
    root = _copy(tmp_path, "unexpected-admission-error-v1.36")
    pods = _read(root, "pods")
    pod = _item(pods, REJECTED.split("/")[1])
    text = "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 7, capacity: 7"
    pod["status"].update(reason="OutOfnvidia.com/gpu", message="Pod was rejected: " + text)
    del pod["metadata"]["ownerReferences"]  # applied by hand with spec.nodeName: no controller, no replacement
    _write(root, "pods", pods)
    evs = _read(root, "events")
    evs["items"] = [e for e in evs["items"] if e["involvedObject"].get("name") != pod["metadata"]["name"]
                    or e["reason"] == "UnexpectedAdmissionError"]  # no Scheduled event: the scheduler never saw it
    for e in evs["items"]:
        if e["reason"] == "UnexpectedAdmissionError":
            e["reason"], e["message"] = "OutOfnvidia.com/gpu", text
    _write(root, "events", evs)
    v = one(root, REJECTED)
    assert v.word == w.EXHAUSTED
    assert "OutOfnvidia.com/gpu" in v.reason and text in v.reason
    assert v.evidence["placement"]["resource"] == "nvidia.com/gpu"
    assert v.evidence["placement"]["free"] == "0"  # g1: 7 allocatable, pretrain-a holds 7
    assert "spec.nodeName" in v.evidence["placement"]["how"]
    assert "replaced_by" not in v.evidence


def test_crash_loop_after_start_error_is_node_runtime_even_though_the_phase_says_running(tmp_path):
    # kubelet_pods.go getPhase: a waiting container with a last termination counts as stopped, and restartPolicy
    # Always then reports Running; it never started (StartError, exit 128), so it is a target.
    last = {"terminated": {"exitCode": 128, "reason": "StartError", "message": NVIDIA_CLI,
                           "startedAt": "1970-01-01T00:00:00Z", "finishedAt": "2026-12-01T23:21:40Z",
                           "containerID": "containerd://5f1c0e0d2a8f"}}
    state = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container=train "
                         "pod=trainer-6bd8c5b5-4h9dk_lab(b4a9d99c-d758-4472-83b0-87ca7e130352)"}}
    v = one(trainer_bundle(tmp_path, state=state, last=last, phase="Running",
                           events=[("Failed", "Error: " + NVIDIA_CLI, "2026-12-01T23:21:40Z", 3),
                                   ("BackOff", ("Back-off restarting failed container train in pod trainer-6bd8c5b5-4h9dk_lab"
                                                "(b4a9d99c-d758-4472-83b0-87ca7e130352)"), "2026-12-01T23:22:30Z", 5)]))
    assert v.word == w.NODE_RUNTIME
    assert "CrashLoopBackOff" in v.reason and "StartError" in v.reason and "libnvidia-ml.so.1" in v.reason


def test_run_container_error_from_nvidia_container_cli(tmp_path):
    v = one(trainer_bundle(tmp_path, state={"waiting": {"reason": "RunContainerError", "message": NVIDIA_CLI}},
                           events=[("Failed", "Error: " + NVIDIA_CLI, "2026-12-01T23:21:40Z", 2)]))
    assert v.word == w.NODE_RUNTIME
    assert v.reason == f'container train waits with RunContainerError: "{NVIDIA_CLI}"'


def test_failed_create_pod_sandbox_for_a_missing_runtime_handler(tmp_path):
    # kuberuntime_manager.go: "Failed to create pod sandbox: %v"; containerd's error for an unknown handler.
    msg = 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured'
    v = one(trainer_bundle(tmp_path, state={"waiting": {"reason": "ContainerCreating"}},
                           events=[("FailedCreatePodSandBox", msg, "2026-12-01T23:21:05Z", 14)]))
    assert v.word == w.NODE_RUNTIME
    assert msg in v.reason and "count 14" in v.reason


def test_failed_prepare_dynamic_resources_on_a_bound_dra_pod(tmp_path):
    # kuberuntime_manager.go: "Failed to prepare dynamic resources: %v" before the sandbox is created.
    root = _copy(tmp_path, "dra-exhausted-v1.36")
    pods = _read(root, "pods")
    pod = _item(pods, "holder-1")
    pod["status"]["containerStatuses"] = [{"image": pod["spec"]["containers"][0]["image"], "imageID": "", "lastState": {},
                                           "name": pod["spec"]["containers"][0]["name"], "ready": False,
                                           "restartCount": 0, "started": False,
                                           "state": {"waiting": {"reason": "ContainerCreating"}}}]
    _write(root, "pods", pods)
    evs = _read(root, "events")
    template = next(e for e in evs["items"] if e["involvedObject"].get("name") == "holder-1")
    msg = ("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim "
           "holder-1-gpu-x7k2p: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while "
           "dialing: dial unix /var/lib/kubelet/plugins/gpu.example.com/dra.sock: connect: no such file or directory\"")
    evs["items"].append(kubelet_event(template, reason="FailedPrepareDynamicResources", message=msg, at="2026-12-01T23:30:00Z", count=7))
    _write(root, "events", evs)
    vs = analyse_dir(root)
    assert vs["lab/holder-1"].word == w.NODE_RUNTIME and msg in vs["lab/holder-1"].reason
    assert vs["lab/holder-2"].word == w.NODE_SIDE  # the kubelet reported nothing for it


# -- node-side -------------------------------------------------------------------------------------------

def test_missing_configmap_is_node_side_and_named(tmp_path):
    # kuberuntime_container.go: CreateContainerConfigError with the lookup error as the message.
    v = one(trainer_bundle(tmp_path, state={"waiting": {"reason": "CreateContainerConfigError",
                                                         "message": 'configmap "train-config" not found'}},
                           events=[("Failed", 'Error: configmap "train-config" not found', "2026-12-01T23:21:20Z", 5)]))
    assert v.word == w.NODE_SIDE
    assert v.evidence["missing_object"] == "configmap 'train-config' not found"
    assert 'CreateContainerConfigError: "configmap "train-config" not found"' in v.reason  # verbatim
    assert v.action == (f"create ConfigMap {v.target.namespace}/train-config, or fix the name in the pod spec; the "
                        f"kubelet retries on its own")


def test_a_secret_a_volume_needs_named_by_failed_mount_is_node_side_with_what_to_create(tmp_path):
    # volumemanager: MountVolume.SetUp failed for volume "tls" : secret "train-tls" not found
    msg = 'MountVolume.SetUp failed for volume "tls" : secret "train-tls" not found'
    v = one(trainer_bundle(tmp_path, state=None, events=[("FailedMount", msg, "2026-12-01T23:21:10Z", 6)]))
    assert v.word == w.NODE_SIDE and v.evidence["missing_object"] == "secret 'train-tls' not found"
    assert v.action == (f"create Secret {v.target.namespace}/train-tls, or fix the name in the pod spec; the kubelet "
                        f"retries on its own")


def test_bound_to_a_node_not_in_the_bundle_is_node_side(tmp_path):
    root = trainer_bundle(tmp_path, state=None)
    nodes = _read(root, "nodes")
    nodes["items"] = [n for n in nodes["items"] if n["metadata"]["name"] != "g1"]
    _write(root, "nodes", nodes)
    v = one(root)
    assert v.word == w.NODE_SIDE
    assert "g1 is not in the bundle" in v.reason and v.evidence["node"]["in_bundle"] is False
    assert v.action == (f"if node g1 is gone, delete {v.target.key} so its controller makes another; if not, collect "
                        f"the bundle again with nodes")


def test_bound_to_a_not_ready_node_is_node_side(tmp_path):
    root = trainer_bundle(tmp_path, state=None)
    nodes = _read(root, "nodes")
    ready = next(c for c in _item(nodes, "g1")["status"]["conditions"] if c["type"] == "Ready")
    # node_lifecycle_controller.go: the node controller's words once the kubelet stops posting status
    ready.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    _write(root, "nodes", nodes)
    v = one(root)
    assert v.word == w.NODE_SIDE
    assert "NotReady (Ready=Unknown: NodeStatusUnknown)" in v.reason
    assert v.action.startswith("bring node g1 back to Ready (the kubelet and the container runtime on g1")


def test_nothing_reported_is_node_side(tmp_path):
    v = one(trainer_bundle(tmp_path, state=None))
    assert v.word == w.NODE_SIDE and "has reported nothing" in v.reason
    assert v.action == ("look at the kubelet and the container runtime on g1 (kubectl describe node g1, their logs "
                        f"there): they have reported nothing for {v.target.key}")


def _with_init(root: Path, init_state: dict, *, sidecar: bool = False) -> Path:
    """The trainer given an init container `fetch` in `init_state`; its app container waits with PodInitializing, as
    the kubelet reports it while an init container has not completed (kuberuntime: PodInitializing)."""
    pods = _read(root, "pods")
    pod = _item(pods, TRAINER.split("/")[1])
    init = {"name": "fetch", "image": "busybox:1.36", "command": ["sh", "-c", "until nc -z data 5432; do sleep 2; done"]}
    if sidecar:
        init["restartPolicy"] = "Always"
    pod["spec"]["initContainers"] = [init]
    status = copy.deepcopy(pod["status"]["containerStatuses"][0])
    status.update(name="fetch", image="busybox:1.36", state=init_state, lastState={})
    pod["status"]["initContainerStatuses"] = [status]
    _write(root, "pods", pods)
    return root


def test_an_init_container_still_running_is_where_the_pod_waits(tmp_path):
    running = {"running": {"startedAt": "2026-12-01T23:20:00Z"}}
    root = _with_init(trainer_bundle(tmp_path, state={"waiting": {"reason": "PodInitializing"}}), running)
    v = one(root)
    assert v.word == w.NODE_SIDE
    assert v.reason == ("still Pending on g1: its init container fetch is still running, and the app containers start "
                        "only once it completes")
    assert v.action == (f"look at what init container fetch waits for (kubectl logs -n lab {TRAINER.split('/')[1]} -c "
                        f"fetch); the pod starts once it exits 0")


def test_a_running_sidecar_is_not_what_the_pod_waits_for(tmp_path):
    # restartPolicy Always: a sidecar (KEP-753) keeps running beside the app containers; it does not hold them back.
    running = {"running": {"startedAt": "2026-12-01T23:20:00Z"}}
    root = _with_init(trainer_bundle(tmp_path, state={"waiting": {"reason": "PodInitializing"}}), running, sidecar=True)
    v = one(root)
    assert v.word == w.NODE_SIDE and "init container" not in v.reason and "nothing the node reports" in v.reason


def test_node_events_are_kept_by_the_streaming_reader():
    # pipeline.py keeps only events some reader names: the node's reasons (and OutOf<resource>) are among them.
    from analyzer.pipeline import _wanted_event
    for reason in ("FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "UnexpectedAdmissionError",
                   "OutOfnvidia.com/gpu", "Failed", "BackOff", "InspectFailed", "FailedPrepareDynamicResources"):
        assert _wanted_event({"reason": reason}), reason
    assert not _wanted_event({"reason": "Pulled"})


def test_only_pods_that_never_ran_are_kubelet_rejections():
    # A pod that ran and was evicted or failed is not "a pod that will not start": it stays out of the targets.
    from analyzer.model.pod_status import kubelet_rejected, never_started
    rejected = {"phase": "Failed", "reason": "UnexpectedAdmissionError", "message": "Pod was rejected: …"}
    assert kubelet_rejected(rejected)
    ran = {**rejected, "containerStatuses": [{"name": "c", "state": {"terminated": {"reason": "Error", "exitCode": 1}}}]}
    assert not kubelet_rejected(ran)
    assert not kubelet_rejected({"phase": "Failed", "reason": "Evicted"})
    assert not kubelet_rejected({"phase": "Failed", "reason": ["OutOfcpu"]})  # hostile: never raises
    crash_after_run = {"phase": "Running", "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                                                  "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}]}
    assert not never_started(crash_after_run)
    start_error = {"phase": "Running", "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                                              "lastState": {"terminated": {"reason": "StartError", "exitCode": 128}}}]}
    assert never_started(start_error)
