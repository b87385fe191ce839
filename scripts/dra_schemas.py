"""JSON Schema definitions for the Dynamic Resource Allocation kinds (resource.k8s.io v1, v1beta2, v1beta1).

Strict on what the DRA rules read (names, class names, selectors, counts, allocation results, slice pools and
devices); open to everything else. v1beta1 puts a request's fields on the request itself and a device's
attributes under `basic`; both shapes are accepted.
"""

from __future__ import annotations


def dra_defs(STR: dict, INT: dict, BOOL: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:  # noqa: N803 (schema constants)
    meta = ref("objectMeta")
    NONEMPTY = {"type": "string", "minLength": 1}  # noqa: N806 (a schema constant)
    cel = {"type": "object", "required": ["cel"],
           "properties": {"cel": {"type": "object", "required": ["expression"], "properties": {"expression": STR}}}}
    toleration = {"type": "object", "properties": {"key": STR, "operator": STR, "value": STR, "effect": STR}}
    exact = {"type": "object", "properties": {
        "deviceClassName": STR, "selectors": arr(cel), "allocationMode": {"enum": ["ExactCount", "All"]},
        "count": {"type": "integer", "minimum": 0}, "adminAccess": {"type": ["boolean", "null"]},
        "tolerations": arr(toleration)}}
    sub = {**exact, "required": ["name"], "properties": {**exact["properties"], "name": STR}}
    request = {"type": "object", "required": ["name"], "properties": {
        **exact["properties"], "name": STR, "exactly": exact, "firstAvailable": arr(sub)}}
    claim_spec = {"type": "object", "properties": {"devices": {"type": "object", "properties": {
        "requests": arr(request),
        "constraints": arr({"type": "object", "properties": {"requests": arr(STR), "matchAttribute": STR}})}}}}
    result = {"type": "object", "required": ["request", "driver", "pool", "device"],
              "properties": {"request": STR, "driver": STR, "pool": STR, "device": STR}}
    attribute = {"type": "object", "properties": {"bool": BOOL, "int": INT, "string": STR, "version": STR}}
    capacity = {"type": "object", "properties": {"value": ref("quantity")}}
    device_body = {"attributes": {"type": "object", "additionalProperties": attribute},
                   "capacity": {"type": "object", "additionalProperties": capacity},
                   "taints": arr({"type": "object", "required": ["key", "effect"],
                                  "properties": {"key": STR, "value": STR, "effect": STR}})}
    device = {"type": "object", "required": ["name"], "properties": {
        "name": STR, **device_body, "basic": {"type": "object", "properties": device_body}}}
    return {
        "ResourceClaim": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": meta, "spec": claim_spec,
            "status": {"type": "object", "properties": {
                "allocation": {"type": "object", "properties": {
                    "devices": {"type": "object", "properties": {"results": arr(result)}},
                    "nodeSelector": {"type": "object"}}},
                "reservedFor": arr({"type": "object", "properties": {"resource": STR, "name": STR, "uid": STR}})}}}},
        "ResourceClaimTemplate": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": meta, "spec": {"type": "object", "properties": {"spec": claim_spec}}}},
        "DeviceClass": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta, "spec": {"type": "object", "properties": {
                "selectors": arr(cel), "extendedResourceName": {"type": ["string", "null"]}}}}},
        # v1alpha3 (v1.33-v1.36) and v1beta2 (v1.36): deviceClassName and selectors exist in v1.33/v1.34 only.
        "DeviceTaintRule": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": meta, "spec": {"type": "object", "required": ["taint"], "properties": {
                "deviceSelector": {"type": "object", "properties": {
                    "driver": NONEMPTY, "pool": NONEMPTY, "device": NONEMPTY, "deviceClassName": NONEMPTY,
                    "selectors": arr(cel)}},
                "taint": {"type": "object", "required": ["key", "effect"],
                          "properties": {"key": NONEMPTY, "value": STR, "effect": NONEMPTY}}}}}},
        "ResourceSlice": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": meta, "spec": {"type": "object", "required": ["driver", "pool"], "properties": {
                "driver": STR, "nodeName": STR, "nodeSelector": {"type": "object"}, "allNodes": BOOL,
                "pool": {"type": "object", "required": ["name"], "properties": {
                    "name": STR, "generation": INT, "resourceSliceCount": INT}},
                "devices": arr(device)}}}},
    }
