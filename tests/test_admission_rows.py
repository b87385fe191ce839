"""The admission rows in the API server's order (admission.md): `invalid-spec`, `limit-range`, `admission-denied`,
`admission-unavailable` beside `no-runtimeclass` and `quota-exceeded`.

Each row is answered from an attempt's recorded answer, from a controller's FailedCreate event (the owner named,
desired vs existing replicas) and, where the bundle can rebuild it, from a manifest with no answer, which must give
the recorded answer's word. Texts are the real components' (see tests/admission_fixtures.py ANSWERS for the
source of each); manifests start from the lab's manifests/41 (quota-lab, nvidia.com/gpu limit 2).
"""

from __future__ import annotations

import pytest
import yaml

from admission_fixtures import (ANSWERS, binding, configuration, container_limit, endpointslice, istio_injector,
                                kyverno, limitrange, policy, webhook)
from conftest import (analyse_dir, gpu_node, lab_attempt, lab_items, lab_manifest, make_bundle, quota, run_cli,
                      write_manifest)
from test_owners import failed_create, replicaset

NS = "quota-lab"
KEY = "quota-lab/quota-exceeded"
KYVERNO_SVC = ("kyverno", "kyverno-svc")
GPU_MAX_1 = container_limit(max={"nvidia.com/gpu": "1"})


def _namespaces(**labels: dict) -> list[dict]:
    """The lab's namespaces, with extra labels per namespace name."""
    out = lab_items("namespaces")
    for ns in out:
        ns["metadata"].setdefault("labels", {}).update(labels.get(ns["metadata"]["name"].replace("-", "_"), {}))
    return out


def _bundle(tmp_path, *, quotas=(), attempts=None, events=None, replicasets=None, name="bundle", namespaces=None,
            **extra):
    return make_bundle(tmp_path, name=name, pods=[], nodes=[gpu_node("gpu-ok")], quotas=list(quotas),
                       runtimeclasses=lab_items("runtimeclasses"), namespaces=namespaces or _namespaces(),
                       attempts=attempts, events=events, replicasets=replicasets,
                       extra={k: list(v) for k, v in extra.items()})


def _m41(tmp_path, *, name="quota-exceeded", namespace=NS, labels=None, **resources):
    doc = lab_manifest(41)
    doc["metadata"].update({"name": name, "namespace": namespace})
    if labels:
        doc["metadata"]["labels"] = labels
    if resources:
        doc["spec"]["containers"][0]["resources"] = resources
    return write_manifest(tmp_path / "manifests", doc, name=f"{namespace}-{name}.yaml")


def _attempt(stderr: str, resources: dict | None = None) -> dict:
    """The lab's stored attempt of manifests/41 with another answer (and the container's resources edited)."""
    a = lab_attempt(41)
    a["answer"]["stderr"] = stderr
    if resources:
        doc = lab_manifest(41)
        doc["spec"]["containers"][0]["resources"] = resources
        a["sourceText"] = yaml.safe_dump(doc, sort_keys=False)
    return {"41-pod-quota-exceeded.json": a}


# What each row's bundle holds so that the objects rebuild the refusal the answer records.
INVALID = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "2", "cpu": "500m"}}
REBUILD = {
    "invalid-spec": dict(resources=INVALID, objects={}),
    "limit-range": dict(resources=None, objects={"limitranges": [limitrange("gpu-limits", NS, GPU_MAX_1)]}),
    "admission-unavailable": dict(resources=None, objects={
        "validatingwebhookconfigurations": [kyverno()], "endpointslices": [endpointslice(KYVERNO_SVC, False)]}),
}


@pytest.mark.parametrize("word", sorted(ANSWERS))
def test_recorded_answer_decides_the_row(tmp_path, word):
    root = _bundle(tmp_path, attempts=_attempt(ANSWERS[word]))
    v = analyse_dir(root)[KEY]
    assert v.word == word
    said = v.evidence["admission"]["api_server"]
    if word == "admission-denied":
        assert said["detail"]["webhook"] == "validate.kyverno.svc-fail"
        assert "blocked due to the following policies" in said["detail"]["message"]
    if word == "admission-unavailable":
        assert said["detail"]["service"] == "kyverno-svc"
    if word == "limit-range":
        assert said["detail"] == {"resource": "nvidia.com/gpu", "per": "Container", "bound": "1"}
    if word == "invalid-spec":
        assert said["detail"]["field"] == "spec.containers[0].resources.requests"


