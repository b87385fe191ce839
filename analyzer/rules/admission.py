"""Rules 1-2 (never-created pods): RuntimeClass and ResourceQuota, decided from the objects in
the bundle and cross-checked against the API server's own words.

Order: the RuntimeClass admission plugin (mutating) rejects before the
ResourceQuota plugin (validating) runs, so a manifest wrong on both is refused
for the RuntimeClass alone; the word must match what the person saw.

Quota accounting follows Kubernetes' pod evaluator: a pod counts toward
`pods`, `count/pods`, `cpu`/`requests.cpu`, `limits.cpu`, the same for memory
and ephemeral-storage, `requests.<extended>` and `requests.hugepages-*`; only
keys the quota lists in spec.hard; scopes (Terminating, NotTerminating,
BestEffort, NotBestEffort, PriorityClass) select which pods a quota counts.
The objects decide when the bundle has them; the API server's text decides
when only the text exists, and a refusal the text records stands even if the
objects have changed since (the evidence then says they disagree).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from analyzer.bundle.catalog import RESOURCEQUOTAS, RUNTIMECLASSES
from analyzer import words
from analyzer.evidence import prose
from analyzer.model import quantity
from analyzer.model.build import exact_hard
from analyzer.model.views import Cluster
from analyzer.rules.case import Case, Decision
from analyzer.targets.server_text import SAYS_ADMITTED, SAYS_OTHER, SAYS_QUOTA, SAYS_RUNTIMECLASS
from analyzer.model.target import ServerText
from analyzer.model.podspec import all_containers, qos_best_effort, quota_usage
from analyzer.model.quantity import QuantityError, format_exact

# -- quota -------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class QuotaFinding:
    quota: str
    key: str
    problem: str  # exceeded | must-specify | status-unknown
    requested: str = ""
    used: str = ""
    hard: str = ""

    def sentence(self) -> str:
        if self.problem == "exceeded":
            return f"quota {self.quota}: {self.key} used {self.used} + requested {self.requested} > hard {self.hard}"
        if self.problem == "must-specify":
            return f"quota {self.quota}: every container must specify {self.key}"
        return f"quota {self.quota}: status.used has no {self.key} yet (the quota controller has not counted it)"


def _scope_matches(quota: dict, spec: dict) -> bool:
    qspec = quota.get("spec") or {}
    for scope in qspec.get("scopes") or ():
        if not _one_scope(scope, "Exists", [], spec):
            return False
    for expr in ((qspec.get("scopeSelector") or {}).get("matchExpressions") or ()):
        if not _one_scope(expr.get("scopeName"), expr.get("operator"), expr.get("values") or [], spec):
            return False
    return True


def _one_scope(scope: str | None, op: str | None, values: list, spec: dict) -> bool:
    terminating = spec.get("activeDeadlineSeconds") is not None
    if scope == "Terminating":
        return terminating
    if scope == "NotTerminating":
        return not terminating
    if scope == "BestEffort":
        return qos_best_effort(spec)
    if scope == "NotBestEffort":
        return not qos_best_effort(spec)
    if scope == "PriorityClass":
        pc = spec.get("priorityClassName") or ""
        if op == "In":
            return pc in values
        if op == "NotIn":
            return pc not in values
        if op == "Exists":
            return bool(pc)
        if op == "DoesNotExist":
            return not pc
    if scope == "CrossNamespacePodAffinity":
        aff = spec.get("affinity") or {}
        for kind in ("podAffinity", "podAntiAffinity"):
            for section in (aff.get(kind) or {}).values():
                for term in section or ():
                    t = term.get("podAffinityTerm", term) if isinstance(term, dict) else {}
                    if t.get("namespaces") or t.get("namespaceSelector") is not None:
                        return True
        return False
    return True  # a scope this version does not know: count the pod, as the safer reading


_MUST_SPECIFY = {"cpu": "requests.cpu", "requests.cpu": "requests.cpu", "memory": "requests.memory",
                 "requests.memory": "requests.memory", "limits.cpu": "limits.cpu", "limits.memory": "limits.memory"}


def quota_findings(spec: dict, namespace: str, quotas: list[dict]) -> list[QuotaFinding]:
    usage = quota_usage(spec)
    found: list[QuotaFinding] = []
    for q in quotas:
        if not _scope_matches(q, spec):
            continue
        name = (q.get("metadata") or {}).get("name", "?")
        hard = exact_hard(q)
        used_raw = (q.get("status") or {}).get("used") or {}
        # Kubernetes' backward-compatibility rule: quota on cpu/memory requires every container to state it.
        for key in hard:
            need = _MUST_SPECIFY.get(key)
            if need:
                section, res = need.split(".")
                for c in all_containers(spec):
                    values = ((c.get("resources") or {}).get(section) or {})
                    limits = ((c.get("resources") or {}).get("limits") or {})
                    if res not in values and not (section == "requests" and res in limits):
                        found.append(QuotaFinding(quota=name, key=need, problem="must-specify"))
                        break
        for key, amount in usage.items():
            if key not in hard:
                continue
            if key not in used_raw:
                found.append(QuotaFinding(quota=name, key=key, problem="status-unknown"))
                continue
            try:
                used = Fraction(0) if used_raw[key] is None else quantity.parse(used_raw[key])
            except QuantityError:
                found.append(QuotaFinding(quota=name, key=key, problem="status-unknown"))
                continue
            if used + amount > hard[key]:
                found.append(QuotaFinding(quota=name, key=key, problem="exceeded", requested=format_exact(amount),
                                          used=format_exact(used), hard=format_exact(hard[key])))
    return found


# -- the two rules -------------------------------------------------------------------

@dataclass(kw_only=True)
class AdmissionResult:
    word: str | None  # no-runtimeclass | quota-exceeded | insufficient-evidence | unclassified | None (admitted)
    reason: str
    evidence: dict
    spec: dict | None = None  # the spec as admission leaves it (RuntimeClass overhead and scheduling applied)


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


def judge_admission(cluster: Cluster, spec: dict | None, namespace: str, text: ServerText | None) -> AdmissionResult:
    """spec None: the pod's spec is not in the bundle (an owner whose object was not collected): text only."""
    ev: dict = {}
    if text is not None:
        ev["api_server"] = {"says": text.says, "text": text.text, **({"detail": text.detail} if text.detail else {})}

    # Rule 1: RuntimeClass.
    rc = spec.get("runtimeClassName") if spec is not None else None
    rc_holds: bool | None = None
    if spec is None:
        rc_holds = None
    elif rc:
        if cluster.runtimeclasses is None:
            rc_holds = None
        else:
            rc_holds = rc not in cluster.runtimeclasses
        ev["runtimeClassName"] = rc
        if cluster.runtimeclasses is not None:
            ev["runtimeclasses_in_bundle"] = sorted(cluster.runtimeclasses)
    else:
        rc_holds = False

    if spec is not None and (not rc or (cluster.runtimeclasses and rc in cluster.runtimeclasses)):
        mutated, refusal = apply_runtimeclass(spec, (cluster.runtimeclasses or {}).get(rc) if rc else None)
        if refusal and not (text is not None and text.says == SAYS_ADMITTED):  # the server's "admitted" outranks us
            ev["runtimeclass_refusal"] = refusal
            return AdmissionResult(word=words.UNCLASSIFIED, reason=f"the RuntimeClass admission plugin would refuse it: {refusal}", evidence=ev)
        if mutated is not spec:
            ev["runtimeclass_applied"] = {k: mutated[k] for k in ("overhead", "nodeSelector", "tolerations") if mutated.get(k) != spec.get(k)}
            spec = mutated

    # Rule 2: quota (evaluated as well, so the evidence can name both causes).
    quotas = cluster.quotas
    q_findings: list[QuotaFinding] | None = None
    bad_quota = cluster.quota_problems.get(namespace) or cluster.quota_problems.get("*")
    if bad_quota:
        ev["invalid_quota"] = bad_quota
    if quotas is not None and spec is not None and not bad_quota:
        q_findings = quota_findings(spec, namespace, quotas.get(namespace, []))
        ev["quota"] = [f.sentence() for f in q_findings] or [f"no quota in {namespace} would be exceeded"]

    text_rc = text is not None and text.says == SAYS_RUNTIMECLASS
    text_quota = text is not None and text.says == SAYS_QUOTA
    text_past_rc = text is not None and text.says in (SAYS_QUOTA, SAYS_OTHER, SAYS_ADMITTED)
    text_past_quota = text is not None and text.says in (SAYS_OTHER, SAYS_ADMITTED)

    if rc_holds or text_rc:
        ev["agrees"] = _agree(rc_holds, text_rc, text)
        also = [f.sentence() for f in q_findings or ()]
        if also:
            ev["also"] = "the quota would refuse it too: " + "; ".join(also)
        why = f"RuntimeClass {rc!r} is not in runtimeclasses.json" if rc_holds else f"the API server said: {text.text}"  # type: ignore[union-attr]
        return AdmissionResult(word=words.NO_RUNTIMECLASS, reason=why, evidence=ev)
    if spec is None and text is None:
        return AdmissionResult(word=words.INSUFFICIENT_EVIDENCE, reason="neither the pod template nor the API server's text is in the bundle", evidence=ev)
    if rc_holds is None and not text_past_rc:
        ev["missing"] = RUNTIMECLASSES.file
        return AdmissionResult(word=words.INSUFFICIENT_EVIDENCE,
                               reason=f"cannot check RuntimeClass {rc!r}: {cluster.why_missing(RUNTIMECLASSES.name)}", evidence=ev)

    q_holds = bool(q_findings) if q_findings is not None else None
    if q_holds or text_quota:
        ev["agrees"] = _agree(q_holds, text_quota, text)
        first = q_findings[0].sentence() if q_findings else f"the API server said: {text.text}"  # type: ignore[union-attr]
        return AdmissionResult(word=words.QUOTA_EXCEEDED, reason=first, evidence=ev)
    if q_holds is None and not text_past_quota:
        ev["missing"] = RESOURCEQUOTAS.file
        why = f"an invalid quota in {namespace}: {bad_quota}" if bad_quota else cluster.why_missing(RESOURCEQUOTAS.name)
        return AdmissionResult(word=words.INSUFFICIENT_EVIDENCE, reason=f"cannot check quota: {why}", evidence=ev)

    if text is not None and text.says == SAYS_OTHER:
        return AdmissionResult(word=words.UNCLASSIFIED, reason=f"refused by admission for a reason not modelled: {text.text}", evidence=ev)
    return AdmissionResult(word=None, reason="admitted", evidence=ev, spec=spec)


