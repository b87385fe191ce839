"""JSON Schema definitions for the queueing systems' kinds (queues.md): Kueue (kueue.x-k8s.io v1beta2 and
v1beta1), Volcano (scheduling.volcano.sh, batch.volcano.sh) and KAI-Scheduler (scheduling.run.ai: Queue v2,
PodGroup v2alpha2; KAI's pkg/apis/scheduling/v2/resources.go gives a queue's quota, limit and overQuotaWeight as
numbers, -1 meaning unlimited).

Strict on what rules/queues.py reads (queue names, pod sets and their templates, quotas, flavors' labels and
taints, stop policies, reservations, conditions, admission checks, PodGroup sizes, Queue capability); open to
everything else. v1beta1 names a ClusterQueue's cohort `spec.cohort`, v1beta2 `spec.cohortName`; both are read.
Definitions are keyed `<Kind>.<group>` (Volcano's Job is not batch's Job).
"""

from __future__ import annotations

KUEUE = "kueue.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
VOLCANO_BATCH = "batch.volcano.sh"
KAI = "scheduling.run.ai"


def queue_defs(STR: dict, INT: dict, BOOL: dict, STRMAP: dict, ref, arr) -> dict[str, dict]:
    meta, nsmeta, quantity = ref("objectMeta"), ref("namespacedMeta"), ref("quantity")
    NAME = {"type": "string", "minLength": 1}
    COUNT = {"type": "integer", "minimum": 0}
    NUMBER = {"type": "number"}
    condition = {"type": "object", "required": ["type", "status"],
                 "properties": {"type": STR, "status": STR, "reason": STR, "message": STR}}
    status_conditions = {"conditions": arr(condition)}
    stop = {"enum": ["None", "Hold", "HoldAndDrain"]}
    quota = {"type": "object", "required": ["name"], "properties": {
        "name": NAME, "nominalQuota": quantity, "borrowingLimit": quantity, "lendingLimit": quantity}}
    groups = arr({"type": "object", "properties": {
        "coveredResources": arr(STR),
        "flavors": arr({"type": "object", "required": ["name"],
                        "properties": {"name": NAME, "resources": arr(quota)}})}})
    usage = arr({"type": "object", "required": ["name"], "properties": {
        "name": NAME, "resources": arr({"type": "object", "required": ["name"],
                                        "properties": {"name": NAME, "total": quantity, "borrowed": quantity}})}})
    topology_request = {"type": ["object", "null"], "properties": {
        "required": STR, "preferred": STR, "unconstrained": {"type": ["boolean", "null"]}}}
    pod_set = {"type": "object", "required": ["name", "template"], "properties": {
        "name": NAME, "count": COUNT, "minCount": {"type": ["integer", "null"]}, "template": ref("podTemplate"),
        "topologyRequest": topology_request}}
    assignment = {"type": "object", "properties": {
        "name": STR, "flavors": STRMAP, "resourceUsage": ref("resourceList"), "count": {"type": ["integer", "null"]}}}
    check_state = {"type": "object", "required": ["name"], "properties": {
        "name": NAME, "state": STR, "message": STR}}
    return {
        f"Workload.{KUEUE}": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": nsmeta,
            "spec": {"type": "object", "required": ["podSets"], "properties": {
                "queueName": STR, "podSets": arr(pod_set), "active": {"type": ["boolean", "null"]},
                "priority": {"type": ["integer", "null"]}}},
            "status": {"type": "object", "properties": {
                **status_conditions,
                "admission": {"type": ["object", "null"], "properties": {
                    "clusterQueue": STR, "podSetAssignments": arr(assignment)}},
                "admissionChecks": arr(check_state)}}}},
        f"LocalQueue.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": nsmeta,
            "spec": {"type": "object", "properties": {"clusterQueue": STR, "stopPolicy": stop}},
            "status": {"type": "object", "properties": status_conditions}}},
        f"ClusterQueue.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "cohortName": STR, "cohort": STR, "resourceGroups": groups, "stopPolicy": stop,
                "queueingStrategy": {"enum": ["StrictFIFO", "BestEffortFIFO"]},
                "admissionChecks": arr(STR),
                "admissionChecksStrategy": {"type": ["object", "null"], "properties": {
                    "admissionChecks": arr({"type": "object", "required": ["name"],
                                            "properties": {"name": NAME, "onFlavors": arr(STR)}})}}}},
            "status": {"type": "object", "properties": {
                **status_conditions, "flavorsReservation": usage, "flavorsUsage": usage}}}},
        f"ResourceFlavor.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "nodeLabels": STRMAP, "nodeTaints": arr(ref("taint")), "tolerations": arr(ref("toleration")),
                "topologyName": STR}}}},
        f"Topology.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "levels": arr({"type": "object", "required": ["nodeLabel"], "properties": {"nodeLabel": NAME}})}}}},
        f"Cohort.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {"parentName": STR, "parent": STR, "resourceGroups": groups}}}},
        f"AdmissionCheck.{KUEUE}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {"controllerName": STR}},
            "status": {"type": "object", "properties": status_conditions}}},
        f"PodGroup.{VOLCANO}": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": nsmeta,
            "spec": {"type": "object", "properties": {
                "minMember": COUNT, "minResources": ref("resourceList"), "queue": STR}},
            "status": {"type": "object", "properties": {"phase": STR, **status_conditions}}}},
        f"Queue.{VOLCANO}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "capability": ref("resourceList"), "deserved": ref("resourceList"), "parent": STR}},
            "status": {"type": "object", "properties": {"state": STR, "allocated": ref("resourceList")}}}},
        f"Job.{VOLCANO_BATCH}": {"type": "object", "required": ["metadata", "spec"], "properties": {
            "metadata": nsmeta,
            "spec": {"type": "object", "properties": {
                "queue": STR, "minAvailable": COUNT, "schedulerName": STR,
                "tasks": arr({"type": "object", "properties": {
                    "name": STR, "replicas": COUNT, "template": ref("podTemplate")}})}},
            "status": {"type": "object", "properties": {
                "state": {"type": "object", "properties": {"phase": STR}}}}}},
        f"Queue.{KAI}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": meta,
            "spec": {"type": "object", "properties": {
                "parentQueue": STR,
                "resources": {"type": ["object", "null"], "properties": {
                    r: {"type": "object", "properties": {
                        "quota": NUMBER, "limit": NUMBER, "overQuotaWeight": NUMBER}}
                    for r in ("gpu", "cpu", "memory")}}}},
            "status": {"type": "object", "properties": {
                "allocated": ref("resourceList"), "allocatedNonPreemptible": ref("resourceList"),
                "requested": ref("resourceList"), **status_conditions}}}},
        f"PodGroup.{KAI}": {"type": "object", "required": ["metadata"], "properties": {
            "metadata": nsmeta,
            "spec": {"type": "object", "properties": {
                "queue": STR, "minMember": COUNT, "preemptibility": STR, "priorityClassName": STR}},
            "status": {"type": "object", "properties": {"phase": STR, **status_conditions}}}},
    }