@pytest.mark.parametrize("word", sorted(REBUILD))
def test_manifest_rebuilds_the_word_the_api_server_answered(tmp_path, word):
    """--manifest on a laptop gives the recorded answer's word for every rebuildable row."""
    case = REBUILD[word]
    resources = case["resources"] or {}
    recorded = _bundle(tmp_path, name="recorded", attempts=_attempt(ANSWERS[word], case["resources"]), **case["objects"])
    rebuilt = _bundle(tmp_path, name="rebuilt", **case["objects"])
    want = analyse_dir(recorded)[KEY]
    got = analyse_dir(rebuilt, manifests=[_m41(tmp_path, **resources)])[KEY]
    assert want.word == got.word == word
    assert want.evidence["admission"]["agrees"].startswith("yes"), want.evidence["admission"]["agrees"]
    assert got.evidence["admission"]["agrees"].startswith("no API server answer")


def test_rebuilt_reasons_name_the_objects(tmp_path):
    root = _bundle(tmp_path, limitranges=[limitrange("gpu-limits", NS, GPU_MAX_1)],
                   validatingwebhookconfigurations=[kyverno()], endpointslices=[endpointslice(KYVERNO_SVC, False)])
    v = analyse_dir(root, manifests=[_m41(tmp_path)])[KEY]
    assert v.word == "limit-range"
    assert v.reason == "LimitRange gpu-limits: maximum nvidia.com/gpu usage per Container is 1, but limit is 2"
    # the validating webhook would refuse it too, after the LimitRange: named in the evidence
    assert "kyverno-svc" in v.evidence["admission"]["also"]
    v = analyse_dir(_bundle(tmp_path, name="b2", validatingwebhookconfigurations=[kyverno()],
                            endpointslices=[endpointslice(KYVERNO_SVC, False, False)]),
                    manifests=[_m41(tmp_path)])[KEY]
    assert v.word == "admission-unavailable"
    assert "validate.kyverno.svc-fail" in v.reason and "Service kyverno/kyverno-svc has no ready endpoint" in v.reason
    assert "kyverno-svc-7d9c6b5f4-0x2kq" in v.reason  # the webhook's pods, not ready


# -- controller refusals: the owner named, desired vs existing replicas ------------------------------------------

RS = "trainer-685565f977"
EVENTS = {
    "invalid-spec": f'Error creating: Pod "{RS}-x9k2p" is invalid: spec.containers[0].resources.requests: Invalid value: '
                    f'"2": must be equal to nvidia.com/gpu limit of 1',
    "limit-range": f'Error creating: pods "{RS}-x9k2p" is forbidden: maximum nvidia.com/gpu usage per Container is 1, '
                   f'but limit is 2',
    "admission-denied": 'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: [gpu-limit] '
                        'container <cuda> asks for 2 GPUs, at most 1 is allowed',
    "admission-unavailable": 'Error creating: Internal error occurred: failed calling webhook "validate.kyverno.svc-fail": '
                             'failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s": '
                             'no endpoints available for service "kyverno-svc"',
}


@pytest.mark.parametrize("word", sorted(EVENTS))
def test_failed_create_event_decides_the_row_for_the_owner(tmp_path, word):
    root = _bundle(tmp_path, events=[failed_create("ReplicaSet", RS, NS, EVENTS[word])],
                   replicasets=[replicaset(replicas=3, existing=1)])
    v = analyse_dir(root)[f"{NS}/replicaset/{RS}"]
    assert v.word == word
    assert (v.evidence["owner"]["desired"], v.evidence["owner"]["existing"]) == (3, 1)
    if word == "admission-denied":
        assert v.evidence["admission"]["api_server"]["detail"]["constraint"] == "gpu-limit"  # Gatekeeper's constraint


