"""`no-runtimeclass` and `quota-exceeded` (never-created pods): RuntimeClass, then ResourceQuota, as the API server
admits a pod.

Sources: plugin/pkg/admission/runtimeclass (mutating: rejects `pod rejected: RuntimeClass "x" not found`
before any validating plugin runs) and plugin/pkg/admission/resourcequota with the pod evaluator of
pkg/quota/v1/evaluator/core/pods.go (a pod counts toward pods, count/pods, cpu/requests.cpu,
limits.cpu, memory/requests.memory, limits.memory, requests.<extended>; it is refused when
status.used + the pod's amount > hard, admitted when equal; scopes select which pods a quota counts).
Manifests start from the lab's manifests/41 (quota-lab, 2 GPUs) and /42 (RuntimeClass nvidia).
"""

from __future__ import annotations

import pytest
import yaml

from conftest import (GPU_TAINT, analyse_dir, bound_pod, copy_lab, cordon, gpu_node, lab_attempt, lab_items, lab_manifest, make_bundle, quota,
                      runtimeclass, verdict, write_manifest)

NS = "quota-lab"
KEY = "quota-lab/quota-exceeded"


def _bundle(tmp_path, quotas, *, pods=(), runtimeclasses="lab", nodes=None, name="bundle"):
    rcs = lab_items("runtimeclasses") if runtimeclasses == "lab" else runtimeclasses
    return make_bundle(tmp_path, name=name, pods=list(pods), nodes=nodes or [gpu_node("gpu-free")], quotas=quotas,
                       runtimeclasses=rcs)


def _m41(tmp_path, **edit):
    """manifests/41 (requests cpu 500m, memory 1Gi; limits nvidia.com/gpu 2), edited."""
    doc = lab_manifest(41)
    c = doc["spec"]["containers"][0]
    for k, v in edit.items():
        if k == "resources":
            c["resources"] = v
        else:
            doc["spec"][k] = v
    return write_manifest(tmp_path / "manifests", doc)


def _word(root, manifest, key=KEY):
    return analyse_dir(root, manifests=[manifest])[key]


# -- quota accounting: every key a pod counts toward ------------------------------------------------------

