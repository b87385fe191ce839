"""A node that failed to come is `scale-up-blocked`, not `scaling-up` (causes.md; autoscalers.md, its corrections
from the sources). From the real recordings karpenter-nodepool-limits-v1.36 and ca-scale-up-in-flight-v1.36, changed
only where a case needs, in the components' own texts:
- Karpenter v1.14 pkg/controllers/nodeclaim/lifecycle/launch.go: on insufficient capacity a Warning
  `InsufficientCapacityError` event on the NodeClaim, "NodeClaim %s event: %s" (lifecycle/events.go), then the
  NodeClaim deleted; any other launch error sets Launched Unknown with reason `LaunchFailed` (or the cloud
  provider's CreateError reason) and the error as message;
- cluster-autoscaler 1.36 core/scaleup/orchestrator/executor.go `FailedToScaleUpGroup` "Scale-up failed for group %s:
  %v" and clusterstate/clusterstate.go `ScaleUpFailed` "Failed adding %v nodes to group %v due to %v; source errors:
  %v", on its status ConfigMap; GKE's managed autoscaler writes `FailedScaleUp` on the pod.
"""

from __future__ import annotations

import copy
from pathlib import Path

from test_autoscalers import CA, CA_POD, GROUP, K_POD, KARPENTER, Bundle, ca_event, cond, karpenter_event, nodeclaim, nominate

from analyzer import words

CLAIM = "gpu-x7k2p"
# karpenter-provider-aws: the fleet's error for the offerings it tried, wrapped as insufficient capacity
ICE = ("creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do "
       "not have sufficient g5.12xlarge capacity in the Availability Zone you requested (us-west-2a).")
QUOTA = ("creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU "
         "capacity than your current vCPU limit of 64 allows for the instance bucket that the specified instance type "
         "belongs to.")


def _claim_event(b: Bundle, message: str, at: str = "2026-12-01T23:00:09Z") -> None:
    doc = b.load("events.json")
    e = copy.deepcopy(karpenter_event(b, "InsufficientCapacityError", f"NodeClaim {CLAIM} event: {message}", at))
    e["involvedObject"] = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": CLAIM, "uid": f"uid-{CLAIM}"}
    e["metadata"].update(name=f"{CLAIM}.ice", namespace="default")
    doc["items"].append(e)
    b.save("events.json", doc)


def test_karpenter_insufficient_capacity_then_deleted_is_scale_up_blocked_quoting_the_cloud(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nominate(b, CLAIM)  # the NodeClaim it nominated is gone: deleted after the failed launch
    _claim_event(b, ICE)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert CLAIM in v.reason and "InsufficientInstanceCapacity" in v.reason and "deleted" in v.reason
    assert v.evidence["autoscaler"]["launch_failed"]["reason"] == "InsufficientCapacityError"


def test_a_cloud_quota_counts_as_insufficient_capacity(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nominate(b, CLAIM)
    _claim_event(b, QUOTA)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED and "VcpuLimitExceeded" in v.reason


def test_launched_unknown_with_a_launch_error_is_scale_up_blocked(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, CLAIM, [cond("Launched", "Unknown", "LaunchFailed", "creating instance, getting launch template "
                              "configs, resolving ami: no amis exist given constraints")])
    nominate(b, CLAIM)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert f"NodeClaim {CLAIM}" in v.reason and "LaunchFailed" in v.reason and "no amis exist" in v.reason


def test_a_nodeclaim_still_launching_stays_scaling_up(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, CLAIM, [cond("Launched", "Unknown", "AwaitingReconciliation", "object is awaiting reconciliation")])
    nominate(b, CLAIM)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALING_UP and CLAIM in v.reason


def test_a_nodeclaim_with_unknown_reasons_is_an_answer(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, CLAIM, [cond("Launched", "Maybe", "\x1b[31mNoSuchReason" * 50, "m" * 5000),
                         cond("Registered", "Unknown", "", "")])
    nominate(b, CLAIM)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED and CLAIM in v.reason


def _group_event(b: Bundle, reason: str, message: str, at: str | None) -> None:
    """A cluster-autoscaler event on its status ConfigMap, shaped as the recorded ScaledUpGroup."""
    doc = b.load("events.json")
    e = copy.deepcopy(next(x for x in doc["items"] if x["reason"] == "ScaledUpGroup"))
    e.update(reason=reason, type="Warning", message=message)
    if at is not None:
        e.update(firstTimestamp=at, lastTimestamp=at)
    e["metadata"].update(name=f"cluster-autoscaler-status.{reason.lower()}", uid=f"uid-{reason}")
    doc["items"].append(e)
    b.save("events.json", doc)


def test_ca_group_failure_after_the_trigger_is_scale_up_blocked_quoting_the_cloud(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    _group_event(b, "FailedToScaleUpGroup", f"Scale-up failed for group {GROUP}: InsufficientInstanceCapacity: We "
                 "currently do not have sufficient g5.2xlarge capacity in the Availability Zone you requested "
                 "(us-west-2a).", "2026-12-01T22:53:40Z")
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert GROUP in v.reason and "FailedToScaleUpGroup" in v.reason and "InsufficientInstanceCapacity" in v.reason


def test_ca_group_failure_before_the_trigger_leaves_it_scaling_up(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    _group_event(b, "ScaleUpFailed", f"Failed adding 1 nodes to group {GROUP} due to "
                 "OutOfResource.InsufficientInstanceCapacity; source errors: We currently do not have sufficient "
                 "g5.2xlarge capacity", "2026-12-01T22:40:00Z")
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALING_UP


def test_ca_backoff_with_scale_up_failed_quotes_it(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    b.group(scaleUp__status="Backoff", scaleUp__backoffInfo={
        "errorCode": "OutOfResource.InsufficientInstanceCapacity",
        "errorMessage": "We currently do not have sufficient g5.2xlarge capacity"})
    _group_event(b, "ScaleUpFailed", f"Failed adding 1 nodes to group {GROUP} due to "
                 "OutOfResource.InsufficientInstanceCapacity; source errors: We currently do not have sufficient "
                 "g5.2xlarge capacity", None)
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED and "Backoff" in v.reason and "Failed adding 1 nodes" in v.reason


def test_gke_failed_scale_up_on_the_pod_is_scale_up_blocked(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    text = ("Node scale up in zones us-central1-a associated with this pod failed: GCE quota exceeded. Pod is at risk "
            "of not being scheduled.")
    b.set_events(CA_POD, {"FailedScheduling", "TriggeredScaleUp"}, ca_event(b, "FailedScaleUp", text, "2026-12-01T22:53:50Z"))
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED and "GCE quota exceeded" in v.reason
