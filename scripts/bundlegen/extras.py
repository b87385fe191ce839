"""After the bundle is written: the truth file and the stuck DaemonSet."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bundlegen.common import ts
from bundlegen.generator import Generator  # noqa: TC001


def write_truth(gen: Generator, path: Path) -> None:
    lines = [f"{k}\t{v}\n" for k, v in sorted(gen.truth.items())]
    path.write_text("".join(lines))


def add_stuck_daemonset(out: Path) -> int:
    """The stuck DaemonSet rollout (one pod shape per node, common after a GPU driver upgrade): one Pending pod
    of DaemonSet gpu-operator/nvidia-driver-daemonset per node, each pinned to its own node the way the
    DaemonSet controller pins them (required node affinity `matchFields metadata.name In [node]`,
    kubernetes pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity), tolerating every taint
    and asking more memory than any node has, so every pod needs the per-node funnel. Appended to
    pods.json; the manifest's size, sha256 and item count for pods.json are updated. Returns the count."""

    import orjson

    nodes = [n["metadata"]["name"] for n in orjson.loads((out / "nodes.json").read_bytes())["items"]]
    doc = orjson.loads((out / "pods.json").read_bytes())
    total = len(nodes)
    ds_uid = "5d0c1a2b-0000-4000-8000-00000000d5d5"
    for i, node in enumerate(nodes):
        doc["items"].append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"nvidia-driver-daemonset-{i:05d}", "namespace": "gpu-operator",
                         "uid": f"5d0c1a2b-{i:04x}-4000-8000-{i:012x}", "creationTimestamp": ts(600),
                         "labels": {"app": "nvidia-driver-daemonset", "controller-revision-hash": "7c9d5b8f6d"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "nvidia-driver-daemonset",
                                              "uid": ds_uid, "controller": True, "blockOwnerDeletion": True}]},
            "spec": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
                "containers": [{"name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:570.86.15-ubuntu22.04",
                                "resources": {"requests": {"cpu": "500m", "memory": "4Ti"}}}],
                "tolerations": [{"operator": "Exists"}],
                "priorityClassName": "system-node-critical", "priority": 2000001000,
                "schedulerName": "default-scheduler"},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": ts(590),
                "message": f"0/{total} nodes are available: 1 Insufficient memory, {total - 1} node(s) didn't match "
                           f"Pod's node affinity/selector. preemption: 0/{total} nodes are available: 1 No preemption "
                           f"victims found for incoming pod, {total - 1} Preemption is not helpful for scheduling."}],
                "qosClass": "Burstable"},
        })
    data = orjson.dumps(doc)
    (out / "pods.json").write_bytes(data)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        manifest = orjson.loads(manifest_path.read_bytes())
        for e in manifest.get("files") or ():
            if e.get("path") == "pods.json":
                e["bytes"] = len(data)
                e["sha256"] = hashlib.sha256(data).hexdigest()
                if "items" in e:
                    e["items"] = len(doc["items"])
        manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return total