def _agree(objects: bool | None, text_says: bool, text: ServerText | None) -> str:
    if text is None:
        return "no API server answer in the bundle; decided from the objects"
    if objects is None:
        return "decided by the API server's text (the objects it needs are not in the bundle)"
    if objects and text_says:
        return "yes: the objects and the API server's text agree"
    if objects:
        return f"no: the objects say refused, the API server said {text.says}"
    return "no: the API server refused it, but the objects in the bundle would admit it now (changed since?)"


def decide(case: Case) -> Decision | None:
    """Rows 1-2, for targets that never came to exist (attempts, refused owners)."""
    t = case.target
    if t.created:
        return None
    adm = judge_admission(case.cluster, case.spec, t.namespace, t.server_text)
    case.evidence["admission"] = adm.evidence
    if t.owner:
        case.evidence["owner"] = t.owner
    if t.answer is not None:
        case.evidence["answer"] = {k: t.answer.get(k) for k in ("command", "exitStatus", "stderr") if k in t.answer}
    if adm.word is not None:
        return Decision(word=adm.word, reason=adm.reason)
    case.spec = adm.spec
    if case.spec is None:
        return Decision(word=words.INSUFFICIENT_EVIDENCE, reason="the pod's spec is not in the bundle")
    return None


@prose.says("admission")
def _admission_says(value: object) -> list[str]:
    """What the API server answered and the same judgement rebuilt from the bundle's objects."""
    if not isinstance(value, dict):
        return []
    out = []
    api = value.get("api_server")
    if isinstance(api, dict) and api.get("text"):
        out.append(f"The API server said: \"{api['text']}\".")
    if value.get("runtimeClassName") is not None:
        have = ", ".join(map(str, value.get("runtimeclasses_in_bundle") or [])) or "none"
        out.append(f"It names RuntimeClass {value['runtimeClassName']}; the RuntimeClasses in the bundle: {have}.")
    if value.get("runtimeclass_refusal"):
        out.append(f"The RuntimeClass admission plugin would refuse it: {value['runtimeclass_refusal']}.")
    applied = value.get("runtimeclass_applied")
    if isinstance(applied, dict) and applied:
        out.append(f"Its RuntimeClass sets {', '.join(applied)} on it at admission.")
    if value.get("invalid_quota"):
        out.append(f"A quota of the namespace is invalid: {value['invalid_quota']}.")
    out += [f"{str(q)[:1].upper()}{str(q)[1:]}." for q in value.get("quota") or ()]
    if value.get("agrees") and not str(value["agrees"]).startswith("yes"):  # said only when they disagree
        out.append(f"Objects against the API server's answer: {value['agrees']}.")
    if value.get("also"):
        out.append(f"{str(value['also'])[:1].upper()}{str(value['also'])[1:]}.")
    if value.get("missing"):
        out.append(f"Needed: {value['missing']}.")
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
