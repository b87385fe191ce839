"""Controller refusals (causes.md Targets): owners whose FailedCreate events say
`Error creating: pods "x-" is forbidden: …`, answered once per owner with desired vs existing replicas.

Event and object shapes follow observed.md (a ReplicaSet refused by quota writes one FailedCreate per
attempted pod name, count 1 each, later `(combined from similar events): …`; a Job refused for a missing
RuntimeClass writes one FailedCreate with a growing count). Events are the lab's controller events
(count, firstTimestamp, lastTimestamp, source.component) re-aimed; pod templates are the lab's pod spec.
"""

from __future__ import annotations

import copy
import uuid

import pytest

from conftest import (analyse_dir, bound_pod, cli_words, gpu_node, lab_event, lab_items, lab_pod, make_bundle, quota,
                      run_cli, verdict)

RS = "trainer-685565f977"
QUOTA_MSG = ('Error creating: pods "{pod}" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, '
             'used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2')
RC_MSG = 'Error creating: pods "batch-rc-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'


def _template(**spec):
    """A pod template made from the lab's `exhausted` pod spec (what a Deployment would stamp out)."""
    s = copy.deepcopy(lab_pod("exhausted")["spec"])
    for key in ("nodeSelector", "volumes", "serviceAccount", "nodeName"):
        s.pop(key, None)
    s["containers"][0].pop("volumeMounts", None)
    s["restartPolicy"] = "Always"
    s.update(spec)
    return {"metadata": {"labels": {"app": "trainer", "pod-template-hash": RS.rsplit("-", 1)[1]}}, "spec": s}


def replicaset(name=RS, namespace="quota-lab", *, replicas=3, existing=2, **spec):
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas),
                            "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                            "deployment.kubernetes.io/revision": "1"},
            "creationTimestamp": "2026-11-29T17:17:18Z", "generation": 1,
            "labels": {"app": "trainer", "pod-template-hash": name.rsplit("-", 1)[1]},
            "name": name, "namespace": namespace,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "Deployment", "name": name.rsplit("-", 1)[0], "uid": str(uuid.uuid4())}],
            "resourceVersion": "340", "uid": str(uuid.uuid4())},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {"app": "trainer", "pod-template-hash": name.rsplit("-", 1)[1]}},
                 "template": _template(**spec)},
        "status": {"availableReplicas": existing, "fullyLabeledReplicas": existing, "observedGeneration": 1,
                   "readyReplicas": existing, "replicas": existing,
                   "conditions": [{"lastTransitionTime": "2026-11-29T17:17:19Z", "reason": "FailedCreate", "status": "True",
                                   "type": "ReplicaFailure",
                                   "message": QUOTA_MSG.format(pod=f"{name}-x9k2p").removeprefix("Error creating: ")}]},
    }


def job(name="batch-rc", namespace="lab", *, parallelism=1, completions=1, active=0, succeeded=None, **spec):
    uid = str(uuid.uuid4())
    t = _template(**spec)
    t["spec"]["restartPolicy"] = "Never"
    t["metadata"]["labels"] = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                               "controller-uid": uid, "job-name": name}
    status = {"active": active, "ready": 0, "startTime": "2026-11-29T17:17:18Z", "terminating": 0,
              "uncountedTerminatedPods": {}}
    if succeeded is not None:
        status["succeeded"] = succeeded
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"creationTimestamp": "2026-11-29T17:17:18Z", "generation": 1,
                     "labels": dict(t["metadata"]["labels"]), "name": name, "namespace": namespace,
                     "resourceVersion": "350", "uid": uid},
        "spec": {"backoffLimit": 6, "completionMode": "NonIndexed", "completions": completions, "manualSelector": False,
                 "parallelism": parallelism, "podReplacementPolicy": "TerminatingOrFailed", "suspend": False,
                 "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}, "template": t},
        "status": status,
    }


