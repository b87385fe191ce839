"""Admission objects for the tests, shaped as `kubectl get … -o json` prints them on v1.36 (admission.md).

The lab recording has no LimitRange, webhook or policy, so these follow the real components' own manifests:
Kyverno's `kyverno-resource-validating-webhook-cfg` (webhook `validate.kyverno.svc-fail`, Service kyverno/kyverno-svc,
failurePolicy Fail, its own namespace excluded), Istio's `istio-sidecar-injector` (mutating, Service istio-system/istiod,
failurePolicy Fail, namespaces labelled istio-injection=enabled), Gatekeeper's `validation.gatekeeper.sh`
(failurePolicy Ignore); EndpointSlices as the endpointslice controller writes them. Denial texts are the real formats:
Gatekeeper `[constraint] message`, Kyverno `resource Pod/ns/name was blocked due to the following policies`.
"""

from __future__ import annotations

import uuid
from typing import Any

CREATED = "2026-11-29T17:10:02Z"
POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"],
            "scope": "*"}


def _meta(name: str, namespace: str | None = None, **more: Any) -> dict:
    meta = {"creationTimestamp": CREATED, "generation": 1, "name": name, "resourceVersion": "512", "uid": str(uuid.uuid4())}
    if namespace is not None:
        meta["namespace"] = namespace
        meta.pop("generation")
    meta.update(more)
    return meta


def limitrange(name: str, namespace: str, *limits: dict) -> dict:
    """A LimitRange as stored (a Container entry's default and defaultRequest filled in from max, as the API server
    stores it: pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem)."""
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": _meta(name, namespace), "spec": {"limits": list(limits)}}


def container_limit(**bounds: dict) -> dict:
    """spec.limits[] of type Container: max, min, default, defaultRequest, maxLimitRequestRatio."""
    entry: dict = {"type": "Container", **bounds}
    if "max" in entry:
        entry.setdefault("default", dict(entry["max"]))
    if "default" in entry:
        entry.setdefault("defaultRequest", dict(entry["default"]))
    return entry


def webhook(name: str, service: tuple[str, str] | None, *, failure: str = "Fail", path: str = "/validate/fail",
            namespace_selector: dict | None = None, object_selector: dict | None = None,
            rules: list[dict] | None = None) -> dict:
    client: dict = {"caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM="}
    if service is not None:
        client["service"] = {"name": service[1], "namespace": service[0], "path": path, "port": 443}
    return {"admissionReviewVersions": ["v1"], "clientConfig": client, "failurePolicy": failure,
            "matchPolicy": "Equivalent", "name": name,
            "namespaceSelector": namespace_selector if namespace_selector is not None else {},
            "objectSelector": object_selector if object_selector is not None else {},
            "rules": rules if rules is not None else [POD_RULE], "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10}


def configuration(kind: str, name: str, *hooks: dict) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": _meta(name), "webhooks": list(hooks)}


def kyverno(*, failure: str = "Fail", namespace_selector: dict | None = None) -> dict:
    """Kyverno's resource validating webhook (fail-closed), excluding its own namespace."""
    selector = namespace_selector if namespace_selector is not None else {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kyverno"]}]}
    return configuration("ValidatingWebhookConfiguration", "kyverno-resource-validating-webhook-cfg",
                         webhook("validate.kyverno.svc-fail", ("kyverno", "kyverno-svc"), failure=failure,
                                 namespace_selector=selector))


def istio_injector() -> dict:
    """Istio's sidecar injector: mutating, fail-closed, for namespaces labelled istio-injection=enabled."""
    return configuration("MutatingWebhookConfiguration", "istio-sidecar-injector",
                         webhook("namespace.sidecar-injector.istio.io", ("istio-system", "istiod"), path="/inject",
                                 namespace_selector={"matchLabels": {"istio-injection": "enabled"}}))


def endpointslice(service: tuple[str, str], *ready: bool) -> dict:
    """The endpointslice controller's slice for a Service: one endpoint per pod, ready or not."""
    namespace, name = service
    endpoints = [{"addresses": [f"10.244.1.{i + 10}"], "conditions": {"ready": r, "serving": r, "terminating": False},
                  "nodeName": "gpu-ok", "targetRef": {"kind": "Pod", "name": f"{name}-7d9c6b5f4-{i}x2kq",
                                                      "namespace": namespace, "uid": str(uuid.uuid4())}}
                 for i, r in enumerate(ready)]
    return {"addressType": "IPv4", "apiVersion": "discovery.k8s.io/v1", "endpoints": endpoints, "kind": "EndpointSlice",
            "metadata": _meta(f"{name}-8x7qz", namespace, generateName=f"{name}-", labels={
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                "kubernetes.io/service-name": name}),
            "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}]}


def policy(name: str) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": _meta(name),
            "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [POD_RULE]},
                     "validations": [{"expression": "object.spec.containers.all(c, !has(c.resources.limits) || "
                                                    "int(c.resources.limits['nvidia.com/gpu']) <= 1)",
                                      "message": "at most one GPU per container"}]}}


def binding(name: str, policy_name: str) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": _meta(name), "spec": {"policyName": policy_name, "validationActions": ["Deny"]}}


# The API server's answers, as kubectl apply prints them (stderr) for manifests/41's pod `quota-exceeded`.
FILE = "manifests/41-pod-quota-exceeded.yaml"
ANSWERS = {
    # pkg/apis/core/validation ValidateContainerResourceRequirements
    "invalid-spec": 'The Pod "quota-exceeded" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
                    'must be equal to nvidia.com/gpu limit of 1\n',
    # plugin/pkg/admission/limitranger maxConstraint
    "limit-range": f'Error from server (Forbidden): error when creating "{FILE}": pods "quota-exceeded" is forbidden: '
                   f'maximum nvidia.com/gpu usage per Container is 1, but limit is 2\n',
    # apiserver pkg/admission/plugin/webhook/errors ToStatusErr, with Kyverno's message
    "admission-denied": f'Error from server: error when creating "{FILE}": admission webhook "validate.kyverno.svc-fail" '
                        f'denied the request: \n\nresource Pod/quota-lab/quota-exceeded was blocked due to the following '
                        f'policies\n\nrestrict-gpus:\n  max-one-gpu: \'validation error: at most one GPU per container. '
                        f'rule max-one-gpu failed at path /spec/containers/0/resources/limits/nvidia.com/gpu/\'\n',
    # apiserver pkg/util/webhook ErrCallingWebhook, the API server routing to endpoints
    "admission-unavailable": f'Error from server (InternalError): error when creating "{FILE}": Internal error occurred: '
                             f'failed calling webhook "validate.kyverno.svc-fail": failed to call webhook: Post '
                             f'"https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s": no endpoints available '
                             f'for service "kyverno-svc"\n',
}
