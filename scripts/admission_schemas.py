"""JSON Schema definitions for the admission kinds (admission.md): LimitRange, the admissionregistration.k8s.io
webhook configurations and ValidatingAdmissionPolicies with their bindings, and discovery.k8s.io EndpointSlices.

Strict on what the admission rules read (a LimitRange's bounds as quantities, a webhook's rules, selectors,
failure policy and client config, an endpoint's readiness); open to everything else (caBundles are kept as
they are).
"""

from __future__ import annotations


def admission_defs(STR: dict, BOOL: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:
    meta = ref("objectMeta")
    nsmeta = ref("namespacedMeta")
    resources = {"anyOf": [ref("resourceList"), {"type": "null"}]}
    strs = {"type": ["array", "null"], "items": STR}
    rule = {"type": "object", "properties": {
        "operations": strs, "apiGroups": strs, "apiVersions": strs, "resources": strs,
        "scope": {"type": ["string", "null"]}}}
    client = {"type": "object", "properties": {
        "url": STR, "caBundle": STR,
        "service": {"type": ["object", "null"], "required": ["namespace", "name"], "properties": {
            "namespace": STR, "name": STR, "path": STR, "port": {"type": ["integer", "null"]}}}}}
    webhook = {"type": "object", "required": ["name", "clientConfig"], "properties": {
        "name": STR, "clientConfig": client, "rules": {"type": ["array", "null"], "items": rule},
        "failurePolicy": {"enum": ["Fail", "Ignore", None]},
        "namespaceSelector": ref("labelSelector"), "objectSelector": ref("labelSelector")}}

    def configuration(kind: str) -> dict:
        return {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": kind}, "metadata": meta, "webhooks": {"type": ["array", "null"], "items": webhook}}}

    return {
        "LimitRange": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "kind": {"const": "LimitRange"}, "metadata": nsmeta,
            "spec": {"type": "object", "properties": {"limits": {"type": ["array", "null"], "items": {
                "type": "object", "required": ["type"], "properties": {
                    "type": STR, "max": resources, "min": resources, "default": resources,
                    "defaultRequest": resources, "maxLimitRequestRatio": resources}}}}}}},
        "ValidatingWebhookConfiguration": configuration("ValidatingWebhookConfiguration"),
        "MutatingWebhookConfiguration": configuration("MutatingWebhookConfiguration"),
        "ValidatingAdmissionPolicy": {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": "ValidatingAdmissionPolicy"}, "metadata": meta,
            "spec": {"type": "object", "properties": {"failurePolicy": {"enum": ["Fail", "Ignore", None]}}}}},
        "ValidatingAdmissionPolicyBinding": {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": "ValidatingAdmissionPolicyBinding"}, "metadata": meta,
            "spec": {"type": "object", "properties": {"policyName": STR, "validationActions": strs}}}},
        "EndpointSlice": {"type": "object", "required": ["metadata"], "properties": {
            "kind": {"const": "EndpointSlice"}, "metadata": nsmeta,
            "endpoints": {"type": ["array", "null"], "items": {"type": "object", "properties": {
                "conditions": {"type": ["object", "null"], "properties": {
                    "ready": {"type": ["boolean", "null"]}}},
                "targetRef": {"type": ["object", "null"], "properties": {"kind": STR, "name": STR}}}}}}},
    }