def failed_create(kind, name, namespace, message, *, count=1, at="2026-11-29T17:17:19Z", first=None):
    """A controller FailedCreate event, shaped like the lab's node-controller events."""
    e = lab_event("gpu-ok.")
    component = {"ReplicaSet": "replicaset-controller", "Job": "job-controller",
                 "StatefulSet": "statefulset-controller", "DaemonSet": "daemonset-controller"}[kind]
    api = "batch/v1" if kind == "Job" else "apps/v1"
    e["involvedObject"] = {"apiVersion": api, "kind": kind, "name": name, "namespace": namespace,
                           "resourceVersion": "341", "uid": str(uuid.uuid4())}
    e["metadata"].update({"name": f"{name}.{uuid.uuid4().hex[:16]}", "namespace": namespace, "uid": str(uuid.uuid4()),
                          "creationTimestamp": first or at})
    e.update({"reason": "FailedCreate", "type": "Warning", "message": message, "count": count,
              "firstTimestamp": first or at, "lastTimestamp": at, "reportingComponent": component,
              "source": {"component": component}})
    return e


def _rs_events(name=RS, namespace="quota-lab"):
    """observed.md: one event per attempted pod name (count 1), then `(combined from similar events): …`."""
    out = [failed_create("ReplicaSet", name, namespace, QUOTA_MSG.format(pod=f"{name}-{suffix}"), at=f"2026-11-29T17:17:{s}Z")
           for suffix, s in (("x9k2p", 19), ("bq7ws", 19), ("m4zrt", 20), ("t2l8c", 20))]
    out.append(failed_create("ReplicaSet", name, namespace,
                             "(combined from similar events): " + QUOTA_MSG.format(pod=f"{name}-w5n6h"),
                             count=6, first="2026-11-29T17:17:21Z", at="2026-11-29T17:19:40Z"))
    return out


def _full_quota():
    return quota("gpu-quota", "quota-lab", {"requests.nvidia.com/gpu": "2"}, {"requests.nvidia.com/gpu": "2"})


def _running_replicas(name=RS, n=2):
    pods = []
    for i in range(n):
        p = bound_pod(f"{name}-run{i}", "gpu-ok", gpus=1, namespace="quota-lab")
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name,
                                             "controller": True, "blockOwnerDeletion": True, "uid": str(uuid.uuid4())}]
        pods.append(p)
    return pods


def _bundle(tmp_path, *, replicasets=None, jobs=None, events=(), quotas=None, runtimeclasses="lab", pods=None, name="bundle"):
    return make_bundle(tmp_path, name=name, pods=pods if pods is not None else _running_replicas(),
                       nodes=[gpu_node("gpu-ok")], quotas=quotas if quotas is not None else [_full_quota()],
                       runtimeclasses=lab_items("runtimeclasses") if runtimeclasses == "lab" else runtimeclasses,
                       events=list(events), replicasets=replicasets, jobs=jobs)


# -- ReplicaSet refused by quota, Job refused for a missing RuntimeClass --------------------------------------

def test_replicaset_refused_by_quota_is_one_verdict(tmp_path):
    root = _bundle(tmp_path, replicasets=[replicaset()], events=_rs_events())
    vs = analyse_dir(root)
    key = f"quota-lab/replicaset/{RS}"
    assert list(vs) == [key]  # one verdict for five events; the running replicas are not targets
    v = vs[key]
    assert v.word == "quota-exceeded"
    assert v.target.kind == "ReplicaSet"
    owner = v.evidence["owner"]
    assert (owner["desired"], owner["existing"]) == (3, 2)
    assert owner["events_counted"] == 10
    assert owner["event"].startswith("(combined from similar events): ")  # the latest event, verbatim
    adm = v.evidence["admission"]
    assert adm["api_server"]["says"] == "quota"
    assert adm["agrees"].startswith("yes")


def test_job_refused_for_missing_runtimeclass(tmp_path):
    events = [failed_create("Job", "batch-rc", "lab", RC_MSG, count=7, first="2026-11-29T17:17:19Z", at="2026-11-29T17:21:00Z")]
    root = _bundle(tmp_path, jobs=[job(runtimeClassName="nvidia")], events=events)
    v = verdict(root, "lab/job/batch-rc")
    assert v.word == "no-runtimeclass"
    assert v.target.kind == "Job"
    owner = v.evidence["owner"]
    assert (owner["desired"], owner["existing"]) == (1, 0)
    assert owner["events_counted"] == 7
    assert v.evidence["admission"]["agrees"].startswith("yes")


