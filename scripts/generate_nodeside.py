"""`generate_bundle.py --node-side`: GPUs under other names, and bound pods the node will not start (node-start.md).

Run after the bundle is written (and after `--dra`), so the rest of the generated world and its truth stay as they
are. Per group (one per 500 nodes, at least one) it adds two nodes, copied from a generated A100 node:
  - a time-sliced node: `nvidia.com/gpu: "0"` beside `nvidia.com/gpu.shared: 32` (the plugin renamed its resource
    after the first boot), labels `nvidia.com/gpu.sharing-strategy=time-slicing`, `nvidia.com/gpu.replicas=8`;
  - a MIG node under the mixed strategy: `nvidia.com/mig-1g.10gb: 14` and `nvidia.com/mig-2g.20gb: 4`, no
    `nvidia.com/gpu`; the first group's node is mid-reconfiguration (`nvidia.com/mig.config.state=pending`);
and, in namespace `xpu-node` (sorted after every generated namespace, `xpu-lab` included), pods with their words:
  resource-name-mismatch  nvidia.com/gpu asked of the time-sliced pool; nvidia.com/mig-3g.40gb of the MIG pool
  image-pull              ErrImagePull (a tag that does not exist)
  volume-mount            a Multi-Attach FailedAttachVolume, then the kubelet's FailedMount
  node-runtime            RunContainerError from nvidia-container-cli; CrashLoopBackOff after StartError (phase
                          Running, as the kubelet reports it); FailedCreatePodSandBox (no runtime for "nvidia");
                          UnexpectedAdmissionError (the kubelet rejected it; its ReplicaSet's replacement runs)
  node-side               CreateContainerConfigError (a missing ConfigMap); bound to a node that is gone
  exhausted               OutOfnvidia.com/mig-1g.10gb (placed with spec.nodeName on a full MIG node)
Statuses and events are written as the kubelet, the attach/detach controller and the scheduler write them. The
recorded scheduler messages of the other pods were written before these nodes joined (they count the old nodes).
Deterministic; nodes.json, pods.json, events.json and namespaces.json are appended to in place.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

from generate_dra import _append_items, _uid

NS = "xpu-node"
CLOCK = "2026-11-29T11:00:00Z"
EARLIER = "2026-11-29T10:40:00Z"
POOL_LABEL = "cloud.google.com/gke-nodepool"
TS_POOL, MIG_POOL = "a100-ts-pool", "a100-migmix-pool"
GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}
IMAGE = "nvcr.io/nvidia/pytorch:24.13-py3"
PULL_ERROR = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{IMAGE}": failed to resolve reference '
              f'"{IMAGE}": {IMAGE}: not found')
NVIDIA_CLI = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
              "unable to start container process: error during container init: error running prestart hook #0: exit status 1, "
              "stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: "
              "driver not loaded: unknown")


def _node(base: dict, name: str, pool: str, resources: dict[str, str], labels: dict[str, str], seed: str) -> dict:
    node = copy.deepcopy(base)
    meta = node["metadata"]
    meta["name"] = name
    meta["uid"] = _uid(seed, "node", name)
    meta["labels"] = {k: v for k, v in meta["labels"].items() if not k.startswith("nvidia.com/mig")}
    meta["labels"].update({POOL_LABEL: pool, "kubernetes.io/hostname": name, **labels})
    meta.pop("annotations", None)
    node["spec"] = {"podCIDR": node["spec"].get("podCIDR", "10.99.0.0/24"), "providerID": f"gce://ml-prod/{name}",
                    "taints": [GPU_TAINT]}
    for part in ("capacity", "allocatable"):
        res = node["status"][part]
        for k in [k for k in res if k.startswith("nvidia.com/")]:
            del res[k]
        res.update(resources)
    node["status"].pop("images", None)
    return node


def _pod(seed: str, name: str, resource: str, *, node: str = "", pool: str = "", phase: str = "Pending",
         owner: str | None = None, created: str = CLOCK, volumes: list | None = None) -> dict:
    container = {"name": "train", "image": IMAGE, "command": ["python", "train.py"],
                 "resources": {"limits": {resource: "1"}, "requests": {"cpu": "4", "memory": "32Gi", resource: "1"}}}
    if volumes:
        container["volumeMounts"] = [{"mountPath": "/data", "name": v["name"]} for v in volumes]
    spec: dict = {"containers": [container], "restartPolicy": "Always", "schedulerName": "default-scheduler",
                  "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
                  "volumes": volumes or []}
    if pool:
        spec["nodeSelector"] = {POOL_LABEL: pool}
    if node:
        spec["nodeName"] = node
    meta: dict = {"creationTimestamp": created, "name": name, "namespace": NS, "resourceVersion": "1",
                  "uid": _uid(seed, "pod", name), "labels": {"app": name.rsplit("-", 1)[0]}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                    "kind": "ReplicaSet", "name": owner, "uid": _uid(seed, "rs", owner)}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": phase, "qosClass": "Burstable", "startTime": created}}


def _container(state: dict, last: dict | None = None, *, started: bool = False) -> list[dict]:
    return [{"image": IMAGE, "imageID": "", "lastState": last or {}, "name": "train", "ready": False,
             "restartCount": 3 if last else 0, "started": started, "state": state}]


def _event(seed: str, pod: dict, reason: str, message: str, count: int, *, component: str = "kubelet",
           type_: str = "Warning") -> dict:
    host = pod["spec"].get("nodeName", "")
    name = f"{pod['metadata']['name']}.{hashlib.sha256((seed + reason + message).encode()).hexdigest()[:16]}"
    return {"apiVersion": "v1", "count": count, "eventTime": None, "firstTimestamp": EARLIER,
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "namespace": NS,
                               "resourceVersion": "1", "uid": pod["metadata"]["uid"]},
            "kind": "Event", "lastTimestamp": CLOCK, "message": message,
            "metadata": {"creationTimestamp": EARLIER, "name": name, "namespace": NS, "resourceVersion": "1",
                         "uid": _uid(seed, "event", name)},
            "reason": reason, "reportingComponent": component, "reportingInstance": host if component == "kubelet" else "",
            "source": {"component": component, **({"host": host} if component == "kubelet" else {})}, "type": type_}


def _unschedulable(pod: dict, resource: str, n_nodes: int, offering: int) -> None:
    # The scheduler's message (reasons sorted as strings): the pool's nodes lack the resource, the rest the selector.
    msg = (f"0/{n_nodes} nodes are available: {offering} Insufficient {resource}, {n_nodes - offering} node(s) didn't match "
           f"Pod's node affinity/selector. preemption: 0/{n_nodes} nodes are available: {n_nodes} Preemption is not "
           f"helpful for scheduling.")
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"lastProbeTime": None, "lastTransitionTime": CLOCK, "message": msg, "reason": "Unschedulable", "status": "False",
         "type": "PodScheduled"}]}


def _group(seed: str, g: int, ts: str, mig: str, n_nodes: int, groups: int) -> tuple[list[dict], list[dict], dict[str, str]]:
    pods: list[dict] = []
    events: list[dict] = []
    truth: dict[str, str] = {}

    def add(pod: dict, word: str, *evs: tuple) -> dict:
        pods.append(pod)
        truth[f"{NS}/{pod['metadata']['name']}"] = word
        for reason, message, count, *kw in evs:
            events.append(_event(seed, pod, reason, message, count, **(kw[0] if kw else {})))
        return pod

    p = _pod(seed, f"wants-gpu-{g}", "nvidia.com/gpu", pool=TS_POOL)
    _unschedulable(p, "nvidia.com/gpu", n_nodes, groups)
    add(p, "resource-name-mismatch")
    p = _pod(seed, f"wants-mig-3g-{g}", "nvidia.com/mig-3g.40gb", pool=MIG_POOL)
    _unschedulable(p, "nvidia.com/mig-3g.40gb", n_nodes, groups)
    add(p, "resource-name-mismatch")

    shared = "nvidia.com/gpu.shared"
    p = _pod(seed, f"pull-{g}", shared, node=ts)
    p["status"]["containerStatuses"] = _container({"waiting": {"reason": "ErrImagePull", "message": PULL_ERROR}})
    add(p, "image-pull", ("Failed", f'Failed to pull image "{IMAGE}": {PULL_ERROR}', 4), ("Failed", "Error: ErrImagePull", 4))

    pv = f"pvc-{_uid(seed, 'pv', str(g))}"
    p = _pod(seed, f"attach-{g}", shared, node=ts, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{g}"}}])
    p["status"]["containerStatuses"] = _container({"waiting": {"reason": "ContainerCreating"}})
    multi = f'Multi-Attach error for volume "{pv}" Volume is already exclusively attached to one node and can\'t be attached to another'
    unmounted = ("Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process "
                 "volumes=[]: context deadline exceeded")
    add(p, "volume-mount", ("FailedAttachVolume", multi, 1, {"component": "attachdetach-controller"}), ("FailedMount", unmounted, 3))

    p = _pod(seed, f"runtime-{g}", shared, node=ts)
    p["status"]["containerStatuses"] = _container({"waiting": {"reason": "RunContainerError", "message": NVIDIA_CLI}})
    add(p, "node-runtime", ("Failed", "Error: " + NVIDIA_CLI, 2))

    p = _pod(seed, f"startfail-{g}", shared, node=ts, phase="Running")
    p["status"]["containerStatuses"] = _container(
        {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off 40s restarting failed container=train pod=startfail-{g}"
                                                              f"_{NS}({p['metadata']['uid']})"}},
        {"terminated": {"exitCode": 128, "reason": "StartError", "message": NVIDIA_CLI, "startedAt": "1970-01-01T00:00:00Z",
                        "finishedAt": CLOCK, "containerID": "containerd://" + hashlib.sha256(p["metadata"]["uid"].encode()).hexdigest()}})
    add(p, "node-runtime", ("Failed", "Error: " + NVIDIA_CLI, 4),
        ("BackOff", f"Back-off restarting failed container train in pod startfail-{g}_{NS}({p['metadata']['uid']})", 9))

    p = _pod(seed, f"sandbox-{g}", shared, node=ts)
    p["status"]["containerStatuses"] = _container({"waiting": {"reason": "ContainerCreating"}})
    sandbox = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for '
               '"nvidia" is configured')
    add(p, "node-runtime", ("FailedCreatePodSandBox", sandbox, 17))

    p = _pod(seed, f"config-{g}", shared, node=ts)
    p["status"]["containerStatuses"] = _container({"waiting": {"reason": "CreateContainerConfigError",
                                                               "message": f'configmap "train-config-{g}" not found'}})
    add(p, "node-side", ("Failed", f'Error: configmap "train-config-{g}" not found', 6))

    add(_pod(seed, f"gone-{g}", shared, node=f"gke-ml-prod-a100-ts-pool-gone-{g:04d}"), "node-side")

    mig1 = "nvidia.com/mig-1g.10gb"
    rejected = _pod(seed, f"infer-{g}-7d4b9", mig1, node=mig, phase="Failed", owner=f"infer-{g}", created=EARLIER)
    text = f"Allocate failed due to requested number of devices unavailable for {mig1}. Requested: 1, Available: 0, which is unexpected"
    rejected["status"].update(reason="UnexpectedAdmissionError", message="Pod was rejected: " + text)
    add(rejected, "node-runtime", ("UnexpectedAdmissionError", text, 1))
    replacement = _pod(seed, f"infer-{g}-x2k8q", mig1, node=mig, phase="Running", owner=f"infer-{g}")
    replacement["status"]["containerStatuses"] = _container({"running": {"startedAt": CLOCK}}, started=True)
    pods.append(replacement)  # runs: not a target

    p = _pod(seed, f"pinned-{g}", mig1, node=mig, phase="Failed")
    text = f"Node didn't have enough resource: {mig1}, requested: 1, used: 14, capacity: 14"
    p["status"].update(reason=f"OutOf{mig1}", message="Pod was rejected: " + text)
    add(p, "exhausted", (f"OutOf{mig1}", text, 1))
    return pods, events, truth


def add_node_side(root: Path, seed: int) -> dict[str, str]:
    """Add the nodes, pods and events to the bundle at root; return the truth for the new targets."""
    s = str(seed)
    nodes = json.loads((root / "nodes.json").read_text())["items"]
    base = next(n for n in nodes if "nvidia.com/gpu" in n["status"].get("capacity", {}))
    groups = max(1, len(nodes) // 500)
    new_nodes: list[dict] = []
    pods: list[dict] = []
    events: list[dict] = []
    truth: dict[str, str] = {}
    total = len(nodes) + 2 * groups
    for g in range(groups):
        ts, mig = f"gke-ml-prod-ts-a100-pool-{g:04d}", f"gke-ml-prod-ts-migmix-pool-{g:04d}"
        new_nodes.append(_node(base, ts, TS_POOL, {"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "32"},
                               {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "8",
                                "nvidia.com/mig.strategy": "single", "nvidia.com/mig.config.state": "success"}, s))
        new_nodes.append(_node(base, mig, MIG_POOL, {"nvidia.com/mig-1g.10gb": "14", "nvidia.com/mig-2g.20gb": "4"},
                               {"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "all-balanced",
                                "nvidia.com/mig.config.state": "pending" if g == 0 else "success",
                                "nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/gpu.replicas": "1"}, s))
        more = _group(s, g, ts, mig, total, groups)
        pods += more[0]
        events += more[1]
        truth.update(more[2])
    new_nodes.sort(key=lambda n: n["metadata"]["name"])
    pods.sort(key=lambda p: p["metadata"]["name"])
    events.sort(key=lambda e: e["metadata"]["name"])
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"creationTimestamp": CLOCK, "labels": {"kubernetes.io/metadata.name": NS}, "name": NS,
                              "resourceVersion": "1", "uid": _uid(s, "namespace", NS)},
                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    append_to_bundle(root, {"nodes.json": new_nodes, "pods.json": pods, "events.json": events,
                            "namespaces.json": [namespace]})
    return truth


def append_to_bundle(root: Path, added: dict[str, list[dict]]) -> None:
    """Append items to the bundle's List files in place, and reseal manifest.json (sizes, sha256, item counts)."""
    for file, items in added.items():
        _append_items(root / file, items)
    manifest_path = root / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for e in manifest["files"]:
        if e["path"] in added:
            data = (root / e["path"]).read_bytes()
            e["bytes"], e["sha256"] = len(data), hashlib.sha256(data).hexdigest()
            e["items"] += len(added[e["path"]])
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
