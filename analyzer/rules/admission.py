"""The admission rows (never-created pods: attempts and refused owners), in the API server's order
(admission.md): `no-runtimeclass`, `invalid-spec`, `limit-range`, `admission-denied`, `admission-unavailable`,
`quota-exceeded`.

A request is refused at the first step that says no, and the message names only that step, so a recorded
refusal (an attempt's answer, a FailedCreate event; targets/server_text.py) decides the word and stands even
if the objects have changed since (the evidence then says they disagree). Without one the steps are rebuilt
from the bundle in order: RuntimeClass (mutating), mutating webhooks that cannot be called, validation
(rules/admission_validation.py), LimitRange defaults then bounds (rules/admission_limits.py), validating
webhooks that cannot be called, quota last over the spec the earlier steps leave. A policy's denial runs code
the bundle does not hold: only its text decides. Every other step that would refuse is named as well.

Quota accounting follows Kubernetes' pod evaluator: a pod counts toward
`pods`, `count/pods`, `cpu`/`requests.cpu`, `limits.cpu`, the same for memory
and ephemeral-storage, `requests.<extended>` and `requests.hugepages-*`; only
keys the quota lists in spec.hard; scopes (Terminating, NotTerminating,
BestEffort, NotBestEffort, PriorityClass) select which pods a quota counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.catalog import LIMITRANGES, RESOURCEQUOTAS, RUNTIMECLASSES
from analyzer import words
from analyzer import prose
from analyzer.model import quantity
from analyzer.model.views import Cluster
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule
from analyzer.model.admission_world import AdmissionWorld
from analyzer.rules.admission_limits import apply_defaults, breaches
from analyzer.rules.admission_quota import quota_action, quota_findings
from analyzer.text import some_names
from analyzer.rules.admission_validation import validation_errors
from analyzer.targets.server_text import (SAYS_ADMITTED, SAYS_DENIED, SAYS_INVALID, SAYS_LIMITRANGE, SAYS_OTHER,
                                          SAYS_QUOTA, SAYS_RUNTIMECLASS, SAYS_UNAVAILABLE)
from analyzer.model.target import ServerText
from analyzer.rules.admission_answer import policy_objects, text_reason

# -- the rows in the API server's order ---------------------------------------------

@dataclass(kw_only=True)
class AdmissionResult:
    word: str | None  # an admission word | insufficient-evidence | unclassified | None (admitted)
    reason: str
    evidence: dict
    spec: dict | None = None  # the spec as admission leaves it (RuntimeClass overhead and scheduling applied)
    action: str | None = None  # the next action for this pod, its objects named (None: the word's own)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One admission step rebuilt from the objects: it refuses (`refusal` set), cannot be checked (`unknown`
    set: the missing file or invalid object, said), or passes (neither)."""

    word: str
    refusal: str = ""
    unknown: str = ""
    missing: str = ""  # the file whose absence makes it unknown
    action: str = ""  # what to do about this refusal, its objects named ("": the word's own action)


# The word each kind of recorded refusal speaks for.
TEXT_WORDS: dict[str, str] = {
    SAYS_RUNTIMECLASS: words.NO_RUNTIMECLASS, SAYS_INVALID: words.INVALID_SPEC, SAYS_LIMITRANGE: words.LIMIT_RANGE,
    SAYS_DENIED: words.ADMISSION_DENIED, SAYS_UNAVAILABLE: words.ADMISSION_UNAVAILABLE,
    SAYS_QUOTA: words.QUOTA_EXCEEDED,
}


