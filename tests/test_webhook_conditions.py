"""A fail-closed webhook's `matchConditions` decide whether it stands between a pod and the API server
(k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go Matcher.Match; kubernetes.io,
"Dynamic Admission Control", Matching requests: matchConditions): a condition false for the pod means the webhook
is never called, so its Service being down refuses nothing; an evaluation error with failurePolicy Fail refuses
the request; what the bundle cannot know (who asks) is counted as selecting the pod and said so."""

from __future__ import annotations

from admission_fixtures import configuration, endpointslice, webhook
from conftest import analyse_dir
from test_admission_rows import KEY, _bundle, _m41

SVC = ("gpu-guard", "gpu-guard")


def _guard(*conditions: tuple[str, str]) -> dict:
    hook = webhook("gpu.guard.example.com", SVC)
    hook["matchConditions"] = [{"name": n, "expression": e} for n, e in conditions]
    return configuration("ValidatingWebhookConfiguration", "gpu-guard", hook)


def _words(tmp_path, *conditions: tuple[str, str], labels: dict | None = None):
    root = _bundle(tmp_path, validatingwebhookconfigurations=[_guard(*conditions)],
                   endpointslices=[endpointslice(SVC, False)])
    got = analyse_dir(root, manifests=[_m41(tmp_path, labels=labels), _m41(tmp_path, namespace="lab", labels=labels)])
    return got[KEY], got["lab/quota-exceeded"]


def test_a_condition_false_for_the_pod_means_the_down_webhook_is_never_called(tmp_path):
    # The docs' own shape of exclusion: a namespace left out by CEL rather than by namespaceSelector.
    mine, other = _words(tmp_path, ("exclude-lab", "!(request.namespace in ['lab'])"))
    assert mine.word == "admission-unavailable"
    assert "gpu.guard.example.com" in mine.reason
    # The next action names what to restore: the Service behind the webhook, and the configuration to fix.
    assert mine.action is not None and "Service gpu-guard/gpu-guard" in mine.action
    assert "ValidatingWebhookConfiguration gpu-guard" in mine.action
    assert other.word != "admission-unavailable"


def test_a_condition_on_the_pod_itself_selects_by_what_it_asks(tmp_path):
    gpu_only = ("gpu-pods-only",
                "object.spec.containers.exists(c, has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits)")
    mine, _ = _words(tmp_path, gpu_only)
    assert mine.word == "admission-unavailable"
    cpu_only = ("cpu-pods-only", "!object.spec.containers.exists(c, has(c.resources.limits) && "
                                 "'nvidia.com/gpu' in c.resources.limits)")
    mine, _ = _words(tmp_path / "cpu", cpu_only)
    assert mine.word != "admission-unavailable"


def test_one_false_condition_skips_the_webhook_even_when_another_fails_to_evaluate(tmp_path):
    # matcher.go: a condition that evaluates to false returns at once; errors count only when none is false.
    mine, _ = _words(tmp_path, ("needs-team", "object.metadata.labels['team'] == 'ml'"),
                     ("never", "request.operation == 'UPDATE'"))
    assert mine.word != "admission-unavailable"


def test_an_evaluation_error_under_failure_policy_fail_still_refuses_and_says_why(tmp_path):
    mine, _ = _words(tmp_path, ("needs-team", "object.metadata.labels['team'] == 'ml'"))
    assert mine.word == "admission-unavailable"
    said = " ".join(mine.evidence["admission"]["webhooks"])
    assert "no such key: team" in said and "refuses the request under failurePolicy Fail" in said


def test_who_asks_is_not_in_the_bundle_so_such_a_condition_counts_and_is_said(tmp_path):
    # The docs' example excludes the kubelet by request.userInfo.groups: the bundle does not record who asked.
    mine, _ = _words(tmp_path, ("exclude-kubelet-requests", "!('system:nodes' in request.userInfo.groups)"))
    assert mine.word == "admission-unavailable"
    said = " ".join(mine.evidence["admission"]["webhooks"])
    assert "cannot be told from the bundle" in said and "userInfo" in said


def test_hostile_conditions_are_findings_in_words_never_a_traceback(tmp_path):
    deep = "(" * 400 + "true" + ")" * 400
    huge = "'" + "a" * 20_000 + "' == 'a'"
    mine, other = _words(tmp_path, ("deep", deep), ("huge", huge), ("not-a-string", "1 +"))
    assert mine.word == "admission-unavailable" and other.word == "admission-unavailable"
    said = " ".join(mine.evidence["admission"]["webhooks"])
    assert "cannot be told from the bundle" in said and "refused" in said
