"""Write schemas/*.schema.json from one Python description.

Why generated: the JSON Schema files (one per kind of the catalog, the manifest, the verdicts) share the same definitions
(quantity, object metadata, pod spec); writing them once here keeps them
consistent. The files written are plain JSON Schema 2020-12 and are what the
analyzer loads; re-run this after editing: `python scripts/make_schemas.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analyzer.bundle.catalog import KINDS  # noqa: E402  (the one list of kinds)

BASE = "https://gpu-triage.invalid/schemas/"
OUT = Path(__file__).resolve().parent.parent / "schemas"

STR = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
STRMAP = {"type": "object", "additionalProperties": {"type": "string"}}
NULLSTR = {"type": ["string", "null"]}


def ref(name: str) -> dict:
    return {"$ref": f"k8s-defs.schema.json#/$defs/{name}"}


def arr(item: dict) -> dict:
    return {"type": "array", "items": item}


# The Kubernetes quantity grammar (apimachinery resource.Quantity):
# <sign><number><suffix>, suffix binarySI Ki..Ei, decimalSI n u m k M G T P E,
# or a decimal exponent e/E<int>. Resource amounts are never negative.
# Digits and exponents are bounded (30 digits, two-digit exponent): no real amount needs more,
# and 1e400 or a 5,000-digit number must not pass.
QUANTITY_RE = r"^\+?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$"

DEFS: dict[str, dict] = {
    "quantity": {
        "description": "A Kubernetes quantity: a string in the quantity grammar, or a plain non-negative number.",
        "oneOf": [
            {"type": "string", "pattern": QUANTITY_RE},
            {"type": "number", "minimum": 0},
        ],
    },
    "resourceList": {"type": "object", "additionalProperties": ref("quantity")},
    "ownerReference": {
        "type": "object",
        "required": ["kind", "name"],
        "properties": {"kind": STR, "name": STR, "uid": STR, "controller": BOOL, "apiVersion": STR},
    },
    "objectMeta": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "namespace": STR,
            "uid": STR,
            "labels": STRMAP,
            "annotations": STRMAP,
            "creationTimestamp": NULLSTR,
            "ownerReferences": arr(ref("ownerReference")),
        },
    },
    "namespacedMeta": {
        "allOf": [ref("objectMeta"), {"required": ["namespace"], "properties": {"namespace": {"type": "string", "minLength": 1}}}],
    },
    "templateMeta": {
        "type": "object",
        "properties": {"name": STR, "namespace": STR, "labels": STRMAP, "annotations": STRMAP},
    },
    "taint": {
        "type": "object",
        "required": ["key", "effect"],
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "value": STR,
            "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
            "timeAdded": NULLSTR,
        },
    },
    "toleration": {
        "type": "object",
        "properties": {
            "key": STR,
            # Newer clusters add operators (numeric Gt/Lt tolerations); any string loads,
            # and an operator the analyzer does not know tolerates nothing.
            "operator": STR,
            "value": STR,
            "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute", ""]},
            "tolerationSeconds": {"type": ["integer", "null"]},
        },
    },
    "nodeSelectorRequirement": {
        "type": "object",
        "required": ["key", "operator"],
        "properties": {
            "key": STR,
            "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]},
            "values": arr(STR),
        },
    },
    "nodeSelectorTerm": {
        "type": "object",
        "properties": {
            "matchExpressions": arr(ref("nodeSelectorRequirement")),
            "matchFields": arr(ref("nodeSelectorRequirement")),
        },
    },
    "affinity": {
        "type": "object",
        "properties": {
            "nodeAffinity": {
                "type": "object",
                "properties": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "type": "object",
                        "required": ["nodeSelectorTerms"],
                        "properties": {"nodeSelectorTerms": arr(ref("nodeSelectorTerm"))},
                    },
                },
            },
            "podAffinity": ref("podAffinityRules"),
            "podAntiAffinity": ref("podAffinityRules"),
        },
    },
    "resources": {
        "type": "object",
        "properties": {"requests": ref("resourceList"), "limits": ref("resourceList"), "claims": arr({"type": "object"})},
    },
    "envVar": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": STR, "value": STR, "valueFrom": {"type": "object"}},
    },
    "containerPort": {
        "type": "object",
        "properties": {"containerPort": INT, "hostPort": INT, "protocol": STR, "hostIP": STR},
    },
    "container": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": STR,
            "image": STR,
            "resources": ref("resources"),
            "env": arr(ref("envVar")),
            "ports": arr(ref("containerPort")),
            "restartPolicy": STR,
        },
    },
    "podSpec": {
        "type": "object",
        "required": ["containers"],
        "properties": {
            "containers": {"type": "array", "minItems": 1, "items": ref("container")},
            "initContainers": arr(ref("container")),
            "ephemeralContainers": arr({"type": "object"}),
            "nodeName": STR,
            "nodeSelector": STRMAP,
            "affinity": ref("affinity"),
            "tolerations": arr(ref("toleration")),
            "overhead": ref("resourceList"),
            "runtimeClassName": NULLSTR,
            "schedulingGates": arr({"type": "object", "required": ["name"], "properties": {"name": STR}}),
            "schedulerName": STR,
            "priority": {"type": ["integer", "null"]},
            "priorityClassName": STR,
            "activeDeadlineSeconds": {"type": ["integer", "null"]},
            "volumes": arr(ref("podVolume")),
            "topologySpreadConstraints": arr(ref("topologySpreadConstraint")),
            "resourceClaims": arr({"type": "object"}),
            "hostNetwork": BOOL,
            "resources": ref("resources"),  # pod-level resources (v1.34+)
        },
    },
    "podCondition": {
        "type": "object",
        "required": ["type", "status"],
        "properties": {"type": STR, "status": STR, "reason": STR, "message": STR, "lastTransitionTime": NULLSTR},
    },
    "containerStatus": {
        "type": "object",
        "properties": {
            "name": STR,
            "state": {
                "type": "object",
                "properties": {k: {"type": "object", "properties": {"reason": STR, "message": STR}}
                               for k in ("waiting", "running", "terminated")},
            },
        },
    },
    "Pod": {
        "type": "object",
        "required": ["metadata", "spec"],
        "properties": {
            "kind": {"const": "Pod"},
            "metadata": ref("namespacedMeta"),
            "spec": ref("podSpec"),
            "status": {
                "type": "object",
                "properties": {
                    "phase": {"enum": ["Pending", "Running", "Succeeded", "Failed", "Unknown"]},
                    "conditions": arr(ref("podCondition")),
                    "nominatedNodeName": STR,
                    "containerStatuses": arr(ref("containerStatus")),
                    "initContainerStatuses": arr(ref("containerStatus")),
                },
            },
        },
    },
    "podTemplate": {
        "type": "object",
        "required": ["spec"],
        "properties": {"metadata": ref("templateMeta"), "spec": ref("podSpec")},
    },
    "Node": {
        "type": "object",
        "required": ["metadata", "status"],
        "properties": {
            "kind": {"const": "Node"},
            "metadata": ref("objectMeta"),
            "spec": {
                "type": "object",
                "properties": {"unschedulable": BOOL, "taints": arr(ref("taint"))},
            },
            "status": {
                "type": "object",
                "properties": {"capacity": ref("resourceList"), "allocatable": ref("resourceList")},
            },
        },
    },
    "ResourceQuota": {
        "type": "object",
        "required": ["metadata", "spec"],
        "properties": {
            "kind": {"const": "ResourceQuota"},
            "metadata": ref("namespacedMeta"),
            "spec": {
                "type": "object",
                "properties": {
                    "hard": ref("resourceList"),
                    "scopes": arr({"enum": ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity", "VolumeAttributesClass"]}),
                    "scopeSelector": {
                        "type": "object",
                        "properties": {
                            "matchExpressions": arr({
                                "type": "object",
                                "required": ["scopeName", "operator"],
                                "properties": {"scopeName": STR, "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]}, "values": arr(STR)},
                            }),
                        },
                    },
                },
            },
            "status": {
                "type": "object",
                "properties": {"hard": ref("resourceList"), "used": ref("resourceList")},
            },
        },
    },
    "RuntimeClass": {
        "type": "object",
        "required": ["metadata", "handler"],
        "properties": {
            "kind": {"const": "RuntimeClass"},
            "metadata": ref("objectMeta"),
            "handler": STR,
            "overhead": {"type": ["object", "null"], "properties": {"podFixed": ref("resourceList")}},
            "scheduling": {"type": ["object", "null"], "properties": {"nodeSelector": STRMAP, "tolerations": arr(ref("toleration"))}},
        },
    },
    "Event": {
        "type": "object",
        "required": ["involvedObject"],
        "properties": {
            "kind": {"const": "Event"},
            "metadata": {"type": "object"},
            "involvedObject": {
                "type": "object",
                "properties": {"kind": STR, "name": STR, "namespace": STR, "uid": STR},
            },
            "reason": STR,
            "message": STR,
            "type": STR,
            "count": {"type": ["integer", "null"]},
            "firstTimestamp": NULLSTR,
            "lastTimestamp": NULLSTR,
            "eventTime": NULLSTR,
            "reportingComponent": STR,
            "series": {"type": ["object", "null"], "properties": {"count": INT, "lastObservedTime": STR}},
        },
    },
    "Namespace": {
        "type": "object",
        "required": ["metadata"],
        "properties": {"kind": {"const": "Namespace"}, "metadata": ref("objectMeta")},
    },
}


def workload(kind: str, extra_spec: dict, status: dict) -> dict:
    spec = {"type": "object", "properties": {"template": ref("podTemplate"), **extra_spec}}
    if kind != "Job":
        spec["required"] = ["template"]
    return {
        "type": "object",
        "required": ["metadata", "spec"],
        "properties": {
            "kind": {"const": kind},
            "metadata": ref("namespacedMeta"),
            "spec": spec,
            "status": {"type": "object", "properties": status},
        },
    }


INTN = {"type": ["integer", "null"]}
DEFS["ReplicaSet"] = workload("ReplicaSet", {"replicas": INTN}, {"replicas": INTN, "readyReplicas": INTN})
DEFS["StatefulSet"] = workload("StatefulSet", {"replicas": INTN}, {"replicas": INTN, "readyReplicas": INTN})
DEFS["Job"] = workload("Job", {"parallelism": INTN, "completions": INTN, "suspend": {"type": ["boolean", "null"]}},
                       {"active": INTN, "succeeded": INTN, "failed": INTN})
DEFS["DaemonSet"] = workload("DaemonSet", {}, {"desiredNumberScheduled": INTN, "currentNumberScheduled": INTN, "numberReady": INTN})

# Dynamic Resource Allocation (dra.md): v1, v1beta2 and v1beta1 all read; the fields the rules read are typed
# in dra_defs() below.
from dra_schemas import dra_defs  # noqa: E402  (a developer script beside this one)

DEFS.update(dra_defs(STR, INT, BOOL, STRMAP, ref, arr))
# Volumes, inter-pod affinity and topology spread (filters.md).
from storage_schemas import pod_filter_defs, storage_defs  # noqa: E402

DEFS.update(pod_filter_defs(STR, INT, STRMAP, ref, arr))
DEFS.update(storage_defs(STR, INT, BOOL, STRMAP, ref, arr))

# Queueing systems (queues.md): Kueue v1beta2 and v1beta1, Volcano; keyed by kind and group.
from queue_schemas import queue_defs  # noqa: E402  (a developer script beside this one)

DEFS.update(queue_defs(STR, INT, BOOL, STRMAP, ref, arr))

# Autoscalers (autoscalers.md): Karpenter, ProvisioningRequests, cluster-autoscaler's status ConfigMap.
from autoscaler_schemas import autoscaler_defs  # noqa: E402  (a developer script beside this one)

DEFS.update(autoscaler_defs(STR, STRMAP, ref, arr))

from admission_schemas import admission_defs  # noqa: E402  (admission.md: LimitRanges, webhooks, policies, slices)
DEFS.update(admission_defs(STR, BOOL, STRMAP, ref, arr))
# The files come from the one kinds catalog; the command is the one the collector runs.
LISTS = {k.name: (k.item_kind, k.schema_def, " ".join(k.command)) for k in KINDS}


def list_schema(name: str, kind: str, definition: str, command: str) -> dict:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE}{name}.schema.json",
        "title": f"{name}.json: the output of `{command}`",
        "description": "A kubectl List. Strict on the fields the analyzer reads, open to every other field (Kubernetes adds fields each release).",
        "type": "object",
        "required": ["items"],
        "properties": {
            "kind": {"enum": ["List", f"{kind}List"]},
            "apiVersion": STR,
            "items": arr(ref(definition)),
        },
    }


def main() -> None:
    OUT.mkdir(exist_ok=True)
    files = {
        "k8s-defs": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{BASE}k8s-defs.schema.json",
            "title": "Kubernetes object shapes, as far as gpu-triage reads them",
            "$defs": DEFS,
        }
    }
    for name, (kind, definition, command) in LISTS.items():
        files[name] = list_schema(name, kind, definition, command)
    files["version"] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE}version.schema.json",
        "title": "version.json: the output of `kubectl version -o json`",
        "type": "object",
        "properties": {
            "clientVersion": {"type": "object", "properties": {"gitVersion": STR}},
            "serverVersion": {"type": "object", "properties": {"gitVersion": STR}},
        },
    }
    for name, schema in files.items():
        (OUT / f"{name}.schema.json").write_text(json.dumps(schema, indent=2) + "\n")


if __name__ == "__main__":
    main()
