"""A webhook's `matchConditions` judged for one pod CREATE, as the API server judges them before calling it
(k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go, Matcher.Match): every condition is
evaluated; one that evaluates to false means the webhook is not called for this request, whatever the others
give; otherwise an evaluation error refuses the request when the webhook's failurePolicy is Fail (and skips the
webhook when it is Ignore); all true means the webhook is called.

Offline, the request is rebuilt from what the bundle holds: `object` is the pod (its namespace, labels, name when
known, and spec, as the owner's template or the manifest gives them), `oldObject` is null (a CREATE), `request`
carries the operation, namespace, kind and resource. What the bundle cannot know (who made the request,
`request.userInfo`; the `authorizer`; the pod's annotations or owner references as the controller writes them) is
not guessed: a condition that reads it is *unknown*, and an unknown condition counts as matching (the webhook is
assumed to be called), said as such in the evidence. The same bounds as the DRA selectors guard hostile
expressions (model/dra/cel_limits.py: size, nesting, macro work, a per-bundle budget).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from analyzer.model.dra.cel_limits import WORK_BUDGET, is_panic, scan

# admissionregistration.k8s.io/v1 validation: at most 64 matchConditions per webhook.
MAX_CONDITIONS = 64
# Names a condition may read that the bundle does not hold for a pod being created.
_UNKNOWN_NAMES = frozenset({"userInfo", "authorizer", "annotations", "generateName", "ownerReferences", "uid",
                            "options", "params", "variables", "finalizers", "managedFields", "creationTimestamp"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Outcome(Enum):
    CALLED = "called"  # every condition true: the webhook is called for this pod
    SKIPPED = "skipped"  # a condition is false: the webhook is not called
    ERROR = "error"  # an evaluation error and no false: refused under failurePolicy Fail
    UNKNOWN = "unknown"  # a condition reads what the bundle does not hold, or cannot be evaluated here


@dataclass(frozen=True, kw_only=True)
class Condition:
    name: str
    expression: str


@dataclass(frozen=True, kw_only=True)
class Judgement:
    outcome: Outcome
    detail: str = ""  # a sentence: the condition that decided, or why it cannot be told

    @property
    def may_call(self) -> bool:
        """Can this webhook stand between the pod and the API server? (Error: the request is refused anyway.)"""
        return self.outcome is not Outcome.SKIPPED


def conditions_of(raw: object) -> tuple[Condition, ...]:
    """`webhooks[].matchConditions` as written; a non-list or an entry without a string expression is kept as an
    expression that cannot be evaluated (the API server would have refused it: the bundle is not the cluster)."""
    if not isinstance(raw, list):
        return ()
    out = []
    for c in raw[:MAX_CONDITIONS]:
        c = c if isinstance(c, dict) else {}
        expression = c.get("expression")
        out.append(Condition(name=str(c.get("name") or "?")[:253],
                             expression=expression if isinstance(expression, str) else repr(expression)[:200]))
    return tuple(out)


@dataclass(kw_only=True)
class ConditionJudge:
    """Judges conditions for one bundle: each distinct expression compiled once, a work budget for all of them.
    State of one analysis, owned by the admission world (not a cache on a model object)."""

    work_budget: int = WORK_BUDGET
    _work: int = 0
    _compiled: dict[str, Any] = field(default_factory=dict)  # expression -> cel.Program, or why not (str)

    def judge(self, conditions: tuple[Condition, ...], *, pod: dict, namespace: str) -> Judgement:
        if not conditions:
            return Judgement(outcome=Outcome.CALLED)
        request = {"operation": "CREATE", "namespace": namespace, "name": str(pod.get("metadata", {}).get("name") or ""),
                   "kind": {"group": "", "version": "v1", "kind": "Pod"},
                   "resource": {"group": "", "version": "v1", "resource": "pods"},
                   "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
                   "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                   "subResource": "", "dryRun": False}
        errors: list[str] = []
        unknown: list[str] = []
        for c in conditions:
            result = self._evaluate(c, {"object": pod, "oldObject": None, "request": request})
            if result is False:
                return Judgement(outcome=Outcome.SKIPPED,
                                 detail=f"its matchCondition {c.name} ({_short(c.expression)}) is false for this pod")
            if isinstance(result, _Unknown):
                unknown.append(f"{c.name} ({result.why})")
            elif isinstance(result, str):
                errors.append(f"{c.name}: {result}")
        if unknown:
            return Judgement(outcome=Outcome.UNKNOWN,
                             detail="whether its matchConditions select this pod cannot be told from the bundle: "
                                    + "; ".join(unknown[:3]) + " (counted as selecting it)")
        if errors:
            return Judgement(outcome=Outcome.ERROR,
                             detail="its matchConditions fail to evaluate (" + "; ".join(errors[:3])
                                    + "), which refuses the request under failurePolicy Fail")
        return Judgement(outcome=Outcome.CALLED, detail=f"its {len(conditions)} matchCondition(s) select this pod")

    def _evaluate(self, c: Condition, context: dict) -> bool | str | _Unknown:
        """False or True; a runtime error in the API server's terms (str); or _Unknown."""
        reads = set(_IDENT.findall(c.expression))
        if reads & _UNKNOWN_NAMES:
            return _Unknown(why="it reads " + ", ".join(sorted(reads & _UNKNOWN_NAMES)) + ", which the bundle does "
                                                                                         "not hold")
        program = self._compile(c.expression)
        if isinstance(program, str):
            return _Unknown(why=program)
        cost = scan(c.expression).work
        if self._work + cost > self.work_budget:
            return _Unknown(why=f"not evaluated: this bundle's CEL work budget ({self.work_budget:,}) is spent")
        self._work += cost
        try:
            import cel

            result = program.execute(cel.Context(context))
        except KeyError as exc:
            return f"no such key: {exc.args[0] if exc.args else exc}"
        except (TypeError, ValueError, ArithmeticError, IndexError) as exc:
            return str(exc).split(". ", 1)[0][:300]
        except RuntimeError as exc:
            return _Unknown(why=f"the CEL library cannot evaluate it: {str(exc).split('. ', 1)[0][:200]}")
        except (RecursionError, MemoryError) as exc:
            return _Unknown(why=f"evaluation exceeded the library's limits: {exc}"[:300])
        except BaseException as exc:
            if not is_panic(exc):
                raise
            return _Unknown(why=f"the CEL library failed on it: {exc}"[:300])
        if type(result) is not bool:
            # matcher.go: a result that is not a bool is an evaluation error.
            return f"the result is a {type(result).__name__}, not a bool"
        return result

    def _compile(self, expression: str) -> Any:
        found = self._compiled.get(expression)
        if found is None:
            scanned = scan(expression)
            if scanned.refusal is not None:
                found = f"refused: {scanned.refusal}"
            else:
                try:
                    import cel

                    found = cel.compile(expression)
                except BaseException as exc:
                    if not isinstance(exc, (ValueError, RuntimeError, RecursionError, MemoryError)) and not is_panic(exc):
                        raise
                    found = f"the CEL library cannot compile it: {str(exc).splitlines()[0][:200] if str(exc) else exc!r}"
            self._compiled[expression] = found
        return found


@dataclass(frozen=True, kw_only=True)
class _Unknown:
    why: str


def _short(expression: str, width: int = 80) -> str:
    one = " ".join(expression.split())
    return one if len(one) <= width else one[:width - 1] + "…"