QUOTA_CASES = [
    # (id, hard, used, resources of the container, word)
    ("gpu-equal-admitted", {"requests.nvidia.com/gpu": "3"}, {"requests.nvidia.com/gpu": "1"}, None, "fits-now"),
    ("gpu-over-refused", {"requests.nvidia.com/gpu": "2"}, {"requests.nvidia.com/gpu": "1"}, None, "quota-exceeded"),
    ("requests.cpu-equal", {"requests.cpu": "1"}, {"requests.cpu": "500m"}, None, "fits-now"),
    ("requests.cpu-over", {"requests.cpu": "1"}, {"requests.cpu": "501m"}, None, "quota-exceeded"),
    ("cpu-equal", {"cpu": "1"}, {"cpu": "0.5"}, None, "fits-now"),
    ("cpu-over", {"cpu": "1"}, {"cpu": "0.6"}, None, "quota-exceeded"),
    ("memory-equal", {"memory": "2Gi"}, {"memory": "1Gi"}, None, "fits-now"),
    ("memory-over", {"memory": "2Gi"}, {"memory": "1073741825"}, None, "quota-exceeded"),
    ("limits.memory-equal", {"limits.memory": "2Gi"}, {"limits.memory": "1Gi"},
     {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi", "nvidia.com/gpu": "2"}}, "fits-now"),
    ("limits.memory-over", {"limits.memory": "2Gi"}, {"limits.memory": "1025Mi"},
     {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi", "nvidia.com/gpu": "2"}}, "quota-exceeded"),
    ("pods-equal", {"pods": "3"}, {"pods": "2"}, None, "fits-now"),
    ("pods-over", {"pods": "3"}, {"pods": "3"}, None, "quota-exceeded"),
    ("count/pods-equal", {"count/pods": "3"}, {"count/pods": "2"}, None, "fits-now"),
    ("count/pods-over", {"count/pods": "3"}, {"count/pods": "3"}, None, "quota-exceeded"),
    ("key-the-pod-does-not-count-toward", {"requests.storage": "1Gi"}, {"requests.storage": "1Gi"}, None, "fits-now"),
]


@pytest.mark.parametrize("hard, used, resources, word", [c[1:] for c in QUOTA_CASES], ids=[c[0] for c in QUOTA_CASES])
def test_quota_refuses_used_plus_requested_over_hard(tmp_path, hard, used, resources, word):
    edit = {"resources": resources} if resources else {}
    root = _bundle(tmp_path, [quota("team-quota", NS, hard, used)])
    v = _word(root, _m41(tmp_path, **edit))
    assert v.word == word
    assert v.target.kind == "Attempt"
    if word == "quota-exceeded":
        [key] = hard
        assert any(key in s and "team-quota" in s for s in v.evidence["admission"]["quota"])
        assert f"ResourceQuota {NS}/team-quota" in v.action and key in v.action  # the quota and the key named


def test_quota_action_says_what_to_free_or_how_high_to_raise_it(tmp_path):
    # the plugin admits when used + requested <= hard: free the excess, or raise hard to used + requested
    root = _bundle(tmp_path, [quota("team-quota", NS, {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "3"})])
    v = _word(root, _m41(tmp_path))
    assert v.word == "quota-exceeded"
    assert v.action == (f"free 1 requests.nvidia.com/gpu in namespace {NS} (3 of 4 used), or raise the hard "
                        f"requests.nvidia.com/gpu of ResourceQuota {NS}/team-quota to at least 5")


def test_quota_action_for_a_pod_alone_larger_than_the_quota_does_not_say_free(tmp_path):
    root = _bundle(tmp_path, [quota("team-quota", NS, {"requests.nvidia.com/gpu": "1"}, {"requests.nvidia.com/gpu": "0"})])
    v = _word(root, _m41(tmp_path))
    assert v.action == (f"ask for at most 1 nvidia.com/gpu (the pod alone asks 2, more than ResourceQuota "
                        f"{NS}/team-quota allows), or raise its hard requests.nvidia.com/gpu to at least 2")


def test_quota_in_another_namespace_does_not_count(tmp_path):
    root = _bundle(tmp_path, [quota("gpu-quota", "other-team", {"requests.nvidia.com/gpu": "0"})])
    assert _word(root, _m41(tmp_path)).word == "fits-now"


def test_every_quota_in_the_namespace_is_checked(tmp_path):
    quotas = [quota("roomy", NS, {"requests.nvidia.com/gpu": "8"}), quota("tight", NS, {"pods": "1"}, {"pods": "1"})]
    v = _word(_bundle(tmp_path, quotas), _m41(tmp_path))
    assert v.word == "quota-exceeded"
    assert "tight" in v.reason


def test_quota_uses_status_used_not_the_pods_in_the_bundle(tmp_path):
    # The ResourceQuota plugin compares against status.used; terminated pods are already out of it (the
    # quota controller does not count Succeeded/Failed pods). Finished GPU pods in pods.json change nothing.
    done = [bound_pod(f"done-{i}", "gpu-free", gpus=2, phase="Succeeded", namespace=NS) for i in range(3)]
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "2"}, {"requests.nvidia.com/gpu": "0"})],
                   pods=done)
    assert _word(root, _m41(tmp_path)).word == "fits-now"
    # …and usage that status.used records counts even if no such pod is in the bundle
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "2"}, {"requests.nvidia.com/gpu": "1"})],
                   name="b2")
    assert _word(root, _m41(tmp_path)).word == "quota-exceeded"


def test_quota_without_status_used_refuses(tmp_path):
    # A quota the controller has not counted yet: the API server refuses with `status unknown for quota`.
    q = quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "4"})
    del q["status"]["used"]
    v = _word(_bundle(tmp_path, [q]), _m41(tmp_path))
    assert v.word == "quota-exceeded"
    assert "status.used" in v.reason


def test_limits_only_extended_resource_counts_as_its_request(tmp_path):
    # manifests/41 gives the GPU only in limits; API defaulting makes requests equal: requests.nvidia.com/gpu=2.
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "1"})])
    v = _word(root, _m41(tmp_path))
    assert v.word == "quota-exceeded"
    assert "requested 2" in v.reason and "hard 1" in v.reason


# -- scopes --------------------------------------------------------------------------------------------