# -- the order -----------------------------------------------------------------------------------------------------

def test_invalid_and_over_quota_is_invalid_spec(tmp_path):
    root = _bundle(tmp_path, quotas=lab_items("resourcequotas"))
    v = analyse_dir(root, manifests=[_m41(tmp_path, **INVALID)])[KEY]
    assert v.word == "invalid-spec"
    assert "must be equal to nvidia.com/gpu limit of 1" in v.reason
    assert "gpu-quota" in v.evidence["admission"]["also"]


def test_limitrange_default_that_pushes_over_quota_is_quota_exceeded_naming_the_default(tmp_path):
    # admission.md: defaults first, then quota counts them. The container states no GPU: the LimitRange's default
    # gives it 1, and the namespace's quota has none left.
    lr = limitrange("gpu-defaults", NS, container_limit(default={"nvidia.com/gpu": "1"}))
    full = quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "1"}, {"requests.nvidia.com/gpu": "1"})
    root = _bundle(tmp_path, quotas=[full], limitranges=[lr])
    v = analyse_dir(root, manifests=[_m41(tmp_path, requests={"cpu": "500m", "memory": "1Gi"})])[KEY]
    assert v.word == "quota-exceeded"
    assert "LimitRange gpu-defaults filled in" in v.reason and "nvidia.com/gpu 1" in v.reason


def test_missing_runtimeclass_before_a_policy(tmp_path):
    # The RuntimeClass plugin is mutating admission: it refuses before any policy is asked.
    root = _bundle(tmp_path, validatingadmissionpolicies=[policy("gpu-max")],
                   validatingadmissionpolicybindings=[binding("gpu-max-binding", "gpu-max")])
    doc = lab_manifest(42)
    v = analyse_dir(root, manifests=[write_manifest(tmp_path / "m", doc)])["lab/runtimeclass-missing"]
    assert v.word == "no-runtimeclass"


def test_mutating_webhook_failing_closed_refuses_even_an_invalid_pod(tmp_path):
    root = _bundle(tmp_path, namespaces=_namespaces(quota_lab={"istio-injection": "enabled"}),
                   mutatingwebhookconfigurations=[istio_injector()],
                   endpointslices=[endpointslice(("istio-system", "istiod"), False)])
    v = analyse_dir(root, manifests=[_m41(tmp_path, **INVALID)])[KEY]
    assert v.word == "admission-unavailable"
    assert "MutatingWebhookConfiguration istio-sidecar-injector" in v.reason
    assert "must be equal to" in v.evidence["admission"]["also"]


