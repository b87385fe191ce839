"""The volume kinds as records, built once per bundle: claims, volumes, classes, CSI drivers and node limits,
storage capacity (filters.md). Nothing here decides a cause word; rules/volumes.py and rules/in_use.py read these.

Sources: kubernetes pkg/scheduler/framework/plugins/volumebinding/binder.go (bound = spec.volumeName set and the
bind-completed annotation; a class's binding mode; FindMatchingVolume's rules), component-helpers/storage/volume
(GetPersistentVolumeClaimClass: spec.storageClassName, else the beta annotation; the default class).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from analyzer.bundle.validation import Loaded
from analyzer.bundle.catalog import (CSIDRIVERS, CSINODES, CSISTORAGECAPACITIES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES,
                                     STORAGECLASSES, VOLUMEATTACHMENTS)
from analyzer.model import quantity
from analyzer.model.events import volume_claim_events
from analyzer.model.labels import Selector, selector_of
from analyzer.model.quantity import QuantityError

FILES = tuple(k.name for k in (PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES, CSINODES, CSIDRIVERS,
                                CSISTORAGECAPACITIES, VOLUMEATTACHMENTS))
NO_PROVISIONER = "kubernetes.io/no-provisioner"  # volume.NotSupportedProvisioner
WFFC = "WaitForFirstConsumer"
RWOP = "ReadWriteOncePod"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
# VolumeZone's labels (pkg/scheduler/framework/plugins/volumezone: topologyLabels), GA and legacy beta.
ZONE_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region",
               "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region")


def _bytes(value: object) -> int | None:
    try:
        return math.ceil(quantity.parse(value))
    except QuantityError:
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    namespace: str
    name: str
    storage_class: str | None  # None: unset (the default class applies); "" means "no class"
    volume_name: str
    bound: bool
    access_modes: tuple[str, ...]
    request: int | None  # bytes of spec.resources.requests.storage
    selector: Selector | None
    owners: tuple[str, ...]  # ownerReferences uids (a generic ephemeral volume's claim is owned by its pod)
    selected_node: str
    source: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Volume:
    name: str
    storage_class: str
    access_modes: tuple[str, ...]
    capacity: int | None
    terms: list[dict] | None  # spec.nodeAffinity.required.nodeSelectorTerms
    labels: dict[str, str]
    claim_ref: tuple[str, str, str] | None  # (namespace, name, uid)
    phase: str
    csi_driver: str
    handle: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str
    allowed_topologies: list[dict]
    default: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Capacity:
    name: str
    storage_class: str
    topology: Selector
    capacity: int | None
    maximum: int | None


@dataclass(kw_only=True)
class Storage:
    """Every volume object of the bundle, by the keys the rules look them up by."""

    claims: dict[tuple[str, str], Claim] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    drivers: dict[str, bool] = field(default_factory=dict)  # CSIDriver name -> spec.storageCapacity
    limits: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> driver -> allocatable count
    capacities: list[Capacity] = field(default_factory=list)
    attached: dict[str, list[str]] = field(default_factory=dict)  # PV name -> nodes a VolumeAttachment names
    missing: dict[str, str] = field(default_factory=dict)  # kind -> why its file is not usable
    by_class: dict[str, list[Volume]] = field(default_factory=dict)  # volumes per class
    events: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # a claim's latest events

    def default_class(self) -> StorageClass | None:
        defaults = [c for c in self.classes.values() if c.default]
        return defaults[0] if defaults else None

    def class_of(self, claim: Claim) -> str:
        """volume.GetPersistentVolumeClaimClass: the class name the claim binds with ("" : none)."""
        if claim.storage_class is not None:
            return claim.storage_class
        default = self.default_class()
        return default.name if default is not None else ""


def _claim(item: dict, source: str) -> Claim:
    meta = item["metadata"]
    spec = item.get("spec") or {}
    annotations = meta.get("annotations") or {}
    cls = spec.get("storageClassName")
    if cls is None and BETA_CLASS in annotations:
        cls = annotations[BETA_CLASS]
    volume = str(spec.get("volumeName") or "")
    phase = (item.get("status") or {}).get("phase")
    request = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    return Claim(namespace=meta["namespace"], name=meta["name"], storage_class=cls, volume_name=volume,
                 bound=bool(volume) and (BIND_COMPLETED in annotations or phase == "Bound"),
                 access_modes=tuple(spec.get("accessModes") or ()),
                 request=_bytes(request) if request is not None else None,
                 selector=selector_of(spec["selector"]) if spec.get("selector") is not None else None,
                 owners=tuple(str(r.get("uid") or "") for r in meta.get("ownerReferences") or ()),
                 selected_node=str(annotations.get(SELECTED_NODE) or ""), source=source)


def _volume(item: dict) -> Volume:
    meta = item["metadata"]
    spec = item.get("spec") or {}
    ref = spec.get("claimRef")
    required = (spec.get("nodeAffinity") or {}).get("required")
    csi = spec.get("csi") or {}
    return Volume(name=meta["name"], storage_class=str(spec.get("storageClassName") or ""),
                  access_modes=tuple(spec.get("accessModes") or ()),
                  capacity=_bytes((spec.get("capacity") or {}).get("storage", "0")),
                  terms=list(required.get("nodeSelectorTerms") or []) if isinstance(required, dict) else None,
                  labels=dict(meta.get("labels") or {}),
                  claim_ref=(str(ref.get("namespace") or ""), str(ref.get("name") or ""), str(ref.get("uid") or ""))
                  if isinstance(ref, dict) else None,
                  phase=str((item.get("status") or {}).get("phase") or ""), csi_driver=str(csi.get("driver") or ""),
                  handle=str(csi.get("volumeHandle") or meta["name"]))


def build_storage(loaded: Loaded) -> Storage:
    docs = loaded.documents
    st = Storage(missing={k: loaded.why_missing(k) for k in FILES if k not in docs}, events=volume_claim_events(loaded))
    if PERSISTENTVOLUMECLAIMS.name in docs:
        doc = docs[PERSISTENTVOLUMECLAIMS.name]
        for i, item in doc.valid_items():
            c = _claim(item, f"{doc.file} {doc.item_path(i)}")
            st.claims[(c.namespace, c.name)] = c
    if PERSISTENTVOLUMES.name in docs:
        for _, item in docs[PERSISTENTVOLUMES.name].valid_items():
            v = _volume(item)
            st.volumes[v.name] = v
            st.by_class.setdefault(v.storage_class, []).append(v)  # pvCache.ListPVs(class): claimRef decides later
    if STORAGECLASSES.name in docs:
        for _, item in docs[STORAGECLASSES.name].valid_items():
            meta = item["metadata"]
            st.classes[meta["name"]] = StorageClass(
                name=meta["name"], provisioner=str(item.get("provisioner") or ""),
                binding_mode=str(item.get("volumeBindingMode") or "Immediate"),
                allowed_topologies=list(item.get("allowedTopologies") or ()),
                default=(meta.get("annotations") or {}).get(DEFAULT_CLASS) == "true")
    if CSIDRIVERS.name in docs:
        for _, item in docs[CSIDRIVERS.name].valid_items():
            st.drivers[item["metadata"]["name"]] = bool((item.get("spec") or {}).get("storageCapacity"))
    if CSINODES.name in docs:
        for _, item in docs[CSINODES.name].valid_items():
            counts = {}
            for d in (item.get("spec") or {}).get("drivers") or ():
                count = (d.get("allocatable") or {}).get("count")
                if count is not None:
                    counts[d["name"]] = count
            st.limits[item["metadata"]["name"]] = counts
    if CSISTORAGECAPACITIES.name in docs:
        for _, item in docs[CSISTORAGECAPACITIES.name].valid_items():
            st.capacities.append(Capacity(
                name=f"{item['metadata']['namespace']}/{item['metadata']['name']}",
                storage_class=item["storageClassName"], topology=selector_of(item.get("nodeTopology")),
                capacity=_bytes(item["capacity"]) if item.get("capacity") is not None else None,
                maximum=_bytes(item["maximumVolumeSize"]) if item.get("maximumVolumeSize") is not None else None))
    if VOLUMEATTACHMENTS.name in docs:
        for _, item in docs[VOLUMEATTACHMENTS.name].valid_items():
            spec = item.get("spec") or {}
            pv = (spec.get("source") or {}).get("persistentVolumeName")
            if pv and spec.get("nodeName"):
                st.attached.setdefault(pv, []).append(spec["nodeName"])
    return st
