"""`generate_bundle.py --unhealthy-nodes`: GPU nodes under pressure or NotReady (causes.md `node-unhealthy`).

Run last (after `--node-side`), so the rest of the generated world and its truth stay as they are. It adds one
unhealthy GPU node per nine generated GPU nodes (a tenth of the GPU nodes are then unhealthy), each copied from a
generated GPU node of its pool with the accelerator labels kept and the pool label `<pool>-unhealthy` (so the pods
that select a pool keep their words), each in one condition, with the conditions and taints their writers set:
  MemoryPressure / DiskPressure / PIDPressure  the kubelet (pkg/kubelet/nodestatus/setters.go: "KubeletHasInsufficient
                                              Memory", …) and the `…-pressure:NoSchedule` taint (TaintNodesByCondition)
  NotReady      the kubelet's Ready False "KubeletNotReady" (its runtime network not ready), and the node lifecycle
                controller's `not-ready` NoSchedule and NoExecute taints
  Unreachable   the node lifecycle controller (pkg/controller/nodelifecycle): every condition Unknown
                "NodeStatusUnknown", "Kubelet stopped posting node status.", the `unreachable` taints
and, in namespace `xpu-sick` (sorted after every generated namespace), on each unhealthy node the Running pod it had
before its condition began, holding its GPUs (so no pod of the world judged before fits there), and one pending pod
per unhealthy pool asking for its GPU: `node-unhealthy`. Deterministic; nodes.json, pods.json and namespaces.json are appended to in place.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from generate_dra import _uid
from generate_nodeside import CLOCK, EARLIER, GPU_TAINT, POOL_LABEL, _container, _pod, append_to_bundle

NS = "xpu-sick"
SINCE = "2026-11-29T10:31:07Z"
KUBELET = {
    "MemoryPressure": ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    "DiskPressure": ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
}
NOT_READY = ("KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
             "message:Network plugin returns error: cni plugin not initialized")
LOST = ("NodeStatusUnknown", "Kubelet stopped posting node status.")
CONDITIONS = ("MemoryPressure", "DiskPressure", "NotReady", "PIDPressure", "Unreachable")


def _taint(key: str, effect: str) -> dict:
    return {"effect": effect, "key": f"node.kubernetes.io/{key}", **({"timeAdded": SINCE} if effect == "NoExecute" else {})}


def unwell(node: dict, condition: str) -> dict:
    """The node in one condition, as the kubelet and the node lifecycle controller leave it."""
    for c in node["status"].get("conditions") or ():
        kind = c.get("type")
        if condition == "Unreachable" and kind != "NetworkUnavailable":
            c.update(status="Unknown", reason=LOST[0], message=LOST[1], lastTransitionTime=SINCE)
        elif condition == "NotReady" and kind == "Ready":
            c.update(status="False", reason=NOT_READY[0], message=NOT_READY[1], lastTransitionTime=SINCE)
        elif kind == condition:
            c.update(status="True", reason=KUBELET[condition][0], message=KUBELET[condition][1], lastTransitionTime=SINCE)
    if condition in KUBELET:
        taints = [_taint(condition.removesuffix("Pressure").lower() + "-pressure", "NoSchedule")]
    else:
        key = "not-ready" if condition == "NotReady" else "unreachable"
        taints = [_taint(key, "NoSchedule"), _taint(key, "NoExecute")]
    node["spec"]["taints"] = list(node["spec"].get("taints") or []) + taints
    return node


def _gpu_pool(node: dict) -> str | None:
    gpus = node["status"].get("allocatable", {}).get("nvidia.com/gpu", "0")
    return node["metadata"]["labels"].get(POOL_LABEL) if str(gpus) not in ("0", "") else None


def add_unhealthy(root: Path, seed: str | int) -> dict[str, str]:
    """Add the unhealthy nodes and their pods to the bundle at root; return the truth for the new targets."""
    s = str(seed)
    nodes = json.loads((root / "nodes.json").read_text())["items"]
    gpu = [(n, pool) for n in nodes if (pool := _gpu_pool(n)) is not None]
    new_nodes: list[dict] = []
    pools: dict[str, str] = {}  # unhealthy pool -> the resource its pod asks
    for k, (base, pool) in enumerate(gpu[::9]):
        node = copy.deepcopy(base)
        name = f"gke-ml-prod-unhealthy-{pool}-{k:04d}"
        meta = node["metadata"]
        meta.update(name=name, uid=_uid(s, "node", name))
        meta.pop("annotations", None)
        meta["labels"].update({POOL_LABEL: f"{pool}-unhealthy", "kubernetes.io/hostname": name})
        node["spec"] = {"podCIDR": node["spec"].get("podCIDR", "10.99.0.0/24"), "providerID": f"gce://ml-prod/{name}",
                        "taints": [t for t in node["spec"].get("taints") or () if t.get("key") == GPU_TAINT["key"]]}
        node["status"].pop("images", None)
        for a in node["status"].get("addresses") or ():
            if a.get("type") == "Hostname":
                a["address"] = name
        new_nodes.append(unwell(node, CONDITIONS[k % len(CONDITIONS)]))
        pools[f"{pool}-unhealthy"] = "nvidia.com/gpu"
    n_nodes = len(nodes) + len(new_nodes)
    pods, truth = [], {}
    # Each unhealthy node still runs the pod it had when its condition began, holding every GPU: a pod elsewhere in
    # the world that tolerates every taint (operator Exists) and selects this pool's GPUs would otherwise fit here,
    # and the words the rest of the world was judged with would change.
    for k, node in enumerate(new_nodes):
        held = _pod(s, f"held-{k:04d}", "nvidia.com/gpu", node=node["metadata"]["name"], phase="Running",
                    created=EARLIER)
        held["metadata"]["namespace"] = NS
        gpus = str(node["status"]["allocatable"]["nvidia.com/gpu"])
        held["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": gpus},
                                                      "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": gpus}}
        held["status"]["containerStatuses"] = _container({"running": {"startedAt": EARLIER}}, started=True)
        pods.append(held)
    for pool in sorted(pools):
        p = _pod(s, f"wants-{pool}", pools[pool], pool=pool)
        p["metadata"]["namespace"] = NS
        count = sum(1 for n in new_nodes if n["metadata"]["labels"][POOL_LABEL] == pool)
        # The scheduler's message (reasons sorted as strings); condition taints are "untolerated taint(s)" to it.
        msg = (f"0/{n_nodes} nodes are available: {n_nodes - count} node(s) didn't match Pod's node affinity/selector, "
               f"{count} node(s) had untolerated taint(s). preemption: 0/{n_nodes} nodes are available: {n_nodes} "
               "Preemption is not helpful for scheduling.")
        p["status"]["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": CLOCK, "message": msg,
                                      "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}]
        pods.append(p)
        truth[f"{NS}/{p['metadata']['name']}"] = "node-unhealthy"
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"creationTimestamp": CLOCK, "labels": {"kubernetes.io/metadata.name": NS}, "name": NS,
                              "resourceVersion": "1", "uid": _uid(s, "namespace", NS)},
                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    append_to_bundle(root, {"nodes.json": new_nodes, "pods.json": pods, "namespaces.json": [namespace]})
    return truth
