"""What can refuse a pod before it exists, read once per bundle (admission.md): LimitRanges by namespace,
the admission webhooks that can refuse a pod CREATE, whether each webhook's Service has a ready endpoint, and
the ValidatingAdmissionPolicies and bindings a denial may name.

Every file here is optional: absent means none of these (no LimitRange, no webhook, no policy), except
EndpointSlices, whose absence leaves a fail-closed webhook's availability unknown (never a refusal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from analyzer.bundle.catalog import (ENDPOINTSLICES, LIMITRANGES, MUTATINGWEBHOOKCONFIGURATIONS,
                                     VALIDATINGADMISSIONPOLICIES, VALIDATINGADMISSIONPOLICYBINDINGS,
                                     VALIDATINGWEBHOOKCONFIGURATIONS)
from analyzer.bundle.engines import Violation, violations
from analyzer.bundle.validation import Loaded
from analyzer.model import quantity
from analyzer.model.labels import EVERYTHING, Selector, selector_of
from analyzer.model.quantity import QuantityError
from analyzer.model.webhook_conditions import Condition, ConditionJudge, Judgement, conditions_of

SERVICE_NAME_LABEL = "kubernetes.io/service-name"  # an EndpointSlice's Service (discovery.k8s.io)
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set on every namespace by the API server

Bounds = dict[str, tuple[str, Fraction]]  # resource -> (as written, exact value)


@dataclass(frozen=True, kw_only=True)
class LimitItem:
    """One `spec.limits[]` entry, with the API server's defaults for a stored item applied
    (pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem: for a Container, `default` from `max`,
    `defaultRequest` from `default`, then from `min`)."""

    limit_range: str
    type: str  # Container | Pod | PersistentVolumeClaim
    max: Bounds
    min: Bounds
    default: Bounds
    default_request: Bounds
    ratio: Bounds  # maxLimitRequestRatio


@dataclass(frozen=True, kw_only=True)
class Webhook:
    """One webhook of a Mutating- or ValidatingWebhookConfiguration that a pod CREATE reaches."""

    configuration: str
    name: str
    mutating: bool
    fail_closed: bool  # failurePolicy Fail (the default in admissionregistration.k8s.io/v1)
    namespace_selector: Selector
    object_selector: Selector
    service: tuple[str, str] | None  # (namespace, name); None for a URL webhook
    url: str
    conditions: tuple[Condition, ...]  # matchConditions (CEL), judged per pod (model/webhook_conditions.py)

    @property
    def kind(self) -> str:
        return "MutatingWebhookConfiguration" if self.mutating else "ValidatingWebhookConfiguration"



@dataclass(frozen=True, kw_only=True)
class ServiceState:
    ready: int
    endpoints: int
    not_ready_pods: tuple[str, ...]  # the pods behind its endpoints that are not ready


@dataclass(frozen=True, kw_only=True)
class Blocking:
    """A fail-closed webhook the API server cannot call, and why (in sentences)."""

    webhook: Webhook
    why: str


@dataclass(kw_only=True)
class AdmissionWorld:
    limit_items: dict[str, list[LimitItem]]  # namespace -> its LimitRanges' entries
    limit_problems: dict[str, str]  # namespace -> an invalid LimitRange's finding (its checks are unknown)
    blocking: list[Blocking]  # fail-closed webhooks matching pod CREATE that cannot be called
    unknown: list[str]  # fail-closed webhooks whose availability the bundle cannot tell (sentences)
    policies: frozenset[str]
    bindings: dict[str, str]  # binding -> the policy it binds
    webhook_names: dict[str, str]  # webhook name -> its configuration ("kind/name")
    ns_labels: dict[str, dict[str, str]]
    findings: list[Violation] = field(default_factory=list)
    # namespace -> the blocking webhooks whose namespaceSelector matches it: filled at a namespace's first pod
    by_namespace: dict[str, tuple[Blocking, ...]] = field(default_factory=dict)
    judge: ConditionJudge = field(default_factory=ConditionJudge)  # matchConditions, compiled once per bundle

    def labels_of(self, namespace: str) -> dict[str, str]:
        return self.ns_labels.get(namespace) or {NAMESPACE_NAME_LABEL: namespace}

    def cluster_wide(self) -> list[str]:
        """Sentences for the webhooks that cannot be called and refuse every pod in every namespace the bundle lists
        (its own Service's namespace aside, which such webhooks exclude to let themselves start)."""
        out = []
        for b in self.blocking:
            hook = b.webhook
            if hook.object_selector.requirements or hook.object_selector.nothing:
                continue
            own = hook.service[0] if hook.service else ""
            names = [ns for ns in self.ns_labels if ns != own] or ["default"]
            if all(hook.namespace_selector.matches(self.labels_of(ns)) for ns in names):
                # A pod its matchConditions leave out is still created: then "every pod" would overstate it.
                which = (f"the pods its matchConditions ({', '.join(c.name for c in hook.conditions[:3])}) select"
                         if hook.conditions else "pods")
                out.append(f"admission webhook {hook.name} ({hook.kind} {hook.configuration}) fails closed for {which} "
                           f"in every namespace and cannot be called: {b.why}; no such pod can be created until it "
                           f"is restored")
        return out

    def blocking_for(self, namespace: str, pod: dict) -> list[tuple[Blocking, Judgement]]:
        """The webhooks that cannot be called and would be called for this pod (`pod`: its metadata and spec as
        created): namespaceSelector, objectSelector, then matchConditions (a webhook they leave out is not called;
        one they cannot be judged for counts, its judgement says why)."""
        if not self.blocking:
            return []
        here = self.by_namespace.get(namespace)
        if here is None:
            labels = self.labels_of(namespace)
            here = tuple(b for b in self.blocking if b.webhook.namespace_selector.matches(labels))
            self.by_namespace[namespace] = here
        labels = pod.get("metadata", {}).get("labels") or {}
        out = []
        for b in here:
            if b.webhook.object_selector.matches(labels):
                judged = self.judge.judge(b.webhook.conditions, pod=pod, namespace=namespace)
                if judged.may_call:
                    out.append((b, judged))
        return out


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _bounds(raw: object) -> Bounds:
    return {str(k): (str(v), quantity.parse(v)) for k, v in _dict(raw).items()}


def _limit_item(range_name: str, raw: dict) -> LimitItem:
    kind = str(raw.get("type") or "")
    mx, mn = _bounds(raw.get("max")), _bounds(raw.get("min"))
    default, request = _bounds(raw.get("default")), _bounds(raw.get("defaultRequest"))
    if kind == "Container":
        default = {**mx, **default}
        request = {**mn, **default, **request}
    return LimitItem(limit_range=range_name, type=kind, max=mx, min=mn, default=default, default_request=request,
                     ratio=_bounds(raw.get("maxLimitRequestRatio")))


def _limit_ranges(loaded: Loaded, findings: list[Violation]) -> tuple[dict[str, list[LimitItem]], dict[str, str]]:
    doc = loaded.documents.get(LIMITRANGES.name)
    items: dict[str, list[LimitItem]] = {}
    problems: dict[str, str] = {}
    if doc is None:
        return items, problems
    for i, obj in enumerate(doc.items):
        meta = _dict(obj.get("metadata")) if isinstance(obj, dict) else {}
        ns, name = str(meta.get("namespace") or "*"), str(meta.get("name") or "?")
        if i in doc.invalid:
            # An invalid LimitRange cannot be left out silently: its namespace's LimitRange checks become unknown.
            problems[ns] = str(doc.invalid[i][0]) if doc.invalid[i] else f"{doc.file}: {doc.item_path(i)}: invalid"
            continue
        try:
            parsed = [_limit_item(name, raw) for raw in _list(_dict(obj.get("spec")).get("limits")) if isinstance(raw, dict)]
        except QuantityError as exc:
            problems[ns] = f"{doc.file}: LimitRange {ns}/{name}: {exc}"
            findings.extend(violations(doc.file, [(doc.item_path(i), "quantities", str(exc))]))
            continue
        items.setdefault(ns, []).extend(parsed)
    return items, problems


def _rule_matches_pod_create(rule: dict) -> bool:
    """admissionregistration.k8s.io/v1 RuleWithOperations: CREATE of `pods` in the core group, version v1."""
    def has(key: str, *wanted: str) -> bool:
        return any(str(v) in wanted for v in _list(rule.get(key)))
    return (has("operations", "CREATE", "*") and has("apiGroups", "", "*") and has("apiVersions", "v1", "*")
            and has("resources", "pods", "*", "*/*") and str(rule.get("scope") or "*") in ("*", "Namespaced"))


def _services(loaded: Loaded) -> dict[tuple[str, str], ServiceState] | None:
    doc = loaded.documents.get(ENDPOINTSLICES.name)
    if doc is None:
        return None
    ready: dict[tuple[str, str], list[int]] = {}
    not_ready: dict[tuple[str, str], list[str]] = {}
    for _, s in doc.valid_items():
        meta = _dict(s.get("metadata"))
        service = _dict(meta.get("labels")).get(SERVICE_NAME_LABEL)
        if not service:
            continue
        key = (str(meta.get("namespace") or ""), str(service))
        counts = ready.setdefault(key, [0, 0])
        for e in _list(s.get("endpoints")):
            e = _dict(e)
            counts[1] += 1
            # discovery.k8s.io/v1 EndpointConditions: a nil `ready` is read as ready.
            if _dict(e.get("conditions")).get("ready") is not False:
                counts[0] += 1
            elif _dict(e.get("targetRef")).get("kind") == "Pod":
                not_ready.setdefault(key, []).append(str(_dict(e.get("targetRef")).get("name") or "?"))
    return {k: ServiceState(ready=v[0], endpoints=v[1], not_ready_pods=tuple(not_ready.get(k, ())))
            for k, v in ready.items()}


def _webhooks(loaded: Loaded, findings: list[Violation]) -> tuple[list[Webhook], dict[str, str]]:
    out: list[Webhook] = []
    names: dict[str, str] = {}
    for kind, mutating in ((MUTATINGWEBHOOKCONFIGURATIONS, True), (VALIDATINGWEBHOOKCONFIGURATIONS, False)):
        doc = loaded.documents.get(kind.name)
        if doc is None:
            continue
        for i, config in doc.valid_items():
            cname = str(_dict(config.get("metadata")).get("name") or "?")
            for j, raw in enumerate(_list(config.get("webhooks"))):
                raw = _dict(raw)
                name = str(raw.get("name") or "?")
                names.setdefault(name, f"{kind.item_kind}/{cname}")
                client = _dict(raw.get("clientConfig"))
                service = _dict(client.get("service"))
                if not service and not client.get("url"):
                    findings.extend(violations(doc.file, [(f"{doc.item_path(i)}.webhooks[{j}].clientConfig",
                                                           "a service or a url", "neither")]))
                    continue
                if not any(_rule_matches_pod_create(_dict(r)) for r in _list(raw.get("rules"))):
                    continue
                out.append(Webhook(
                    configuration=cname, name=name, mutating=mutating,
                    fail_closed=str(raw.get("failurePolicy") or "Fail") == "Fail",
                    namespace_selector=selector_of(raw.get("namespaceSelector")) if raw.get("namespaceSelector")
                    is not None else EVERYTHING,
                    object_selector=selector_of(raw.get("objectSelector")) if raw.get("objectSelector") is not None
                    else EVERYTHING,
                    service=(str(service.get("namespace") or ""), str(service.get("name") or "")) if service else None,
                    url=str(client.get("url") or ""), conditions=conditions_of(raw.get("matchConditions"))))
    return out, names


def _unavailable(hook: Webhook, services: dict[tuple[str, str], ServiceState] | None) -> tuple[str | None, str | None]:
    """(why it cannot be called, why its state is unknown): at most one is set."""
    if hook.service is None:
        return None, None  # a URL webhook: outside the cluster, nothing in the bundle says it is down
    ns, name = hook.service
    if services is None:
        return None, (f"{hook.kind} {hook.configuration} webhook {hook.name}: whether Service {ns}/{name} has a "
                      f"ready endpoint is unknown ({ENDPOINTSLICES.file} is not in the bundle)")
    state = services.get((ns, name))
    if state is None:
        return f"Service {ns}/{name} has no EndpointSlice (no endpoint at all)", None
    if state.ready:
        return None, None
    pods = f"; its pods {', '.join(state.not_ready_pods[:5])} are not ready" if state.not_ready_pods else ""
    return f"Service {ns}/{name} has no ready endpoint ({state.endpoints} endpoint(s), none ready){pods}", None


def build_admission(loaded: Loaded, ns_labels: dict[str, dict[str, str]] | None) -> AdmissionWorld:
    findings: list[Violation] = []
    items, problems = _limit_ranges(loaded, findings)
    hooks, names = _webhooks(loaded, findings)
    services = _services(loaded) if any(h.fail_closed for h in hooks) else {}
    blocking: list[Blocking] = []
    unknown: list[str] = []
    for hook in hooks:
        if not hook.fail_closed:
            continue  # failurePolicy Ignore: a webhook that cannot be called never refuses
        down, unsure = _unavailable(hook, services)
        if down:
            blocking.append(Blocking(webhook=hook, why=down))
        elif unsure:
            unknown.append(unsure)
    policies = loaded.documents.get(VALIDATINGADMISSIONPOLICIES.name)
    bindings = loaded.documents.get(VALIDATINGADMISSIONPOLICYBINDINGS.name)
    return AdmissionWorld(
        limit_items=items, limit_problems=problems, blocking=blocking, unknown=unknown,
        policies=frozenset(str(_dict(p.get("metadata")).get("name")) for _, p in policies.valid_items())
        if policies is not None else frozenset(),
        bindings={str(_dict(b.get("metadata")).get("name")): str(_dict(b.get("spec")).get("policyName") or "")
                  for _, b in bindings.valid_items()} if bindings is not None else {},
        webhook_names=names, ns_labels={k: {str(a): str(b) for a, b in _dict(v).items()}
                                        for k, v in (ns_labels or {}).items()}, findings=findings)
