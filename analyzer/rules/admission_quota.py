"""The ResourceQuota admission plugin, for `quota-exceeded` (plugin/pkg/admission/resourcequota with the pod
evaluator of pkg/quota/v1/evaluator/core/pods.go): the keys a pod counts toward, the scopes that select which pods a
quota counts, and `status.used` + the pod's amount against `spec.hard`. It runs last, over the spec the earlier
admission steps leave (RuntimeClass overhead, LimitRange defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from analyzer.model import quantity
from analyzer.model.build import exact_hard
from analyzer.model.podspec import all_containers, qos_best_effort, quota_usage
from analyzer.model.quantity import QuantityError, format_exact

@dataclass(frozen=True, kw_only=True)
class QuotaFinding:
    quota: str
    key: str
    problem: str  # exceeded | must-specify | status-unknown
    requested: str = ""
    used: str = ""
    hard: str = ""
    at_least: str = ""  # the hard limit that would admit it: used + requested
    excess: str = ""  # what must be freed: used + requested - hard
    alone: bool = False  # the pod alone asks more than the hard limit: freeing usage cannot help

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
                                          used=format_exact(used), hard=format_exact(hard[key]),
                                          at_least=format_exact(used + amount),
                                          excess=format_exact(used + amount - hard[key]), alone=amount > hard[key]))
    return found


def quota_action(f: QuotaFinding, namespace: str) -> str:
    """What to do about one refusal, the quota and the amounts named (the plugin compares used + requested with
    hard, so those are the two levers: free usage, or raise hard)."""
    where = f"ResourceQuota {namespace}/{f.quota}"
    if f.problem == "exceeded" and f.alone:
        asked = (f.key.removeprefix("requests.") if f.key.startswith("requests.")
                 else f"{f.key.removeprefix('limits.')} limit" if f.key.startswith("limits.") else f.key)
        return (f"ask for at most {f.hard} {asked} (the pod alone asks {f.requested}, more than {where} allows), or "
                f"raise its hard {f.key} to at least {f.at_least}")
    if f.problem == "exceeded":
        return (f"free {f.excess} {f.key} in namespace {namespace} ({f.used} of {f.hard} used), or raise the hard "
                f"{f.key} of {where} to at least {f.at_least}")
    if f.problem == "must-specify":
        return f"state {f.key} on every container ({where} limits it), or give the namespace a LimitRange default"
    return (f"wait for the quota controller to count {f.key} in {where} (status.used), or check that "
            f"kube-controller-manager runs")
