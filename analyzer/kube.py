"""Kubernetes API constants, in one home: every module that needs a phase, a taint effect or a well-known key
imports it from here (k8s.io/api/core/v1 types.go and well_known_labels.go / well_known_taints.go)."""

from __future__ import annotations

# Pod phases. Terminated pods hold nothing on their node (the scheduler and `kubectl describe node` skip them).
SUCCEEDED = "Succeeded"
FAILED = "Failed"
TERMINATED: tuple[str, ...] = (SUCCEEDED, FAILED)

# Taint effects. PreferNoSchedule never blocks a pod; the kubelet evicts only for NoExecute.
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
BLOCKING_EFFECTS: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)

# The node controller's taint for spec.unschedulable (a cordon), well_known_taints.go TaintNodeUnschedulable.
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"

# The default scheduler's name (pods of other schedulers are not in its nominator).
DEFAULT_SCHEDULER = "default-scheduler"

# What a pod's metadata says about the queue that holds it: Kueue's queue-name label, Volcano's PodGroup
# annotation (the second is Volcano's own older key), and the ProvisioningRequest it consumes (the second key
# is cluster-autoscaler's deprecated one, still honoured).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_ANNOTATIONS: tuple[str, ...] = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
PROVREQ_ANNOTATIONS: tuple[str, ...] = ("autoscaling.x-k8s.io/consume-provisioning-request",
                                        "cluster-autoscaler.kubernetes.io/consume-provisioning-request")