def test_owner_keys_in_words_output(tmp_path):
    # Owners as namespace/kind/name with the kind in lower case.
    events = _rs_events() + [failed_create("Job", "batch-rc", "lab", RC_MSG, count=3)]
    root = _bundle(tmp_path, replicasets=[replicaset()], jobs=[job(runtimeClassName="nvidia")], events=events)
    assert sorted(cli_words(root)) == [("lab/job/batch-rc", "no-runtimeclass"),
                                       (f"quota-lab/replicaset/{RS}", "quota-exceeded")]
    assert cli_words(root, "-n", "lab") == [("lab/job/batch-rc", "no-runtimeclass")]


def test_owner_with_all_replicas_is_not_listed(tmp_path):
    # The controller has since created every pod it wants (quota raised): resolved, not a target.
    root = _bundle(tmp_path, replicasets=[replicaset(replicas=2, existing=2)], events=_rs_events())
    assert analyse_dir(root) == {}


def test_job_that_completed_its_work_is_not_listed(tmp_path):
    events = [failed_create("Job", "batch-rc", "lab", RC_MSG, count=2)]
    root = _bundle(tmp_path, jobs=[job(completions=1, succeeded=1, runtimeClassName="nvidia")], events=events)
    assert analyse_dir(root) == {}


@pytest.mark.parametrize("present", [None, []], ids=["no-replicasets-json", "replicaset-not-in-it"])
def test_owner_missing_from_bundle_the_event_text_decides(tmp_path, present):
    root = _bundle(tmp_path, replicasets=present, events=_rs_events())
    v = verdict(root, f"quota-lab/replicaset/{RS}")
    assert v.word == "quota-exceeded"
    assert "replicasets.json" in v.evidence["owner"]["object"]
    assert v.evidence["admission"]["agrees"].startswith("decided by the API server's text")


def test_job_missing_from_bundle_runtimeclass_text_decides(tmp_path):
    events = [failed_create("Job", "batch-rc", "lab", RC_MSG, count=4)]
    v = verdict(_bundle(tmp_path, jobs=None, events=events), "lab/job/batch-rc")
    assert v.word == "no-runtimeclass"


def test_refusal_text_stands_when_quota_was_raised_since(tmp_path):
    raised = quota("gpu-quota", "quota-lab", {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "2"})
    root = _bundle(tmp_path, replicasets=[replicaset()], events=_rs_events(), quotas=[raised])
    v = verdict(root, f"quota-lab/replicaset/{RS}")
    assert v.word == "quota-exceeded"
    assert v.evidence["admission"]["agrees"].startswith("no")


def test_pod_security_refusal_is_admission_denied_with_the_text(tmp_path):
    # `pods "x" is forbidden: violates PodSecurity …` is a policy's refusal: causes.md `admission-denied`.
    msg = ('Error creating: pods "trainer-685565f977-q8d7v" is forbidden: violates PodSecurity "restricted:latest": '
           'allowPrivilegeEscalation != false (container "cuda" must set securityContext.allowPrivilegeEscalation=false)')
    events = [failed_create("ReplicaSet", RS, "quota-lab", msg)]
    root = _bundle(tmp_path, replicasets=[replicaset()], events=events,
                   quotas=[quota("gpu-quota", "quota-lab", {"requests.nvidia.com/gpu": "8"}, {"requests.nvidia.com/gpu": "2"})])
    v = verdict(root, f"quota-lab/replicaset/{RS}")
    assert v.word == "admission-denied"
    assert "Pod Security restricted:latest" in v.reason and "allowPrivilegeEscalation" in v.reason


def test_failed_create_that_is_not_a_refusal_is_not_a_target(tmp_path):
    msg = 'Error creating: Internal error occurred: resource quota evaluation timed out'
    root = _bundle(tmp_path, replicasets=[replicaset()], events=[failed_create("ReplicaSet", RS, "quota-lab", msg)])
    assert analyse_dir(root) == {}