def test_webhook_failing_closed_for_one_namespace_leaves_the_others(tmp_path):
    only_lab = kyverno(namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": "lab"}})
    root = _bundle(tmp_path, validatingwebhookconfigurations=[only_lab],
                   endpointslices=[endpointslice(KYVERNO_SVC, False)])
    got = analyse_dir(root, manifests=[_m41(tmp_path), _m41(tmp_path, namespace="lab")])
    assert got["lab/quota-exceeded"].word == "admission-unavailable"
    assert got[KEY].word not in ("admission-unavailable",)


def test_object_selector_limits_the_webhook_to_matching_pods(tmp_path):
    hook = configuration("ValidatingWebhookConfiguration", "gpu-guard",
                         webhook("gpu.guard.example.com", ("gpu-guard", "gpu-guard"),
                                 object_selector={"matchLabels": {"gpu-guard": "on"}}))
    root = _bundle(tmp_path, validatingwebhookconfigurations=[hook],
                   endpointslices=[endpointslice(("gpu-guard", "gpu-guard"), False)])
    got = analyse_dir(root, manifests=[_m41(tmp_path, labels={"gpu-guard": "on"}),
                                       _m41(tmp_path, name="other", labels={"gpu-guard": "off"})])
    assert got[KEY].word == "admission-unavailable"
    assert got[f"{NS}/other"].word != "admission-unavailable"


def test_vap_denial_as_kubectl_prints_it_is_a_policy_not_validation(tmp_path):
    # kubectl prints the API server's Invalid status with an empty field: `The pods "x" is invalid: : …`
    text = ("The pods \"quota-exceeded\" is invalid: : ValidatingAdmissionPolicy 'gpu-max' with binding "
            "'gpu-max-binding' denied request: at most one GPU per container\n")
    root = _bundle(tmp_path, attempts=_attempt(text), validatingadmissionpolicies=[policy("gpu-max")],
                   validatingadmissionpolicybindings=[binding("gpu-max-binding", "gpu-max")])
    v = analyse_dir(root)[KEY]
    assert v.word == "admission-denied"
    assert "ValidatingAdmissionPolicy gpu-max" in v.reason and "at most one GPU" in v.reason
    assert "bound by gpu-max-binding" in v.evidence["admission"]["denied_by"]


def test_pod_security_denial_names_the_namespace_level(tmp_path):
    text = ('Error from server (Forbidden): error when creating "m.yaml": pods "quota-exceeded" is forbidden: violates '
            'PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "cuda" must set '
            'securityContext.allowPrivilegeEscalation=false)\n')
    root = _bundle(tmp_path, attempts=_attempt(text),
                   namespaces=_namespaces(quota_lab={"pod-security.kubernetes.io/enforce": "restricted"}))
    v = analyse_dir(root)[KEY]
    assert v.word == "admission-denied"
    assert "enforces Pod Security restricted" in v.evidence["admission"]["denied_by"]


# -- what never refuses --------------------------------------------------------------------------------------------

def test_failure_policy_ignore_never_refuses(tmp_path):
    root = _bundle(tmp_path, validatingwebhookconfigurations=[kyverno(failure="Ignore")], endpointslices=[])
    assert analyse_dir(root, manifests=[_m41(tmp_path)])[KEY].word not in ("admission-unavailable",)


def test_one_ready_endpoint_makes_the_service_available(tmp_path):
    root = _bundle(tmp_path, validatingwebhookconfigurations=[kyverno()],
                   endpointslices=[endpointslice(KYVERNO_SVC, False, True)])
    assert analyse_dir(root, manifests=[_m41(tmp_path)])[KEY].word != "admission-unavailable"


def test_without_endpointslices_a_webhook_is_not_called_down(tmp_path):
    root = _bundle(tmp_path, validatingwebhookconfigurations=[kyverno()])
    v = analyse_dir(root, manifests=[_m41(tmp_path)])[KEY]
    assert v.word != "admission-unavailable"


def test_limitrange_per_pod_and_ratio(tmp_path):
    per_pod = limitrange("pod-gpus", NS, {"type": "Pod", "max": {"nvidia.com/gpu": "1"}})
    v = analyse_dir(_bundle(tmp_path, limitranges=[per_pod]), manifests=[_m41(tmp_path)])[KEY]
    assert v.word == "limit-range"
    assert v.reason == "LimitRange pod-gpus: maximum nvidia.com/gpu usage per Pod is 1, but limit is 2"
    ratio = limitrange("cpu-ratio", NS, {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}})
    v = analyse_dir(_bundle(tmp_path, name="b2", limitranges=[ratio]),
                    manifests=[_m41(tmp_path, requests={"cpu": "500m"}, limits={"cpu": "2", "nvidia.com/gpu": "2"})])[KEY]
    assert v.word == "limit-range"
    assert "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000" in v.reason


def test_limitrange_max_fills_the_default_of_a_container_without_a_gpu(tmp_path):
    # A stored LimitRange's default comes from max: a container that asks no GPU gets max GPUs.
    lr = limitrange("gpu-limits", NS, container_limit(max={"nvidia.com/gpu": "1"}))
    v = analyse_dir(_bundle(tmp_path, limitranges=[lr]),
                    manifests=[_m41(tmp_path, requests={"cpu": "500m", "memory": "1Gi"})])[KEY]
    assert v.word not in ("limit-range", "invalid-spec")
    assert any("filled in limits nvidia.com/gpu 1" in s for s in v.evidence["admission"]["limit_range_defaults"])


# -- bad input: a finding or an answer, never a traceback ------------------------------------------------------------

