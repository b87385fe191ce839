"""The generator's volume, inter-pod, spread and host-port world (filters.md), added to a written bundle.

- StorageClasses `premium-rwo` (Immediate, the GCE PD CSI driver), `balanced-wffc` (WaitForFirstConsumer, the same
  driver) and `local-nvme` (WaitForFirstConsumer, no provisioner); a PersistentVolumeClaim for every claim a pod's
  volumes name: Bound to a CSI PersistentVolume in its node's zone for a bound pod, Pending for a pending one (its
  class binds Immediate: `volume-unbound`, as the scheduler's message in the bundle already says), or as the
  generator's claim plan says (bundlegen/filters_scenarios.py): a local-nvme claim with an Available local volume
  pinned to a CPU node, a balanced-wffc claim left to the provisioner, a dataset bound to a volume in another zone
  (by node affinity, or by the zone label of an in-tree disk);
- a quarter of the bound pods of a controller carry required pod anti-affinity on hostname and a DoNotSchedule zone spread
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
BOUND_SHARE = 0.25  # of the bound pods of a controller (DaemonSets aside): with the volumes, a fifth of all pods
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


def _claim(ns: str, name: str, pv: str | None, cls: str = "premium-rwo", size: str = "100Gi") -> dict:
    meta: dict = {"name": name, "namespace": ns, "uid": f"pvc-{ns}-{name}"}
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                  "storageClassName": cls, "volumeMode": "Filesystem"}
    if pv:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = pv
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound" if pv else "Pending"}}


def _required(key: str, value: str) -> dict:
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}


def _volume(name: str, ns: str, claim: str, zone: str | None, size: str = "100Gi", by: str = "pv-affinity") -> dict:
    """A bound GCE persistent disk: CSI with node affinity to its zone, or (by zone label) an in-tree disk whose
    zone is only its label, as volumes made before the CSI migration are."""
    meta: dict = {"name": name}
    spec: dict = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}, "storageClassName": "premium-rwo",
                  "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim}}
    if by == "volume-zone":
        meta["labels"] = {ZONE: zone}
        spec["gcePersistentDisk"] = {"fsType": "ext4", "pdName": name}
    else:
        spec["csi"] = {"driver": DRIVER, "volumeHandle": f"projects/p/disks/{name}"}
        if zone:
            spec["nodeAffinity"] = _required(ZONE, zone)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": "Bound"}}


def _local(name: str, node: str, size: str) -> dict:
    """An Available local volume (the static provisioner's shape): usable only on its node."""
    spec = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}, "storageClassName": "local-nvme",
            "local": {"path": "/mnt/disks/ssd0"}, "nodeAffinity": _required("kubernetes.io/hostname", node),
            "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Filesystem"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": "Available"}}


def _planned(ns: str, name: str, plan: dict, claims: list[dict], volumes: list[dict]) -> None:
    """The claim (and its volume) as the generator planned it (bundlegen/filters_scenarios.py)."""
    size = plan["size"]
    if "zone" in plan:
        pv = f"pvc-{len(volumes):06d}"
        volumes.append(_volume(pv, ns, name, plan["zone"], size, plan["by"]))
        claims.append(_claim(ns, name, pv, plan["class"], size))
        return
    claims.append(_claim(ns, name, None, plan["class"], size))
    if "local_on" in plan:
        volumes.append(_local(f"local-pv-{len(volumes):06d}", plan["local_on"], size))


def add_filters(root: Path, seed: int, plan: dict[tuple[str, str], dict] | None = None) -> None:
    rng = random.Random(seed * 7919 + 20)
    plan = plan or {}
    seen: set[tuple[str, str]] = set()
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
            if (ns, name) in seen:
                continue  # a claim several pods share (a dataset)
            seen.add((ns, name))
            if (ns, name) in plan:
                _planned(ns, name, plan[(ns, name)], claims, volumes)
            elif bound:
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
        elif bound and owner and rng.random() < BOUND_SHARE and not spec.get("affinity", {}).get("podAntiAffinity"):
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
        "storageclasses": [_class("premium-rwo", DRIVER, "Immediate"), _class("balanced-wffc", DRIVER, "WaitForFirstConsumer"),
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