def test_best_effort_quota_does_not_count_a_pod_with_cpu_requests(tmp_path):
    # QoS is decided by cpu and memory only (pkg/apis/core/helper/qos): manifests/41 is Burstable.
    root = _bundle(tmp_path, [quota("best-effort", NS, {"pods": "0"}, scopes=["BestEffort"])])
    assert _word(root, _m41(tmp_path)).word == "fits-now"


def test_best_effort_quota_counts_a_pod_with_only_a_gpu_limit(tmp_path):
    # A pod whose only resource is nvidia.com/gpu has no cpu/memory requests or limits: it is BestEffort.
    root = _bundle(tmp_path, [quota("best-effort", NS, {"pods": "0"}, scopes=["BestEffort"])])
    v = _word(root, _m41(tmp_path, resources={"limits": {"nvidia.com/gpu": "1"}}))
    assert v.word == "quota-exceeded"


def test_not_best_effort_quota_counts_a_burstable_pod(tmp_path):
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "1"}, scopes=["NotBestEffort"])])
    assert _word(root, _m41(tmp_path)).word == "quota-exceeded"


@pytest.mark.parametrize("priority_class, word", [("high-priority", "quota-exceeded"), ("low-priority", "fits-now"),
                                                  (None, "fits-now")])
def test_priority_class_scope_selector(tmp_path, priority_class, word):
    q = quota("high-gpu", NS, {"requests.nvidia.com/gpu": "1"},
              scopeSelector={"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In",
                                                   "values": ["high-priority"]}]})
    edit = {"priorityClassName": priority_class} if priority_class else {}
    assert _word(_bundle(tmp_path, [q]), _m41(tmp_path, **edit)).word == word


@pytest.mark.parametrize("deadline, word", [(3600, "quota-exceeded"), (None, "fits-now")])
def test_terminating_scope_counts_pods_with_active_deadline(tmp_path, deadline, word):
    q = quota("batch-gpu", NS, {"requests.nvidia.com/gpu": "1"}, scopes=["Terminating"])
    edit = {"activeDeadlineSeconds": deadline} if deadline else {}
    assert _word(_bundle(tmp_path, [q]), _m41(tmp_path, **edit)).word == word


# -- RuntimeClass (no-runtimeclass) before quota (quota-exceeded) -------------------------------------------

def test_missing_runtimeclass_is_no_runtimeclass(tmp_path):
    root = _bundle(tmp_path, lab_items("resourcequotas"))
    v = _word(root, write_manifest(tmp_path / "m", lab_manifest(42)), key="lab/runtimeclass-missing")
    assert v.word == "no-runtimeclass"
    assert v.evidence["admission"]["runtimeClassName"] == "nvidia"
    assert v.evidence["admission"]["runtimeclasses_in_bundle"] == ["standard"]
    assert v.action == "create RuntimeClass nvidia, or set runtimeClassName to one that exists (standard)"


def test_runtimeclass_is_checked_before_quota(tmp_path):
    # observed.md: wrong on both counts, only the RuntimeClass error appears; causes.md: the evidence
    # names the quota cause too.
    root = _bundle(tmp_path, lab_items("resourcequotas"))
    v = _word(root, _m41(tmp_path, runtimeClassName="nvidia"))
    assert v.word == "no-runtimeclass"
    assert "gpu-quota" in v.evidence["admission"]["also"]
    assert "requests.nvidia.com/gpu" in v.evidence["admission"]["also"]


def test_existing_runtimeclass_lets_quota_decide(tmp_path):
    rcs = lab_items("runtimeclasses") + [runtimeclass("nvidia", "nvidia")]
    root = _bundle(tmp_path, lab_items("resourcequotas"), runtimeclasses=rcs)
    assert _word(root, _m41(tmp_path, runtimeClassName="nvidia")).word == "quota-exceeded"


def test_admitted_attempt_is_judged_as_a_preflight(tmp_path):
    # causes.md Targets: an admitted attempt is judged as if it had been created, unscheduled.
    # manifests/42 with the RuntimeClass present: gpu-ok is full (filler-a 4 GPUs) -> exhausted.
    rcs = lab_items("runtimeclasses") + [runtimeclass("nvidia", "nvidia")]
    root = make_bundle(tmp_path, pods=[bound_pod("filler-a", "gpu-ok", gpus=4)], nodes=[gpu_node("gpu-ok")],
                       quotas=lab_items("resourcequotas"), runtimeclasses=rcs)
    v = _word(root, write_manifest(tmp_path / "m", lab_manifest(42)), key="lab/runtimeclass-missing")
    assert v.word == "exhausted"
    assert v.to_dict()["kind"] == "Attempt"
    assert v.fit.rows[0]["node"] == "gpu-ok"