def apply_runtimeclass(spec: dict, rc: dict | None) -> tuple[dict, str | None]:
    """The RuntimeClass admission plugin (plugin/pkg/admission/runtimeclass): (the spec as it leaves the
    plugin, or the refusal it writes). overhead.podFixed becomes spec.overhead (a different overhead already
    in the pod is refused), scheduling.nodeSelector is merged (a conflicting value is refused), and
    scheduling.tolerations are added. It runs before quota, so quota counts the overhead."""
    rc = rc or {}
    overhead = (rc.get("overhead") or {}).get("podFixed") or None
    scheduling = rc.get("scheduling") or {}
    pod_overhead = spec.get("overhead") or None
    if pod_overhead and not overhead:
        return spec, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
    if pod_overhead and overhead:
        mine = {k: quantity.parse(v) for k, v in pod_overhead.items()}
        theirs = {k: quantity.parse(v) for k, v in overhead.items()}
        if mine != theirs:
            return spec, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
    if not overhead and not scheduling:
        return spec, None
    out = dict(spec)
    if overhead:
        out["overhead"] = dict(overhead)
    selector = scheduling.get("nodeSelector") or {}
    if selector:
        mine_sel = spec.get("nodeSelector") or {}
        for k, v in selector.items():
            if k in mine_sel and mine_sel[k] != v:
                return spec, (f"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; "
                              f"pod.spec.nodeSelector[{k}] = {mine_sel[k]}")
        out["nodeSelector"] = {**mine_sel, **selector}
    if scheduling.get("tolerations"):
        have = list(spec.get("tolerations") or [])
        out["tolerations"] = have + [t for t in scheduling["tolerations"] if t not in have]
    return out, None


def _runtimeclass_step(cluster: Cluster, spec: dict, ev: dict) -> Step:
    rc = spec.get("runtimeClassName")
    if not rc:
        return Step(word=words.NO_RUNTIMECLASS)
    ev["runtimeClassName"] = rc
    if cluster.runtimeclasses is None:
        return Step(word=words.NO_RUNTIMECLASS, missing=RUNTIMECLASSES.file,
                    unknown=f"cannot check RuntimeClass {rc!r}: {cluster.why_missing(RUNTIMECLASSES.name)}")
    ev["runtimeclasses_in_bundle"] = sorted(cluster.runtimeclasses)
    if rc not in cluster.runtimeclasses:
        there = sorted(cluster.runtimeclasses)
        return Step(word=words.NO_RUNTIMECLASS, refusal=f"RuntimeClass {rc!r} is not in runtimeclasses.json",
                    action=f"create RuntimeClass {rc}, or set runtimeClassName to one that exists"
                           + (f" ({some_names(there)})" if there else " (the cluster has none)"))
    return Step(word=words.NO_RUNTIMECLASS)


def _webhook_steps(world: AdmissionWorld | None, namespace: str, labels: dict[str, str], spec: dict, *,
                   mutating: bool, ev: dict) -> Step:
    """A fail-closed webhook the pod's CREATE reaches and the API server cannot call (row `admission-unavailable`);
    a mutating one runs before validation, a validating one after the LimitRange's bounds."""
    if world is None:
        return Step(word=words.ADMISSION_UNAVAILABLE)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": namespace, "labels": labels}, "spec": spec}
    found = [(b, j) for b, j in world.blocking_for(namespace, pod) if b.webhook.mutating == mutating]
    if not found:
        return Step(word=words.ADMISSION_UNAVAILABLE)
    said = [f"{b.webhook.kind} {b.webhook.configuration}: webhook {b.webhook.name} (failurePolicy Fail) cannot be "
            f"called: {b.why}" + (f"; {j.detail}" if j.detail else "") for b, j in found]
    ev.setdefault("webhooks", []).extend(said)
    hook = found[0][0].webhook
    where = f"Service {'/'.join(hook.service)}" if hook.service else f"the endpoint {hook.url}"
    return Step(word=words.ADMISSION_UNAVAILABLE, refusal=said[0], action=f"restore {where} behind webhook {hook.name}, "
                f"or fix the failurePolicy, namespaceSelector or matchConditions of {hook.kind} {hook.configuration}")


