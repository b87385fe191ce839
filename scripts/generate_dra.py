"""`generate_bundle.py --dra`: add Dynamic Resource Allocation objects to a generated bundle (dra.md).

Run after the bundle is written, so the device-plugin world (and its truth) is untouched: the DRA pods live in
their own namespace `xpu-lab` (sorted after every generated namespace, so pods.json stays in API-server order),
ask for no CPU or memory (only a pod slot), tolerate every taint and are pinned by hostname to a Ready,
uncordoned GPU node with free pod slots. One DeviceClass (driver gpu.example.com); per group of four nodes:
  A  a slice of 2 devices, both allocated to two Running holders (claims with status.allocation) + a waiter: exhausted
  B  a slice of 2 free h100 devices + a waiter whose selector asks for a100: device-selector-mismatch
  C  no slice + a waiter: no-gpu-node
  D  a slice of 2 free devices + a waiter asking for 4: exhausted (too-large)
The objects start from the shared recording's shapes (shared/bundles/dra-exhausted-v1.36). Deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

NS = "xpu-lab"
CLASS = "gpu.example.com"
CLOCK = "2026-11-29T11:00:00Z"
NODE_NAME = re.compile(rb'^\s*"nodeName": "([^"]+)",?$')


def _uid(seed: str, *parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("/".join((seed, *parts)).encode()).digest()[:16], version=4))


def _pods_per_node(pods: Path) -> dict[str, int]:
    """Pods bound per node, by a line scan (pods.json can be 1.6 GB: never loaded whole)."""
    out: dict[str, int] = {}
    with pods.open("rb") as f:
        for line in f:
            m = NODE_NAME.match(line)
            if m:
                name = m.group(1).decode()
                out[name] = out.get(name, 0) + 1
    return out


def _usable(node: dict, used: int) -> bool:
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in node["status"].get("conditions") or ())
    free = int(node["status"]["allocatable"].get("pods", "0")) - used
    return ready and not node["spec"].get("unschedulable") and free >= 8


def _device(i: int, node: str, model: str) -> dict:
    return {"attributes": {"index": {"int": i}, "model": {"string": model}, "uuid": {"string": f"GPU-{node}-{i}"}},
            "capacity": {"memory": {"value": "80Gi"}}, "name": f"gpu-{i}"}


def _slice(seed: str, node: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"creationTimestamp": CLOCK, "generation": 1, "name": f"{node}-{CLASS}", "resourceVersion": "1",
                         "uid": _uid(seed, "slice", node)},
            "spec": {"devices": [_device(0, node, "h100"), _device(1, node, "h100")], "driver": CLASS, "nodeName": node,
                     "pool": {"generation": 1, "name": node, "resourceSliceCount": 1}}}


def _request(count: int = 1, selector: str | None = None) -> dict:
    exactly: dict = {"allocationMode": "ExactCount", "count": count, "deviceClassName": CLASS}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"devices": {"requests": [{"exactly": exactly, "name": "gpu"}]}}


def _template(seed: str, name: str, spec: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"creationTimestamp": CLOCK, "name": name, "namespace": NS, "resourceVersion": "1",
                         "uid": _uid(seed, "template", name)},
            "spec": {"spec": spec}}


def _pod(seed: str, name: str, node: str, claim: dict, *, bound: bool, n_nodes: int) -> dict:
    status: dict
    if bound:
        status = {"phase": "Running", "qosClass": "BestEffort", "startTime": CLOCK,
                  "conditions": [{"lastTransitionTime": CLOCK, "status": "True", "type": "PodScheduled"}]}
    else:
        msg = (f"0/{n_nodes} nodes are available: 1 cannot allocate all claims, {n_nodes - 1} node(s) didn't match "
               f"Pod's node affinity/selector. still not schedulable, preemption: 0/{n_nodes} nodes are available: "
               f"{n_nodes} Preemption is not helpful for scheduling.")
        status = {"phase": "Pending", "qosClass": "BestEffort",
                  "conditions": [{"lastProbeTime": None, "lastTransitionTime": CLOCK, "message": msg,
                                  "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}]}
    spec: dict = {"containers": [{"command": ["sleep", "infinity"], "image": "registry.k8s.io/pause:3.10", "name": "cuda",
                                  "resources": {"claims": [{"name": "gpu"}]}}],
                  "nodeSelector": {"kubernetes.io/hostname": node}, "resourceClaims": [{"name": "gpu", **claim}],
                  "restartPolicy": "Always", "schedulerName": "default-scheduler",
                  "tolerations": [{"operator": "Exists"}]}
    if bound:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"creationTimestamp": CLOCK, "name": name, "namespace": NS, "resourceVersion": "1",
                         "uid": _uid(seed, "pod", name)},
            "spec": spec, "status": status}


def _held_claim(seed: str, pod: dict, node: str, device: str) -> dict:
    name = f"{pod['metadata']['name']}-gpu"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"creationTimestamp": CLOCK, "name": name, "namespace": NS, "resourceVersion": "1",
                         "uid": _uid(seed, "claim", name)},
            "spec": _request(),
            "status": {"allocation": {"allocationTimestamp": CLOCK,
                                      "devices": {"results": [{"device": device, "driver": CLASS, "pool": node, "request": "gpu"}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                       "reservedFor": [{"name": pod["metadata"]["name"], "resource": "pods", "uid": pod["metadata"]["uid"]}]}}


def _write_list(path: Path, items: list[dict]) -> None:
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    path.write_text(json.dumps(doc, indent=4, sort_keys=True) + "\n")


def _append_items(path: Path, items: list[dict]) -> None:
    """Append items at the end of a kubectl List file in place (its tail is `    ],\\n    "kind": "List", …`)."""
    tail_marker = b'\n    ],\n    "kind": "List"'
    with path.open("r+b") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 4096))
        chunk = f.read()
        at = chunk.rfind(tail_marker)
        assert at >= 0, f"{path}: not a kubectl List tail"
        tail = chunk[at:]
        empty = chunk[:at].rstrip().endswith(b"[")
        f.seek(size - len(chunk) + at)
        body = ",\n".join("\n".join("        " + line for line in json.dumps(i, indent=4, sort_keys=True).splitlines())
                          for i in items)
        f.write((b"\n" if empty else b",\n") + body.encode() + tail)
        f.truncate()


def _file_entry(root: Path, kind: str, items: int) -> dict:
    data = (root / f"{kind}.json").read_bytes()
    namespaced = kind in ("resourceclaims", "resourceclaimtemplates")
    return {"path": f"{kind}.json", "kind": kind, "status": "ok",
            "command": ["kubectl", "get", f"{kind}.resource.k8s.io"] + (["-A"] if namespaced else []) + ["-o", "json"],
            "exitStatus": 0, "stderr": "", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "items": items}


def add_dra(root: Path, seed: int) -> dict[str, str]:
    """Add the DRA objects and pods to the bundle at root; return the truth for the new targets."""
    s = str(seed)
    nodes = json.loads((root / "nodes.json").read_text())["items"]
    used = _pods_per_node(root / "pods.json")
    gpu_nodes = [n for n in nodes if "nvidia.com/gpu" in n["status"].get("allocatable", {})
                 and _usable(n, used.get(n["metadata"]["name"], 0))]
    groups = max(1, len(gpu_nodes) // 40)  # ~10% of the usable GPU nodes, four per group
    chosen = sorted(gpu_nodes, key=lambda n: n["metadata"]["name"])[: 4 * groups]
    truth: dict[str, str] = {}
    pods: list[dict] = []
    claims: list[dict] = []
    slices: list[dict] = []
    templates = [_template(s, "one-gpu", _request()), _template(s, "four-gpus", _request(4)),
                 _template(s, "a100", _request(1, f'device.attributes["{CLASS}"].model == "a100"'))]
    for g in range(len(chosen) // 4):
        a, b, c, d = (n["metadata"]["name"] for n in chosen[4 * g: 4 * g + 4])
        slices += [_slice(s, a), _slice(s, b), _slice(s, d)]
        for i in (0, 1):
            holder = _pod(s, f"holder-{g}-{i}", a, {"resourceClaimName": f"holder-{g}-{i}-gpu"}, bound=True, n_nodes=len(nodes))
            pods.append(holder)
            claims.append(_held_claim(s, holder, a, f"gpu-{i}"))
        for name, node, template, word in ((f"waiter-{g}", a, "one-gpu", "exhausted"),
                                           (f"wants-a100-{g}", b, "a100", "device-selector-mismatch"),
                                           (f"no-slice-{g}", c, "one-gpu", "no-gpu-node"),
                                           (f"too-large-{g}", d, "four-gpus", "exhausted")):
            pods.append(_pod(s, name, node, {"resourceClaimTemplateName": template}, bound=False, n_nodes=len(nodes)))
            truth[f"{NS}/{name}"] = word
    pods.sort(key=lambda p: p["metadata"]["name"])
    claims.sort(key=lambda c: c["metadata"]["name"])
    slices.sort(key=lambda x: x["metadata"]["name"])
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"creationTimestamp": CLOCK, "generation": 1, "name": CLASS, "resourceVersion": "1",
                                 "uid": _uid(s, "class")},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{CLASS}"'}}]}}
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"creationTimestamp": CLOCK, "labels": {"kubernetes.io/metadata.name": NS}, "name": NS,
                              "resourceVersion": "1", "uid": _uid(s, "namespace")},
                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    _append_items(root / "pods.json", pods)
    _append_items(root / "namespaces.json", [namespace])
    lists = {"resourceclaims": claims, "resourceclaimtemplates": templates, "deviceclasses": [device_class],
             "resourceslices": slices}
    for kind, items in lists.items():
        _write_list(root / f"{kind}.json", items)
    manifest = json.loads((root / "manifest.json").read_text())
    for e in manifest["files"]:
        if e["path"] in ("pods.json", "namespaces.json"):
            data = (root / e["path"]).read_bytes()
            e["bytes"], e["sha256"] = len(data), hashlib.sha256(data).hexdigest()
            e["items"] += len(pods) if e["path"] == "pods.json" else 1
    manifest["files"] += [_file_entry(root, kind, len(items)) for kind, items in lists.items()]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return truth