def test_events_of_two_owners_do_not_mix(tmp_path):
    other = "trainer-7d9f8b6c5d"
    rs_other = replicaset(other, replicas=1, existing=0, runtimeClassName="nvidia")
    events = _rs_events() + [failed_create("ReplicaSet", other, "quota-lab",
                                           f'Error creating: pods "{other}-abcde" is forbidden: pod rejected: '
                                           'RuntimeClass "nvidia" not found', count=2)]
    root = _bundle(tmp_path, replicasets=[replicaset(), rs_other], events=events)
    vs = analyse_dir(root)
    assert {k: v.word for k, v in vs.items()} == {f"quota-lab/replicaset/{RS}": "quota-exceeded",
                                                  f"quota-lab/replicaset/{other}": "no-runtimeclass"}
    assert vs[f"quota-lab/replicaset/{other}"].evidence["owner"]["events_counted"] == 2
    assert (vs[f"quota-lab/replicaset/{other}"].evidence["owner"]["desired"],
            vs[f"quota-lab/replicaset/{other}"].evidence["owner"]["existing"]) == (1, 0)


def statefulset(name="trainer", namespace="quota-lab", *, replicas=3, existing=2, **spec):
    t = _template(**spec)
    t["metadata"]["labels"] = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"creationTimestamp": "2026-11-29T17:17:18Z", "generation": 1, "labels": {"app": name},
                     "name": name, "namespace": namespace, "resourceVersion": "360", "uid": str(uuid.uuid4())},
        "spec": {"replicas": replicas, "podManagementPolicy": "OrderedReady", "serviceName": name,
                 "selector": {"matchLabels": {"app": name}}, "template": t,
                 "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"}},
        "status": {"availableReplicas": existing, "collisionCount": 0, "currentReplicas": existing,
                   "observedGeneration": 1, "readyReplicas": existing, "replicas": existing},
    }


def test_statefulset_refused_by_quota(tmp_path):
    # The StatefulSet controller words its event differently (stateful_pod_control.go recordPodEvent):
    # `create Pod NAME in StatefulSet SET failed error: pods "NAME" is forbidden: …`.
    msg = ('create Pod trainer-2 in StatefulSet trainer failed error: pods "trainer-2" is forbidden: exceeded quota: '
           'gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, '
           'limited: requests.nvidia.com/gpu=2')
    root = make_bundle(tmp_path, pods=[], nodes=[gpu_node("gpu-ok")], quotas=[_full_quota()],
                       runtimeclasses=lab_items("runtimeclasses"), statefulsets=[statefulset()],
                       events=[failed_create("StatefulSet", "trainer", "quota-lab", msg, count=5)])
    v = verdict(root, "quota-lab/statefulset/trainer")
    assert v.word == "quota-exceeded"
    assert (v.evidence["owner"]["desired"], v.evidence["owner"]["existing"]) == (3, 2)


def test_why_answers_for_an_owner(tmp_path):
    root = _bundle(tmp_path, replicasets=[replicaset()], events=_rs_events())
    assert run_cli("why", root, f"quota-lab/replicaset/{RS}", check=True).stdout == "quota-exceeded\n"


def test_owners_no_event_names_are_validated_and_dropped_an_invalid_named_one_is_kept(tmp_path):
    """Only the owners a FailedCreate event names are kept after validation (pipeline._Wanted; a Deployment leaves
    ten old ReplicaSets behind): the others' findings still count, and a named owner that is invalid is still
    named invalid at its own JSON path among all the file's items."""
    from analyzer.pipeline import Options, analyse

    others = [replicaset(f"web-{i:05d}a", replicas=1, existing=1) for i in range(3)]
    broken = replicaset()
    broken["spec"]["replicas"] = "three"  # the schema wants an integer
    also_broken = replicaset("old-00000b")
    also_broken["spec"]["replicas"] = "two"  # invalid too, but no event names it
    root = _bundle(tmp_path, replicasets=[*others, also_broken, broken], events=_rs_events())
    analysis = analyse(root, Options())
    doc = analysis.loaded.documents["replicasets"]
    assert [owner_key for owner_key in (i["metadata"]["name"] for i in doc.items)] == [RS]
    assert doc.item_path(0) == "$.items[4]" and 0 in doc.invalid
    found = [str(v) for v in analysis.loaded.violations if v.file == "replicasets.json"]
    assert [f.split(":")[1].strip() for f in found] == ["$.items[3].spec.replicas", "$.items[4].spec.replicas"]
    v = {x.key: x for x in analysis.verdicts}[f"quota-lab/replicaset/{RS}"]
    assert v.word == "quota-exceeded"
    assert v.evidence["owner"]["object"].startswith(f"ReplicaSet quota-lab/{RS} is invalid: replicasets.json: $.items[4].spec.replicas")
