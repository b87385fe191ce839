"""Server-side Table rows for the storage kinds, as the real API server serves them.

Built-in kinds: kubernetes pkg/printers/internalversion/printers.go (persistentVolumeColumnDefinitions,
persistentVolumeClaimColumnDefinitions, storageClassColumnDefinitions, volumeAttachmentColumnDefinitions,
csiNodeColumnDefinitions, csiDriverColumnDefinitions, csiStorageCapacityColumnDefinitions and their print functions). The custom resources' columns are in replay/crd_tables.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from analyzer.bundle.catalog import (CSIDRIVERS, CSINODES, CSISTORAGECAPACITIES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES,
                                     STORAGECLASSES, VOLUMEATTACHMENTS)
from analyzer.replay.cells import Column, Row, age, as_dict, as_list, as_str, column, dig

NAME = ("Name", "string", 0)
AGE = column("Age")
_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
_DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def _modes(modes: object) -> str:
    """storage/util GetAccessModesAsString: the short names, in the order kubectl gives them."""
    have = {as_str(m) for m in as_list(modes)}
    return ",".join(short for long, short in _MODES.items() if long in have)


def _phase(item: dict) -> str:
    return "Terminating" if dig(item, "metadata", "deletionTimestamp") else as_str(dig(item, "status", "phase"))


def _class_of_claim(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: spec.storageClassName, else the beta annotation."""
    cls = dig(pvc, "spec", "storageClassName")
    if cls is None:
        cls = as_dict(dig(pvc, "metadata", "annotations")).get("volume.beta.kubernetes.io/storage-class")
    return as_str(cls)


def pvc_row(pvc: dict, now: datetime) -> Row:
    """printPersistentVolumeClaim: capacity and access modes only once bound to a volume."""
    capacity, modes = "", ""
    if as_str(dig(pvc, "spec", "volumeName")):
        modes = _modes(dig(pvc, "status", "accessModes"))
        capacity = as_str(as_dict(dig(pvc, "status", "capacity")).get("storage"))
    vac = as_str(dig(pvc, "spec", "volumeAttributesClassName")) or "<unset>"
    return [as_str(dig(pvc, "metadata", "name")), _phase(pvc), as_str(dig(pvc, "spec", "volumeName")), capacity, modes,
            _class_of_claim(pvc), vac, age(pvc, now), as_str(dig(pvc, "spec", "volumeMode")) or "<unset>"]


def pv_row(pv: dict, now: datetime) -> Row:
    """printPersistentVolume: the claim as namespace/name."""
    ref = as_dict(dig(pv, "spec", "claimRef"))
    claim = f"{as_str(ref.get('namespace'))}/{as_str(ref.get('name'))}" if ref else ""
    cls = as_str(dig(pv, "spec", "storageClassName")) or as_str(
        as_dict(dig(pv, "metadata", "annotations")).get("volume.beta.kubernetes.io/storage-class"))
    return [as_str(dig(pv, "metadata", "name")), as_str(as_dict(dig(pv, "spec", "capacity")).get("storage")),
            _modes(dig(pv, "spec", "accessModes")), as_str(dig(pv, "spec", "persistentVolumeReclaimPolicy")), _phase(pv),
            claim, cls, as_str(dig(pv, "spec", "volumeAttributesClassName")) or "<unset>",
            as_str(dig(pv, "status", "reason")), age(pv, now), as_str(dig(pv, "spec", "volumeMode")) or "<unset>"]


def storageclass_row(sc: dict, now: datetime) -> Row:
    """printStorageClass: "(default)" after the default class's name; the API's defaults when unset."""
    name = as_str(dig(sc, "metadata", "name"))
    annotations = as_dict(dig(sc, "metadata", "annotations"))
    if any(annotations.get(k) == "true" for k in _DEFAULT_CLASS):
        name += " (default)"
    return [name, as_str(sc.get("provisioner")), as_str(sc.get("reclaimPolicy")) or "Delete",
            as_str(sc.get("volumeBindingMode")) or "Immediate", sc.get("allowVolumeExpansion") is True, age(sc, now)]


def volumeattachment_row(va: dict, now: datetime) -> Row:
    return [as_str(dig(va, "metadata", "name")), as_str(dig(va, "spec", "attacher")),
            as_str(dig(va, "spec", "source", "persistentVolumeName")), as_str(dig(va, "spec", "nodeName")),
            dig(va, "status", "attached") is True, age(va, now)]


def _flag(value: object, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def csidriver_row(d: dict, now: datetime) -> Row:
    """printCSIDriver: the API's defaults where unset (attachRequired true), `<unset>` without tokenRequests,
    `<none>` without volumeLifecycleModes."""
    spec = as_dict(d.get("spec"))
    tokens = spec.get("tokenRequests")
    audiences = ",".join(as_str(as_dict(t).get("audience")) for t in as_list(tokens)) if tokens is not None else "<unset>"
    modes = ",".join(as_str(m) for m in as_list(spec.get("volumeLifecycleModes"))) or "<none>"
    return [as_str(dig(d, "metadata", "name")), _flag(spec.get("attachRequired"), True),
            _flag(spec.get("podInfoOnMount"), False), _flag(spec.get("storageCapacity"), False), audiences,
            _flag(spec.get("requiresRepublish"), False), modes, age(d, now)]


STORAGE_TABLES: dict[str, tuple[list[Column], Callable[[dict, datetime], Row]]] = {
    PERSISTENTVOLUMECLAIMS.name: ([NAME, column("Status"), column("Volume"), column("Capacity"), column("Access Modes"),
                                   column("StorageClass"), column("VolumeAttributesClass"), AGE,
                                   column("VolumeMode", priority=1)], pvc_row),
    PERSISTENTVOLUMES.name: ([NAME, column("Capacity"), column("Access Modes"), column("Reclaim Policy"), column("Status"),
                              column("Claim"), column("StorageClass"), column("VolumeAttributesClass"), column("Reason"),
                              AGE, column("VolumeMode", priority=1)], pv_row),
    STORAGECLASSES.name: ([NAME, column("Provisioner"), column("ReclaimPolicy"), column("VolumeBindingMode"),
                           column("AllowVolumeExpansion"), AGE], storageclass_row),
    VOLUMEATTACHMENTS.name: ([NAME, column("Attacher"), column("PV"), column("Node"), column("Attached", "boolean"), AGE],
                             volumeattachment_row),
    CSINODES.name: ([NAME, column("Drivers", "integer"), AGE],
                    lambda n, now: [as_str(dig(n, "metadata", "name")), len(as_list(dig(n, "spec", "drivers"))), age(n, now)]),
    CSIDRIVERS.name: ([NAME, column("AttachRequired", "boolean"), column("PodInfoOnMount", "boolean"),
                       column("StorageCapacity", "boolean"), column("TokenRequests"), column("RequiresRepublish", "boolean"),
                       column("Modes"), AGE], csidriver_row),
    # No Age column: printers.go gives CSIStorageCapacity none.
    CSISTORAGECAPACITIES.name: ([NAME, column("StorageClassName"), column("Capacity")],
                                lambda c, now: [as_str(dig(c, "metadata", "name")), as_str(c.get("storageClassName")),
                                                as_str(c.get("capacity")) or "<unset>"]),
}