def _limit_steps(world: AdmissionWorld | None, spec: dict, namespace: str, ev: dict) -> tuple[dict, Step]:
    """LimitRange defaults (the spec after them) and its bounds (row `limit-range`)."""
    if world is None:
        return spec, Step(word=words.LIMIT_RANGE)
    problem = world.limit_problems.get(namespace) or world.limit_problems.get("*")
    items = world.limit_items.get(namespace, [])
    if problem:
        ev["invalid_limitrange"] = problem
        return spec, Step(word=words.LIMIT_RANGE, unknown=f"cannot check the LimitRanges of {namespace}: {problem}",
                          missing=LIMITRANGES.file)
    if not items:
        return spec, Step(word=words.LIMIT_RANGE)
    defaulted = apply_defaults(spec, items)
    if defaulted.defaults:
        ev["limit_range_defaults"] = [d.sentence() for d in defaulted.defaults] + list(defaulted.contested)
    found = breaches(defaulted.spec, items)
    if not found:
        return defaulted.spec, Step(word=words.LIMIT_RANGE)
    ev["limit_range"] = [b.sentence() for b in found]
    return defaulted.spec, Step(word=words.LIMIT_RANGE, refusal=found[0].sentence())


def _quota_step(cluster: Cluster, spec: dict, namespace: str, defaults: list[str], ev: dict) -> Step:
    bad_quota = cluster.quota_problems.get(namespace) or cluster.quota_problems.get("*")
    if bad_quota:
        ev["invalid_quota"] = bad_quota
        return Step(word=words.QUOTA_EXCEEDED, unknown=f"cannot check quota: an invalid quota in {namespace}: {bad_quota}",
                    missing=RESOURCEQUOTAS.file)
    if cluster.quotas is None:
        return Step(word=words.QUOTA_EXCEEDED, unknown=f"cannot check quota: {cluster.why_missing(RESOURCEQUOTAS.name)}",
                    missing=RESOURCEQUOTAS.file)
    found = quota_findings(spec, namespace, cluster.quotas.get(namespace, []))
    ev["quota"] = [f.sentence() for f in found] or [f"no quota in {namespace} would be exceeded"]
    if not found:
        return Step(word=words.QUOTA_EXCEEDED)
    first = found[0]
    # A LimitRange default counted by the quota is named: the person never wrote that amount.
    resource = first.key.removeprefix("requests.").removeprefix("limits.")
    named = [d for d in defaults if f" {resource} " in d]
    return Step(word=words.QUOTA_EXCEEDED,
                refusal=first.sentence() + (f", counting what the LimitRange filled in ({named[0]})" if named else ""),
                action=quota_action(first, namespace))


def rebuild(cluster: Cluster, spec: dict, namespace: str, labels: dict[str, str], ev: dict) -> tuple[list[Step], dict]:
    """The steps the bundle lets us rebuild, in the API server's order, and the spec admission leaves: RuntimeClass,
    mutating webhooks, validation, LimitRange, validating webhooks, quota. A policy's denial cannot be rebuilt
    (it runs code the bundle does not hold)."""
    world = cluster.admission
    steps = [_runtimeclass_step(cluster, spec, ev)]
    rc = spec.get("runtimeClassName")
    if cluster.runtimeclasses is not None and (not rc or rc in cluster.runtimeclasses):
        mutated, refusal = apply_runtimeclass(spec, cluster.runtimeclasses.get(rc) if rc else None)
        if refusal:
            ev["runtimeclass_refusal"] = refusal
            return steps + [Step(word=words.UNCLASSIFIED,
                                 refusal=f"the RuntimeClass admission plugin would refuse it: {refusal}")], spec
        if mutated is not spec:
            ev["runtimeclass_applied"] = {k: mutated[k] for k in ("overhead", "nodeSelector", "tolerations")
                                          if mutated.get(k) != spec.get(k)}
            spec = mutated
    steps.append(_webhook_steps(world, namespace, labels, spec, mutating=True, ev=ev))
    after_limits, limit_step = _limit_steps(world, spec, namespace, ev)
    errors = validation_errors(after_limits)
    if errors:
        ev["validation"] = errors
    steps.append(Step(word=words.INVALID_SPEC, refusal=f"the API server's validation: {errors[0]}" if errors else ""))
    steps.append(limit_step)
    steps.append(_webhook_steps(world, namespace, labels, after_limits, mutating=False, ev=ev))
    steps.append(_quota_step(cluster, after_limits, namespace, ev.get("limit_range_defaults") or [], ev))
    if world is not None and world.unknown:
        ev["webhooks_unknown"] = world.unknown[:3]
    return steps, after_limits


