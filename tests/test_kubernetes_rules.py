"""Kubernetes rules found wanting in review, each pinned by a test on lab-derived fixtures.

Sources: k8s.io/component-helpers/resource (PodRequests/PodLimits, pod-level resources, KEP-2837);
pkg/quota/v1/evaluator/core/pods.go (hugepages keys); plugin/pkg/admission/runtimeclass (overhead and
scheduling checks); scheduler TaintToleration (every NoSchedule/NoExecute taint blocks); kubectl's YAML
reading (timestamps stay strings); a dry run of a Deployment admits the Deployment, not its pods.
"""

from __future__ import annotations

import json

from conftest import (cli_words, copy_lab, gpu_node, lab_attempt, lab_items, lab_manifest, make_bundle, plain_pod,
                      quota, runtimeclass, verdict, words_of, write_manifest)


def _cpu_node(name: str = "worker-1", cpu: str = "32") -> dict:
    node = gpu_node(name, base="gpu-noplugin", cpu=cpu, labels={"kubernetes.io/hostname": name})
    node["metadata"]["labels"].pop("nvidia.com/gpu.present")  # a plain CPU worker
    return node


def _manifest(name: str, namespace: str = "team-a", **spec_changes) -> dict:
    doc = lab_manifest(41)
    doc["metadata"].update({"name": name, "namespace": namespace})
    doc["spec"].update(spec_changes)
    return doc


# -- pod-level resources -----------------------------------------------------------------------

def test_pod_level_limits_count_toward_limits_quota(tmp_path):
    # PodLimits: pod-level limits replace the containers' aggregate (KEP-2837).
    doc = _manifest("big-limit", resources={"limits": {"memory": "8Gi"}})
    doc["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}
    root = make_bundle(tmp_path, pods=[], nodes=[_cpu_node()], runtimeclasses=[],
                       quotas=[quota("mem", "team-a", {"limits.memory": "4Gi"})])
    v = verdict(root, "team-a/big-limit", manifests=[write_manifest(tmp_path / "m", doc)])
    assert v.word == "quota-exceeded"
    assert "limits.memory" in v.reason


def test_pod_level_limit_is_not_the_request_when_containers_state_one(tmp_path):
    # Defaulting: a pod-level limit alone becomes the request only when no container requests the resource.
    pod = plain_pod("web", cpu="1")
    pod["spec"]["resources"] = {"limits": {"cpu": "64"}}
    root = make_bundle(tmp_path, pods=[pod], nodes=[_cpu_node()])
    v = verdict(root, "lab/web")
    assert v.word == "fits-now"
    assert v.evidence["requests"]["cpu"] == "1"


# -- quota -------------------------------------------------------------------------------------

def test_bare_hugepages_quota_key_is_charged(tmp_path):
    doc = _manifest("huge")
    doc["spec"]["containers"][0]["resources"] = {"requests": {"hugepages-2Mi": "2Mi", "memory": "1Gi"},
                                                 "limits": {"hugepages-2Mi": "2Mi", "memory": "1Gi"}}
    root = make_bundle(tmp_path, pods=[], nodes=[_cpu_node()], runtimeclasses=[],
                       quotas=[quota("hp", "team-a", {"hugepages-2Mi": "0"})])
    assert words_of(root, manifests=[write_manifest(tmp_path / "m", doc)])["team-a/huge"] == "quota-exceeded"


# -- RuntimeClass admission ----------------------------------------------------------------------

def test_overhead_without_runtimeclass_overhead_is_refused(tmp_path):
    doc = _manifest("oh", overhead={"cpu": "250m"})
    root = make_bundle(tmp_path, pods=[], nodes=[_cpu_node()], runtimeclasses=[], quotas=[])
    v = verdict(root, "team-a/oh", manifests=[write_manifest(tmp_path / "m", doc)])
    assert v.word == "unclassified"
    assert "Pod Overhead set without corresponding RuntimeClass defined Overhead" in v.reason


def test_runtimeclass_node_selector_conflict_is_refused(tmp_path):
    rc = runtimeclass("gpu", "nvidia")
    rc["scheduling"] = {"nodeSelector": {"pool": "gpu"}}
    doc = _manifest("conflict", runtimeClassName="gpu", nodeSelector={"pool": "tainted"})
    root = make_bundle(tmp_path, pods=[], nodes=[_cpu_node()], runtimeclasses=[rc], quotas=[])
    v = verdict(root, "team-a/conflict", manifests=[write_manifest(tmp_path / "m", doc)])
    assert v.word == "unclassified"
    assert "conflict" in v.reason


# -- taints ---------------------------------------------------------------------------------------

def test_unschedulable_taint_with_noexecute_blocks(tmp_path):
    # Only node.kubernetes.io/unschedulable:NoSchedule is part of a cordon; the same key with NoExecute is a taint.
    node = _cpu_node()
    node["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute"}]
    root = make_bundle(tmp_path, pods=[plain_pod("web")], nodes=[node])
    v = verdict(root, "lab/web")
    assert v.word == "untolerated-taint"
    assert v.scheduler["rebuilt"] == "0/1 nodes are available: 1 node(s) had untolerated taint(s)."


# -- GPU intent -----------------------------------------------------------------------------------

def test_affinity_keeping_a_pod_off_gpu_nodes_is_not_gpu_intent(tmp_path):
    pod = plain_pod("cpu-only")
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "DoesNotExist"}]}]}}}
    root = make_bundle(tmp_path, pods=[pod], nodes=[_cpu_node()])
    assert words_of(root)["lab/cpu-only"] == "fits-now"


