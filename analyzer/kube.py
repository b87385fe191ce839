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