def judge_admission(cluster: Cluster, spec: dict | None, namespace: str, text: ServerText | None,
                    labels: dict[str, str] | None = None) -> AdmissionResult:
    """spec None: the pod's spec is not in the bundle (an owner whose object was not collected): text only.
    A recorded refusal decides the word (the step that refused); without one, the first rebuilt step that
    refuses, unless an earlier step cannot be checked. Every other refusal that would hold is named."""
    ev: dict = {}
    if text is not None:
        ev["api_server"] = {"says": text.says, "text": text.text, **({"detail": text.detail} if text.detail else {})}
    steps: list[Step] = []
    admitted = spec
    if spec is not None:
        steps, admitted = rebuild(cluster, spec, namespace, labels or {}, ev)
    refusing = [s for s in steps if s.refusal]
    recorded = TEXT_WORDS.get(text.says) if text is not None else None

    if recorded is not None:
        assert text is not None
        policy_objects(cluster, text, namespace, ev)
        mine = [s for s in steps if s.word == recorded]
        checked = spec is not None and recorded != words.ADMISSION_DENIED and not any(s.unknown for s in mine)
        ev["agrees"] = (_agree(any(s.refusal for s in mine) if checked else None, True, text,
                               refusing[0].word if refusing else None) if recorded != words.ADMISSION_DENIED else
                        "decided by the API server's text (a policy runs code the bundle does not hold)")
        _also(ev, [s for s in refusing if s.word != recorded])
        same = [s for s in mine if s.refusal]
        return AdmissionResult(word=recorded, reason=same[0].refusal if same else text_reason(text), evidence=ev,
                               action=(same[0].action or None) if same else None)
    if spec is None and text is None:
        return AdmissionResult(word=words.INSUFFICIENT_EVIDENCE,
                               reason="neither the pod template nor the API server's text is in the bundle", evidence=ev)
    # The server refused for a reason not read, or admitted it: the objects still decide when they refuse.
    past_unknowns = text is not None and text.says in (SAYS_OTHER, SAYS_ADMITTED)
    for step in steps:
        if step.refusal:
            ev["agrees"] = _agree(True, False, text, step.word)
            _also(ev, [s for s in refusing if s is not step])
            return AdmissionResult(word=step.word, reason=step.refusal, evidence=ev, action=step.action or None)
        if step.unknown and not past_unknowns:
            ev["missing"] = step.missing
            return AdmissionResult(word=words.INSUFFICIENT_EVIDENCE, reason=step.unknown, evidence=ev)
    if text is not None and text.says == SAYS_OTHER:
        return AdmissionResult(word=words.UNCLASSIFIED, reason=f"refused by admission for a reason not modelled: {text.text}", evidence=ev)
    return AdmissionResult(word=None, reason="admitted", evidence=ev, spec=admitted)


def _also(ev: dict, others: list[Step]) -> None:
    if others:
        ev["also"] = "would also refuse it: " + "; ".join(s.refusal for s in others)


def _agree(objects: bool | None, text_says: bool, text: ServerText | None, first: str | None = None) -> str:
    if text is None:
        return "no API server answer in the bundle; decided from the objects"
    if objects is None:
        return "decided by the API server's text (the objects it needs are not in the bundle)"
    if objects and text_says:
        return "yes: the objects and the API server's text agree"
    if objects:
        return f"no: the objects say {first}, the API server said {text.says}"
    if first:
        return f"no: the API server refused it for {text.says}, the objects in the bundle say {first} first (changed since?)"
    return "no: the API server refused it, but the objects in the bundle would admit it now (changed since?)"


def decide(case: Case) -> Decision | None:
    """The admission rows, for targets that never came to exist (attempts, refused owners)."""
    t = case.target
    if t.created:
        return None
    adm = judge_admission(case.cluster, case.spec, t.namespace, t.server_text, t.labels)
    case.evidence["admission"] = adm.evidence
    if t.owner:
        case.evidence["owner"] = t.owner
    if t.answer is not None:
        case.evidence["answer"] = {k: t.answer.get(k) for k in ("command", "exitStatus", "stderr") if k in t.answer}
    if adm.word is not None:
        return Decision(word=adm.word, reason=adm.reason, action=adm.action)
    case.spec = adm.spec
    if case.spec is None:
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason="the pod's spec is not in the bundle")
    return None