def test_manifest_as_json_and_as_a_deployment(tmp_path):
    # --manifest takes YAML or JSON; a workload's pod template is judged under the workload's name.
    root = _bundle(tmp_path, lab_items("resourcequotas"))
    as_json = write_manifest(tmp_path / "m", lab_manifest(41), as_json=True)
    assert _word(root, as_json).word == "quota-exceeded"
    pod = lab_manifest(41)
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "trainer", "namespace": NS},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "trainer"}},
                       "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": pod["spec"]}}}
    v = _word(root, write_manifest(tmp_path / "m", deploy), key=f"{NS}/trainer")
    assert v.word == "quota-exceeded"


# -- the API server's stored answer ----------------------------------------------------------------------------

def test_stored_answer_agrees_with_the_objects(tmp_path):
    vs = analyse_dir(copy_lab(tmp_path, attempts=True))
    for key, says in ((KEY, "quota"), ("lab/runtimeclass-missing", "runtimeclass")):
        adm = vs[key].evidence["admission"]
        assert adm["api_server"]["says"] == says
        assert "is forbidden" in vs[key].evidence["answer"]["stderr"]
        assert adm["agrees"].startswith("yes")
    assert vs[KEY].evidence["admission"]["api_server"]["detail"]["quota"] == "gpu-quota"


def test_stored_refusal_stands_when_the_objects_have_changed_and_says_they_disagree(tmp_path):
    # The quota was raised after the refusal: the person saw `exceeded quota`; the evidence says the
    # objects would admit it now.
    def raise_quota(items):
        for q in items:
            q["spec"]["hard"]["requests.nvidia.com/gpu"] = "4"
            q["status"]["hard"]["requests.nvidia.com/gpu"] = "4"
        return items
    root = copy_lab(tmp_path, attempts=True, edit={"resourcequotas": raise_quota})
    v = verdict(root, KEY)
    assert v.word == "quota-exceeded"
    assert v.evidence["admission"]["agrees"].startswith("no")


def test_stored_text_decides_when_resourcequotas_json_is_missing(tmp_path):
    root = copy_lab(tmp_path, attempts=True, drop=("resourcequotas",))
    v = verdict(root, KEY)
    assert v.word == "quota-exceeded"
    assert v.evidence["admission"]["agrees"].startswith("decided by the API server's text")


def test_attempt_without_answer_and_without_resourcequotas_json_names_the_file(tmp_path):
    root = copy_lab(tmp_path, drop=("resourcequotas",))
    v = _word(root, write_manifest(tmp_path / "m", lab_manifest(41)))
    assert v.word == "insufficient-evidence"
    assert v.evidence["admission"]["missing"] == "resourcequotas.json"
    assert "resourcequotas.json" in v.reason


def test_admitted_answer_is_judged_as_a_preflight(tmp_path):
    # A stored dry-run that the API server admitted (exit 0) goes on to the rest of the order.
    doc = lab_manifest(42)
    doc["spec"].pop("runtimeClassName")
    attempt = lab_attempt(42)  # the stored attempt's shape, with an admitted dry run as its answer
    attempt["sourceText"] = yaml.safe_dump(doc, sort_keys=False)
    attempt["answer"] = {"command": ["kubectl", "apply", "--dry-run=server", "-f", "manifests/42-pod-runtimeclass-missing.yaml"],
                         "exitStatus": 0, "stdout": "pod/runtimeclass-missing created (server dry run)\n", "stderr": ""}
    root = make_bundle(tmp_path, pods=[bound_pod("filler-a", "gpu-ok", gpus=4)], nodes=[gpu_node("gpu-ok")],
                       quotas=lab_items("resourcequotas"), runtimeclasses=lab_items("runtimeclasses"),
                       attempts={"42.json": attempt})
    v = verdict(root, "lab/runtimeclass-missing")
    assert v.word == "exhausted"
    assert v.evidence["admission"]["api_server"]["says"] == "admitted"


