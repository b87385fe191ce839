"""Admission objects for a generated bundle (`generate_bundle.py --admission`): a fifth of the team namespaces under
a LimitRange, and three webhook configurations with their Services' EndpointSlices (admission.md).

Shaped like the real components': Kyverno's fail-closed resource validating webhook (its own namespace excluded),
Istio's fail-closed sidecar injector (namespaces labelled istio-injection=enabled, as the generator labels four),
Gatekeeper's validating webhook (failurePolicy Ignore). Every webhook has a ready endpoint and no LimitRange bound is
met by a generated pod, so every answer of the bundle stays as it was: the option measures what reading and
indexing these objects costs per pod.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from bundlegen.common import ts
from generate_kueue import _write, manifest_files

SYSTEM = ("default", "kube-node-lease", "kube-public", "kube-system")
POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"],
            "scope": "*"}
CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyZVhabGNtNXYK"
# (configuration kind, configuration, webhook, service namespace, service, path, failurePolicy, namespaceSelector)
WEBHOOKS = (
    ("ValidatingWebhookConfiguration", "kyverno-resource-validating-webhook-cfg", "validate.kyverno.svc-fail", "kyverno",
     "kyverno-svc", "/validate/fail", "Fail",
     {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kyverno"]}]}),
    ("MutatingWebhookConfiguration", "istio-sidecar-injector", "namespace.sidecar-injector.istio.io", "istio-system",
     "istiod", "/inject", "Fail", {"matchLabels": {"istio-injection": "enabled"}}),
    ("ValidatingWebhookConfiguration", "gatekeeper-validating-webhook-configuration", "validation.gatekeeper.sh",
     "gatekeeper-system", "gatekeeper-webhook-service", "/v1/admit", "Ignore",
     {"matchExpressions": [{"key": "admission.gatekeeper.sh/ignore", "operator": "DoesNotExist"}]}),
)


def _meta(seed: int, name: str, namespace: str | None = None, **more: object) -> dict:
    rnd = random.Random(f"{seed}/{namespace}/{name}")
    meta: dict = {"creationTimestamp": ts(90 * 86400), "name": name, "resourceVersion": str(rnd.randrange(10**6, 10**7)),
                  "uid": "%08x-%04x-4%03x-8%03x-%012x" % (rnd.getrandbits(32), rnd.getrandbits(16), rnd.getrandbits(12),
                                                        rnd.getrandbits(12), rnd.getrandbits(48))}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(more)
    return meta


def _limitrange(seed: int, namespace: str) -> dict:
    """A team's LimitRange: container defaults and bounds for CPU and memory, and a per-pod GPU cap (type Pod has no
    defaults, so no container is given GPUs it did not ask for)."""
    container = {"type": "Container", "default": {"cpu": "1", "memory": "2Gi"},
                 "defaultRequest": {"cpu": "250m", "memory": "512Mi"}, "max": {"cpu": "96", "memory": "1536Gi"},
                 "maxLimitRequestRatio": {"cpu": "16"}}
    pod = {"type": "Pod", "max": {"nvidia.com/gpu": "16", "cpu": "192", "memory": "2Ti"}}
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": _meta(seed, "team-limits", namespace),
            "spec": {"limits": [container, pod]}}


def _configuration(seed: int, kind: str, name: str, hook: str, svc_ns: str, svc: str, path: str, failure: str,
                   selector: dict) -> dict:
    webhook = {"admissionReviewVersions": ["v1"], "failurePolicy": failure, "matchPolicy": "Equivalent", "name": hook,
               "clientConfig": {"caBundle": CA, "service": {"name": svc, "namespace": svc_ns, "path": path, "port": 443}},
               "namespaceSelector": selector, "objectSelector": {}, "rules": [POD_RULE], "sideEffects": "None",
               "timeoutSeconds": 10}
    if kind.startswith("Mutating"):
        webhook["reinvocationPolicy"] = "Never"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": _meta(seed, name, generation=1),
            "webhooks": [webhook]}


def _slice(seed: int, namespace: str, service: str, replicas: int) -> dict:
    endpoints = [{"addresses": [f"10.8.{i}.{17 + i}"], "conditions": {"ready": True, "serving": True, "terminating": False},
                  "targetRef": {"kind": "Pod", "name": f"{service}-6c9f7d8b5-{i:05d}", "namespace": namespace}}
                 for i in range(replicas)]
    return {"addressType": "IPv4", "apiVersion": "discovery.k8s.io/v1", "endpoints": endpoints, "kind": "EndpointSlice",
            "metadata": _meta(seed, f"{service}-x7k2p", namespace, generateName=f"{service}-", labels={
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                "kubernetes.io/service-name": service}),
            "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}]}


def add_admission(root: Path, seed: int) -> int:
    """Write the admission files and their manifest entries; returns how many namespaces got a LimitRange."""
    names = [item["metadata"]["name"] for item in json.loads((root / "namespaces.json").read_text())["items"]]
    teams = sorted(n for n in names if n not in SYSTEM)
    chosen = sorted(random.Random(seed).sample(teams, max(1, len(teams) // 5))) if teams else []
    hooks = [_configuration(seed, *w) for w in WEBHOOKS]
    lists = {
        "limitranges": [_limitrange(seed, ns) for ns in chosen],
        "validatingwebhookconfigurations": sorted((h for h in hooks if h["kind"].startswith("Validating")),
                                                  key=lambda h: h["metadata"]["name"]),
        "mutatingwebhookconfigurations": [h for h in hooks if h["kind"].startswith("Mutating")],
        "endpointslices": sorted((_slice(seed, w[3], w[4], 3) for w in WEBHOOKS),
                                 key=lambda s: (s["metadata"]["namespace"], s["metadata"]["name"])),
    }
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = manifest_files(root) + [_write(root, name, items) for name, items in lists.items()]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return len(chosen)