# -- the evidence as sentences ------------------------------------------------------------------------

_LISTED = ("validation", "limit_range_defaults", "limit_range", "webhooks", "webhooks_unknown", "quota")


@prose.says("admission")
def say_admission(value: object) -> list[str]:
    """The admission steps as a person checks them: what the API server said, each object that refuses (or
    would), what the LimitRange filled in, and whether the objects agree with the server."""
    adm = value if isinstance(value, dict) else {}
    out: list[str] = []
    api = adm.get("api_server")
    if isinstance(api, dict) and api.get("text"):
        out.append(f"the API server said: {api['text']}")
    if adm.get("runtimeClassName") is not None:
        have = ", ".join(map(str, adm.get("runtimeclasses_in_bundle") or [])) or "none"
        out.append(f"runtimeClassName {adm['runtimeClassName']}; RuntimeClasses in the bundle: {have}")
    if adm.get("runtimeclass_refusal"):
        out.append(f"the RuntimeClass plugin: {adm['runtimeclass_refusal']}")
    if adm.get("denied_by"):
        out.append(f"refused by {adm['denied_by']}")
    for key in ("invalid_limitrange", "invalid_quota"):
        if adm.get(key):
            out.append(f"unreadable: {adm[key]}")
    also = str(adm.get("also") or "")
    for key in _LISTED:
        for x in adm.get(key) or ():
            if str(x) not in also:  # what would also refuse it is said once, below
                out.append(f"the API server's validation: {x}" if key == "validation" else str(x))
    if adm.get("also"):
        out.append(str(adm["also"]))
    if adm.get("missing"):
        out.append(f"not in the bundle: {adm['missing']}")
    if adm.get("agrees") and not str(adm["agrees"]).startswith(("yes", "no API server answer")):
        out.append(f"objects and API server: {adm['agrees']}")  # said only when they disagree
    return out


@prose.says("answer")
def _answer_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    command = " ".join(map(str, value.get("command") or [])) or "the stored command"
    text = " ".join(str(value.get("stderr") or "").split()) or "nothing"
    return [f"`{command}` exited {value.get('exitStatus')} and wrote: \"{text}\"."]


@prose.says("owner")
def _owner_says(value: object) -> list[str]:
    if not isinstance(value, dict):
        return [f"Its owner: {value}."] if value else []
    out = []
    if value.get("event"):
        when = f" at {value['event_time']}" if value.get("event_time") else ""
        times = f", {value['events_counted']} times" if (value.get("events_counted") or 1) > 1 else ""
        out.append(f"The owner's latest FailedCreate event{when}{times}: \"{value['event']}\".")
    if value.get("object"):
        out.append(f"{value['object']}.")
    if "desired" in value:
        out.append(f"{value.get('existing')} of {value.get('desired')} desired pods exist.")
    if value.get("suspended"):
        out.append("The owner is suspended (spec.suspend is true).")
    for key in (k for k in value if k not in ("event", "event_time", "events_counted", "object", "desired", "existing",
                                              "suspended")):
        out.extend(prose.plain(key, value[key]))
    return out


FAMILY: Family = Plain(name="admission", kinds=(
    catalog.NAMESPACES, catalog.RUNTIMECLASSES, catalog.LIMITRANGES, catalog.RESOURCEQUOTAS,
    catalog.MUTATINGWEBHOOKCONFIGURATIONS, catalog.VALIDATINGWEBHOOKCONFIGURATIONS, catalog.VALIDATINGADMISSIONPOLICIES,
    catalog.VALIDATINGADMISSIONPOLICYBINDINGS, catalog.ENDPOINTSLICES, catalog.EVENTS), rules=(
    Rule(rows="1-6", words=(words.NO_RUNTIMECLASS, words.INVALID_SPEC, words.LIMIT_RANGE, words.ADMISSION_DENIED,
                            words.ADMISSION_UNAVAILABLE, words.QUOTA_EXCEEDED), decide=decide),))