# -- what the RuntimeClass plugin adds before quota and scheduling ------------------------------------------

def test_runtimeclass_overhead_counts_toward_quota_for_an_attempt(tmp_path):
    rc = runtimeclass("nvidia", "nvidia")
    rc["overhead"] = {"podFixed": {"cpu": "250m", "memory": "120Mi"}}
    root = _bundle(tmp_path, [quota("cpu-quota", NS, {"requests.cpu": "1"}, {"requests.cpu": "300m"})],
                   runtimeclasses=lab_items("runtimeclasses") + [rc])
    assert _word(root, _m41(tmp_path, runtimeClassName="nvidia")).word == "quota-exceeded"


def test_runtimeclass_scheduling_node_selector_applies_to_an_attempt(tmp_path):
    rc = runtimeclass("nvidia", "nvidia")
    rc["scheduling"] = {"nodeSelector": {"nvidia.com/gpu.deploy.container-toolkit": "true"}}
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "4"})],
                   runtimeclasses=lab_items("runtimeclasses") + [rc])
    assert _word(root, _m41(tmp_path, runtimeClassName="nvidia")).word == "selector-mismatch"


# -- an attempt pinned with spec.nodeName bypasses the scheduler ---------------------------------------------

def _pinned(tmp_path, node):
    doc = lab_manifest(41)
    doc["spec"]["nodeName"] = "gpu-a"
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "4"})], nodes=[node, gpu_node("gpu-b")])
    return _word(root, write_manifest(tmp_path / "m", doc))


def test_pinned_attempt_is_judged_on_its_node_only(tmp_path):
    # gpu-b has room, but the pod is pinned to gpu-a, which is full.
    doc = lab_manifest(41)
    doc["spec"]["nodeName"] = "gpu-a"
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "4"})],
                   nodes=[gpu_node("gpu-a"), gpu_node("gpu-b")], pods=[bound_pod("busy", "gpu-a", gpus=4)])
    v = _word(root, write_manifest(tmp_path / "m", doc))
    assert v.word == "exhausted"
    assert [row["node"] for row in v.fit.rows] == ["gpu-a"]
    # the kubelet admits it on gpu-a or not at all: no "add capacity", no preemption (no scheduler)
    assert v.next_action == ("free 2 nvidia.com/gpu on gpu-a (the pods holding it are listed there), or remove "
                             "spec.nodeName so the scheduler chooses a node")


def test_pinned_attempt_on_a_noexecute_tainted_node_is_refused_by_the_kubelet(tmp_path):
    # pkg/kubelet/lifecycle/predicate.go: "Kubelet is only interested in the NoExecute taint."
    node = gpu_node("gpu-a", taints=[{"effect": "NoExecute", "key": "nvidia.com/gpu", "value": "present"}])
    assert _pinned(tmp_path, node).word == "untolerated-taint"


def test_pinned_attempt_ignores_the_cordon(tmp_path):
    assert _pinned(tmp_path, cordon(gpu_node("gpu-a"))).word == "fits-now"


def test_pinned_attempt_ignores_noschedule_taints(tmp_path):
    assert _pinned(tmp_path, gpu_node("gpu-a", taints=[dict(GPU_TAINT)])).word == "fits-now"


def test_manifest_without_namespace_is_judged_in_default(tmp_path):
    doc = lab_manifest(41)
    del doc["metadata"]["namespace"]
    root = _bundle(tmp_path, [quota("gpu-quota", "default", {"requests.nvidia.com/gpu": "1"})])
    v = _word(root, write_manifest(tmp_path / "m", doc), key="default/quota-exceeded")
    assert v.word == "quota-exceeded"


def test_multi_document_manifest_gives_one_verdict_per_pod(tmp_path):
    a, b = lab_manifest(41), lab_manifest(41)
    b["metadata"]["name"] = "small"
    b["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(a) + "---\n" + yaml.safe_dump(b))
    root = _bundle(tmp_path, lab_items("resourcequotas"))
    got = {k: v.word for k, v in analyse_dir(root, manifests=[path]).items()}
    assert got == {KEY: "quota-exceeded", f"{NS}/small": "fits-now"}