def test_a_hostname_is_not_gpu_intent(tmp_path):
    pod = plain_pod("pinned", nodeSelector={"kubernetes.io/hostname": "gpu-worker-1"})
    root = make_bundle(tmp_path, pods=[pod], nodes=[_cpu_node("gpu-worker-1")])
    assert words_of(root)["lab/pinned"] == "fits-now"


# -- manifests --------------------------------------------------------------------------------------

def test_unquoted_yaml_date_in_a_manifest_is_read_as_a_string(tmp_path):
    """kubectl accepts `built: 2024-01-01` in labels (YAML to JSON keeps the text); so must we."""
    import yaml

    body = yaml.safe_dump(_manifest("dated"), sort_keys=False)
    body = body.replace("case: quota-exceeded", "case: quota-exceeded\n    built: 2024-01-01")
    path = tmp_path / "m.yaml"
    path.write_text(body)
    root = make_bundle(tmp_path, pods=[], nodes=[_cpu_node()], runtimeclasses=[], quotas=[])
    v = verdict(root, "team-a/dated", manifests=[path])
    assert v.word == "no-gpu-node"  # judged: it asks nvidia.com/gpu and the only node has none


def test_stored_yaml_attempt_with_a_set_is_a_finding_not_a_crash(tmp_path):
    attempt = lab_attempt(41)
    attempt["sourceText"] = attempt["sourceText"].replace("case: quota-exceeded", "case: !!set {a, b}")
    root = copy_lab(tmp_path, attempts=False)
    (root / "attempts").mkdir()
    (root / "attempts" / "41.json").write_text(json.dumps(attempt))
    lines = cli_words(root, status=2)
    assert ("lab/exhausted", "exhausted") in lines
    assert all(key != "quota-lab/quota-exceeded" for key, _ in lines)


def test_a_deployment_dry_run_success_does_not_admit_its_pods(tmp_path):
    # `apply --dry-run=server` of a Deployment admits the Deployment; its pods meet admission later.
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": "lab"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "t"}},
                       "template": {"metadata": {"labels": {"app": "t"}}, "spec": lab_manifest(42)["spec"]}}}
    attempt = {"apiVersion": "gpu-triage/v1", "kind": "Attempt", "source": "trainer.yaml", "object": deploy,
               "answer": {"command": ["kubectl", "apply", "--dry-run=server", "-f", "trainer.yaml"], "exitStatus": 0,
                          "stdout": "deployment.apps/trainer created (server dry run)\n", "stderr": ""}}
    root = copy_lab(tmp_path, drop=("runtimeclasses",))
    (root / "attempts").mkdir()
    (root / "attempts" / "trainer.json").write_text(json.dumps(attempt))
    v = verdict(root, "lab/trainer")
    assert v.word == "insufficient-evidence"
    assert v.evidence["admission"]["missing"] == "runtimeclasses.json"


# -- owners and events ---------------------------------------------------------------------------

def test_a_later_non_admission_failure_ends_the_owner_refusal(tmp_path):
    events = [e for e in lab_items("events")]
    refusal = {"apiVersion": "v1", "kind": "Event", "count": 1, "type": "Warning", "reason": "FailedCreate",
               "involvedObject": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "trainer-6d9", "namespace": "lab"},
               "metadata": {"name": "trainer-6d9.1", "namespace": "lab"},
               "firstTimestamp": "2026-11-29T17:20:00Z", "lastTimestamp": "2026-11-29T17:20:00Z",
               "message": 'Error creating: pods "trainer-6d9-abcde" is forbidden: exceeded quota: gpu-quota, requested: '
                          "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1"}
    later = dict(refusal, metadata={"name": "trainer-6d9.2", "namespace": "lab"},
                 firstTimestamp="2026-11-29T17:25:00Z", lastTimestamp="2026-11-29T17:25:00Z",
                 message="Error creating: Timeout: request did not complete within requested timeout")
    root = copy_lab(tmp_path, edit={"events": lambda items: items + [refusal]})
    assert words_of(root).get("lab/replicaset/trainer-6d9") == "quota-exceeded"
    root2 = copy_lab(tmp_path, name="lab2", edit={"events": lambda items: items + [refusal, later]})
    assert "lab/replicaset/trainer-6d9" not in words_of(root2)
    del events


def test_unparsable_event_times_sort_oldest(tmp_path):
    from analyzer.model.events import event_time

    assert event_time({"series": {"lastObservedTime": "zzz"}, "eventTime": "2026-11-29T17:17:17.1Z"}) == "2026-11-29T17:17:17.100000Z"
    assert event_time({"lastTimestamp": "garbage"}) == ""
    assert event_time({"lastTimestamp": "2026-11-29T17:17:17Z"}) > event_time({"eventTime": "2026-11-29T17:17:16.999999Z"})


# -- exhausted that can never fit ----------------------------------------------------------------------

def test_request_above_every_allocatable_is_too_large_not_fragmented(tmp_path):
    pod = plain_pod("huge-cpu", cpu="64")
    root = make_bundle(tmp_path, pods=[pod], nodes=[_cpu_node("w1"), _cpu_node("w2")])
    v = verdict(root, "lab/huge-cpu")
    assert v.word == "exhausted"
    assert v.fit.too_large == ["cpu"]
    assert v.fit.fragmented is False