def test_limitrange_with_an_unparsable_quantity(tmp_path):
    bad = limitrange("gpu-limits", NS, container_limit(max={"nvidia.com/gpu": "one"}))
    root = _bundle(tmp_path, limitranges=[bad])
    v = analyse_dir(root, manifests=[_m41(tmp_path)])[KEY]
    assert v.word == "insufficient-evidence"
    assert "limitranges.json" in v.reason
    proc = run_cli("validate", root)
    assert proc.returncode == 1 and "limitranges.json" in proc.stdout + proc.stderr


def test_webhook_configuration_without_a_service(tmp_path):
    hook = configuration("ValidatingWebhookConfiguration", "broken", webhook("broken.example.com", None))
    hook["webhooks"][0]["clientConfig"].pop("caBundle")
    root = _bundle(tmp_path, validatingwebhookconfigurations=[hook], endpointslices=[])
    v = analyse_dir(root, manifests=[_m41(tmp_path)])[KEY]
    assert v.word != "admission-unavailable"
    proc = run_cli("validate", root)
    assert proc.returncode == 1 and "validatingwebhookconfigurations.json" in proc.stdout + proc.stderr


def test_a_megabyte_denial_message(tmp_path):
    text = ('Error from server: error when creating "m.yaml": admission webhook "validate.kyverno.svc-fail" denied the '
            'request: ' + "x" * 1_000_000 + "\n")
    v = analyse_dir(_bundle(tmp_path, attempts=_attempt(text)))[KEY]
    assert v.word == "admission-denied"
    assert len(v.evidence["admission"]["api_server"]["text"]) <= 8192


def test_webhook_matching_every_namespace_blocks_every_pod_and_the_report_says_so(tmp_path):
    everywhere = configuration("ValidatingWebhookConfiguration", "policy-everywhere",
                               webhook("policy.example.com", ("policy", "policy-webhook")))
    root = _bundle(tmp_path, validatingwebhookconfigurations=[everywhere],
                   endpointslices=[endpointslice(("policy", "policy-webhook"), False)])
    got = analyse_dir(root, manifests=[_m41(tmp_path), _m41(tmp_path, namespace="lab")])
    assert {got[KEY].word, got["lab/quota-exceeded"].word} == {"admission-unavailable"}
    proc = run_cli("analyze", root, "--manifest", str(_m41(tmp_path)))
    assert "policy.example.com" in proc.stderr and "every namespace" in proc.stderr
    proc = run_cli("nodes", root)
    assert "policy.example.com" in proc.stderr and "every namespace" in proc.stderr
    proc = run_cli("report", root, "-o", "markdown", "--file", str(tmp_path / "r.md"))
    assert proc.returncode in (0, 1), proc.stderr
    assert "policy.example.com" in (tmp_path / "r.md").read_text()


def test_evidence_reads_as_sentences(tmp_path):
    root = _bundle(tmp_path, quotas=lab_items("resourcequotas"), limitranges=[limitrange("gpu-limits", NS, GPU_MAX_1)])
    m = _m41(tmp_path)
    proc = run_cli("why", root, KEY, "--manifest", str(m), "--explain")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "limit-range" in out and "LimitRange gpu-limits" in out
    assert "{" not in out.split("Admission", 1)[-1]



def test_the_layout_split_finds_every_admission_item():
    """bundle/layout.py looks for each item's first field as kubectl prints it (keys sorted): an EndpointSlice starts
    with `addressType`, so a wrong first field would read the file twice (LayoutMisread)."""
    from analyzer.bundle.catalog import BY_NAME

    objects = {"limitranges": limitrange("l", NS, GPU_MAX_1), "validatingwebhookconfigurations": kyverno(),
               "mutatingwebhookconfigurations": istio_injector(), "validatingadmissionpolicies": policy("p"),
               "validatingadmissionpolicybindings": binding("b", "p"), "endpointslices": endpointslice(KYVERNO_SVC, True)}
    for name, item in objects.items():
        first = BY_NAME[name].first_field
        assert first in ("", sorted(item)[0]), name
