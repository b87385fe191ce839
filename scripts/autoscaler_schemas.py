"""JSON Schema definitions for the autoscalers' kinds (autoscalers.md): Karpenter's NodePool and NodeClaim
(karpenter.sh/v1), the ProvisioningRequest (autoscaling.x-k8s.io/v1) and cluster-autoscaler's status ConfigMap.

Strict on what the autoscaler rule reads (names, limits and resources as quantities, conditions, the status
text); open to everything else. The status ConfigMap's `data.status` is YAML inside a string: the schema only
says it is a string; the model parses it, bounded (model/autoscalers.py).
"""

from __future__ import annotations


def autoscaler_defs(STR: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:
    meta = ref("objectMeta")
    condition = {"type": "object", "required": ["type", "status"], "properties": {
        "type": STR, "status": STR, "reason": STR, "message": STR, "lastTransitionTime": {"type": ["string", "null"]}}}
    conditions = {"type": "object", "properties": {"conditions": arr(condition)}}
    return {
        "NodePool.karpenter.sh": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {"limits": ref("resourceList")}},
            "status": {"type": "object", "properties": {
                "resources": ref("resourceList"), "conditions": arr(condition)}}}},
        "NodeClaim.karpenter.sh": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "resources": {"type": "object", "properties": {"requests": ref("resourceList")}}}},
            "status": {"type": "object", "properties": {
                "nodeName": STR, "capacity": ref("resourceList"), "conditions": arr(condition)}}}},
        "ProvisioningRequest.autoscaling.x-k8s.io": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": ref("namespacedMeta"),
            "spec": {"type": "object", "properties": {"provisioningClassName": STR}},
            "status": conditions}},
        "ConfigMap": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": ref("namespacedMeta"), "data": STRMAP}},
    }
