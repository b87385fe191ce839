"""The generator's volume, inter-pod, spread and host-port world (filters.md), added to a written bundle.

- StorageClasses `premium-rwo` (Immediate, the GCE PD CSI driver) and `local-nvme` (WaitForFirstConsumer, no
  provisioner); a PersistentVolumeClaim for every claim a pod's volumes name: Bound to a CSI PersistentVolume in
  its node's zone for a bound pod, Pending for a pending one (its class binds Immediate: `volume-unbound`, as the
  scheduler's message in the bundle already says);
- a fifth of the bound pods carry required pod anti-affinity on hostname and a DoNotSchedule zone spread
  constraint, each selecting only its own workload's pods (a label no target has), so every target's inter-pod
  and spread checks count them without changing its word; DaemonSet pods hold host port 9100;
- CSINodes with a CSI attach limit, and the CSIDriver.
Run by generate_bundle.py after the rest is written (its targets' words are unchanged but for the ones named).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analyzer.bundle.catalog import BY_NAME

DRIVER = "pd.csi.storage.gke.io"
ZONE = "topology.kubernetes.io/zone"


def _list(items: list[dict]) -> dict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def _write(root: Path, kind: str, items: list[dict]) -> None:
    (root / f"{kind}.json").write_text(json.dumps(_list(items), indent=4, sort_keys=True) + "\n")


def _entry(root: Path, kind: str, items: int) -> dict:
    data = (root / f"{kind}.json").read_bytes()
    return {"path": f"{kind}.json", "kind": kind, "status": "ok", "command": list(BY_NAME[kind].command),
            "exitStatus": 0, "stderr": "", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "items": items,
            "redactions": {"env-value": 0, "last-applied-configuration": 0}}


def _class(name: str, provisioner: str, mode: str) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": mode}


def _claim(ns: str, name: str, pv: str | None) -> dict:
    meta: dict = {"name": name, "namespace": ns, "uid": f"pvc-{ns}-{name}"}
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Gi"}},
                  "storageClassName": "premium-rwo", "volumeMode": "Filesystem"}
    if pv:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = pv
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound" if pv else "Pending"}}


def _volume(name: str, ns: str, claim: str, zone: str | None) -> dict:
    meta: dict = {"name": name}
    spec: dict = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"}, "storageClassName": "premium-rwo",
                  "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim},
                  "csi": {"driver": DRIVER, "volumeHandle": f"projects/p/disks/{name}"}}
    if zone:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": "Bound"}}


def add_filters(root: Path, seed: int) -> None:
    rng = random.Random(seed * 7919 + 20)
    doc = json.loads((root / "pods.json").read_text())
    nodes = {n["metadata"]["name"]: n for n in json.loads((root / "nodes.json").read_text())["items"]}
    claims: list[dict] = []
    volumes: list[dict] = []
    changed = False
    for pod in doc["items"]:
        meta, spec = pod["metadata"], pod["spec"]
        ns, node = meta["namespace"], spec.get("nodeName") or ""
        bound = bool(node) and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        for v in spec.get("volumes") or ():
            pvc = v.get("persistentVolumeClaim")
            if not pvc:
                continue
            name = pvc["claimName"]
            if bound:
                pv = f"pvc-{len(volumes):06d}"
                zone = (nodes.get(node) or {}).get("metadata", {}).get("labels", {}).get(ZONE)
                volumes.append(_volume(pv, ns, name, zone))
                claims.append(_claim(ns, name, pv))
            else:
                claims.append(_claim(ns, name, None))
        owner = next((r.get("kind") for r in meta.get("ownerReferences") or () if r.get("controller")), None)
        if bound and owner == "DaemonSet":
            spec["containers"][0].setdefault("ports", []).append({"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"})
            changed = True
        elif bound and owner and rng.random() < 0.2 and not spec.get("affinity", {}).get("podAntiAffinity"):
            group = f"{ns}.{meta.get('generateName') or meta['name']}"
            meta.setdefault("labels", {})["gpu-triage.example/spread-group"] = group[:63].strip("-.")
            select = {"matchLabels": {"gpu-triage.example/spread-group": group[:63].strip("-.")}}
            spec.setdefault("affinity", {})["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": select, "topologyKey": "kubernetes.io/hostname"}]}
            spec["topologySpreadConstraints"] = [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": select}]
            changed = True
    if changed:
        (root / "pods.json").write_text(json.dumps(doc, indent=4, sort_keys=True) + "\n")
    lists = {
        "persistentvolumeclaims": sorted(claims, key=lambda c: (c["metadata"]["namespace"], c["metadata"]["name"])),
        "persistentvolumes": volumes,
        "storageclasses": [_class("premium-rwo", DRIVER, "Immediate"),
                           _class("local-nvme", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")],
        "csinodes": [{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
                      "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": 127}}]}}
                     for name in nodes],
        "csidrivers": [{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
                        "spec": {"attachRequired": True, "storageCapacity": False}}],
        "csistoragecapacities": [], "volumeattachments": []}
    for kind, items in lists.items():
        items.sort(key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"]))  # as the API server lists
        _write(root, kind, items)
    manifest = json.loads((root / "manifest.json").read_text())
    for e in manifest["files"]:
        if e["path"] == "pods.json":
            data = (root / "pods.json").read_bytes()
            e["bytes"], e["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    manifest["files"] += [_entry(root, kind, len(items)) for kind, items in lists.items()]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
