"""JSON Schema definitions for the volume kinds (core PersistentVolumeClaim and PersistentVolume, storage.k8s.io
StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment) and the pod fields the inter-pod and
topology spread rules read (filters.md).

Strict on what the rules read (class names, access modes, sizes, node affinity, claim references, CSI driver
names and limits, capacity topology, selectors, topology keys); open to everything else.
"""

from __future__ import annotations


def label_selector(STR: dict, STRMAP: dict, arr) -> dict:
    """metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist)."""
    return {"type": ["object", "null"], "properties": {
        "matchLabels": STRMAP,
        "matchExpressions": arr({"type": "object", "required": ["key", "operator"], "properties": {
            "key": STR, "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]}, "values": arr(STR)}})}}


def pod_filter_defs(STR: dict, INT: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:
    """podAffinityTerm and topologySpreadConstraint, as the inter-pod and spread rules read them."""
    selector = ref("labelSelector")
    return {
        "labelSelector": label_selector(STR, STRMAP, arr),
        "podAffinityTerm": {"type": "object", "required": ["topologyKey"], "properties": {
            "labelSelector": selector, "namespaceSelector": selector, "namespaces": arr(STR),
            "topologyKey": {"type": "string", "minLength": 1}, "matchLabelKeys": arr(STR),
            "mismatchLabelKeys": arr(STR)}},
        "podAffinityRules": {"type": "object", "properties": {
            "requiredDuringSchedulingIgnoredDuringExecution": arr(ref("podAffinityTerm"))}},
        "topologySpreadConstraint": {"type": "object", "required": ["maxSkew", "topologyKey", "whenUnsatisfiable"],
                                     "properties": {
            "maxSkew": {"type": "integer", "minimum": 1}, "topologyKey": {"type": "string", "minLength": 1},
            "whenUnsatisfiable": {"enum": ["DoNotSchedule", "ScheduleAnyway"]}, "labelSelector": selector,
            "minDomains": {"type": ["integer", "null"], "minimum": 1},
            "nodeAffinityPolicy": {"enum": ["Honor", "Ignore", None]},
            "nodeTaintsPolicy": {"enum": ["Honor", "Ignore", None]}, "matchLabelKeys": arr(STR)}},
        "podVolume": {"type": "object", "required": ["name"], "properties": {
            "name": STR,
            "persistentVolumeClaim": {"type": "object", "required": ["claimName"],
                                      "properties": {"claimName": {"type": "string", "minLength": 1}}},
            "ephemeral": {"type": "object"},
            "csi": {"type": "object"}}},
    }


def storage_defs(STR: dict, INT: dict, BOOL: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:
    meta = ref("objectMeta")
    nsmeta = ref("namespacedMeta")
    NONEMPTY = {"type": "string", "minLength": 1}
    modes = arr({"enum": ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]})
    def nullable_arr(item: dict) -> dict:  # a real CSINode of a node without CSI drivers says "drivers": null
        return {"type": ["array", "null"], "items": item}

    terms = {"type": "object", "required": ["nodeSelectorTerms"],
             "properties": {"nodeSelectorTerms": arr(ref("nodeSelectorTerm"))}}
    return {
        "PersistentVolumeClaim": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "kind": {"const": "PersistentVolumeClaim"}, "metadata": nsmeta,
            "spec": {"type": "object", "properties": {
                "accessModes": modes, "storageClassName": {"type": ["string", "null"]}, "volumeName": STR,
                "selector": ref("labelSelector"),
                "resources": {"type": "object", "properties": {"requests": ref("resourceList")}}}},
            "status": {"type": "object", "properties": {"phase": {"enum": ["Pending", "Bound", "Lost"]}}}}},
        "PersistentVolume": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "kind": {"const": "PersistentVolume"}, "metadata": meta,
            "spec": {"type": "object", "properties": {
                "accessModes": modes, "capacity": ref("resourceList"), "storageClassName": STR,
                "nodeAffinity": {"type": ["object", "null"], "properties": {"required": terms}},
                "claimRef": {"type": ["object", "null"], "properties": {"namespace": STR, "name": STR, "uid": STR}},
                "csi": {"type": "object", "required": ["driver"], "properties": {"driver": NONEMPTY,
                                                                                 "volumeHandle": STR}}}},
            "status": {"type": "object", "properties": {"phase": STR}}}},
        "StorageClass": {"type": "object", "required": ["metadata", "provisioner"], "properties": {
            "kind": {"const": "StorageClass"}, "metadata": meta, "provisioner": STR,
            "volumeBindingMode": {"enum": ["Immediate", "WaitForFirstConsumer", None]},
            "allowedTopologies": arr({"type": "object", "properties": {"matchLabelExpressions": arr(
                {"type": "object", "required": ["key", "values"], "properties": {"key": STR, "values": arr(STR)}})}})}},
        "CSINode": {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": "CSINode"}, "metadata": meta,
            "spec": {"type": "object", "properties": {"drivers": nullable_arr({"type": "object", "required": ["name"], "properties": {
                "name": NONEMPTY, "allocatable": {"type": ["object", "null"], "properties": {
                    "count": {"type": ["integer", "null"], "minimum": 0}}}}})}}}},
        "CSIDriver": {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": "CSIDriver"}, "metadata": meta,
            "spec": {"type": "object", "properties": {"storageCapacity": {"type": ["boolean", "null"]},
                                                      "attachRequired": {"type": ["boolean", "null"]}}}}},
        "CSIStorageCapacity": {"type": "object", "required": ["metadata", "storageClassName"], "properties": {
            "kind": {"const": "CSIStorageCapacity"}, "metadata": nsmeta, "storageClassName": NONEMPTY,
            "nodeTopology": ref("labelSelector"), "capacity": ref("quantity"), "maximumVolumeSize": ref("quantity")}},
        "VolumeAttachment": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "kind": {"const": "VolumeAttachment"}, "metadata": meta,
            "spec": {"type": "object", "properties": {"attacher": STR, "nodeName": STR,
                                                       "source": {"type": "object", "properties": {"persistentVolumeName": STR}}}},
            "status": {"type": "object", "properties": {"attached": BOOL}}}},
    }
