"""`no-scheduler` (causes.md, schedulers.md): the pod names a scheduler other than default-scheduler that nothing
in the bundle runs, no scheduler has ever looked at it, and it is older than a minute.

"Runs" is model/schedulers.py's rule (the scheduler's own Running pod, by its --scheduler-name, container names,
image or name labels; the same project's controllers, binders and webhooks do not count). "Looked at" is any
PodScheduled condition on the pod or any FailedScheduling event for it (whoever wrote it: a scheduler we failed
to recognise still writes them). A pod already bound (spec.nodeName) skips every scheduler.
"""

from __future__ import annotations

from analyzer import words
from analyzer import prose
from analyzer.kube import DEFAULT_SCHEDULER
from analyzer.model.autoscalers import seconds_between
from analyzer.model.events import instant
from analyzer.model.schedulers import GPU_GROUP, runs
from analyzer.bundle import catalog
from analyzer.model.events import SchedulerSaid
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Family, Answered, Plain, Rule

FRESH_SECONDS = 60  # a younger pod may simply not have been seen yet (schedulers.md)


def _looked_at(case: Case) -> bool:
    t = case.target
    conditions = t.status.get("conditions") if isinstance(t.status, dict) else None
    for cond in conditions if isinstance(conditions, list) else ():
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled":
            return True
    return (t.namespace, t.name) in case.cluster.scheduler_events


def running(name: str, case: Case) -> list[str]:
    """The Running pods (namespace/name) that run the scheduler `name`."""
    index = case.cluster.scheduler_index
    if index is None:
        return [pod for pod, says in case.cluster.schedulers.items() if runs(name, *says)]
    return index.running(name)


def _duration(seconds: int) -> str:
    parts, rest = [], max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, rest = divmod(rest, size)
        if n or (unit == "s" and not parts):
            parts.append(f"{n}{unit}")
    return "".join(parts[:2])


def decide(case: Case) -> Decision | None:
    spec, t = case.spec or {}, case.target
    name = spec.get("schedulerName")
    if not isinstance(name, str) or not name or name == DEFAULT_SCHEDULER or t.node_name or spec.get("nodeName"):
        return None
    if running(name, case) or _looked_at(case):
        return None
    now = case.cluster.now
    age = seconds_between(instant(t.created_at), now[0]) if now is not None else None
    if age is not None and age < FRESH_SECONDS:
        return None
    index = case.cluster.scheduler_index
    seen = list(index.names) if index is not None else sorted({n for says in case.cluster.schedulers.values() for n in says[1]})
    case.evidence["scheduler"] = {"schedulerName": name, "age_seconds": age,
                                  "bundle_time": now[1] if now is not None else None,
                                  "schedulers_seen": [p for p in sorted(case.cluster.schedulers)][:10],
                                  "names_seen": seen[:20]}
    when = f"{_duration(age)} old" if age is not None else "its age unknown (the bundle records no time)"
    return Decision(word=words.NO_SCHEDULER,
                    reason=f"spec.schedulerName {name!r}: no Running pod in the bundle runs that scheduler, and none "
                           f"has looked at the pod ({when}, no PodScheduled condition, no FailedScheduling event)")


def reservation(case: Case) -> Decision | None:
    """`node-runtime` for a KAI fraction pod whose GPU's reservation pod failed on its node (schedulers.md): KAI's
    binder binds the pod only once the reservation pod runs (pkg/binder/binding/resourcereservation)."""
    group = case.target.labels.get(GPU_GROUP) if isinstance(case.target.labels, dict) else None
    found = case.cluster.reservations.get(group) if isinstance(group, str) else None
    if found is None or not found.failed:
        return None
    case.evidence["kai_reservation"] = {"pod": found.pod, "node": found.node, "group": found.group,
                                        "failed": found.failed}
    return Decision(word=words.NODE_RUNTIME,
                    reason=f"KAI's reservation pod {found.pod} for its GPU group {found.group} on node "
                           f"{found.node or '(none)'} failed: {found.failed}")


@prose.says("kai_reservation")
def _say_reservation(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [f"KAI serves its GPU fraction through the reservation pod {value.get('pod')} on node {value.get('node')} "
            f"(GPU group {value.get('group')}); that pod failed: {value.get('failed')}."]


@prose.says("scheduler")
def _say_scheduler(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    out = [f"The pod asks for the scheduler {value.get('schedulerName')}; no Running pod in the bundle runs it "
           "(by its --scheduler-name argument, container names, image or name labels)."]
    age = value.get("age_seconds")
    if isinstance(age, int):
        out.append(f"It was created {_duration(age)} before the bundle's time (from {value.get('bundle_time')}), "
                   "and has no PodScheduled condition and no FailedScheduling event.")
    pods = value.get("schedulers_seen") or []
    if pods:
        out.append("Scheduler pods running: " + ", ".join(map(str, pods)) + "; they go by "
                   + ", ".join(map(str, value.get("names_seen") or [])) + ".")
    else:
        out.append("No Running pod in the bundle looks like a scheduler other than kube-scheduler.")
    return out


class SchedulersFamily(Plain):
    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        if answered.word != words.NO_SCHEDULER:
            return None
        return {"comparison": "no scheduler runs for it: no PodScheduled condition and no event are expected"}


FAMILY: Family = SchedulersFamily(name="schedulers", kinds=(catalog.PODS, catalog.EVENTS), rules=(
    Rule(rows="12", words=(words.NO_SCHEDULER,), decide=decide),  # a scheduler nothing runs
    Rule(rows="16", words=(words.NODE_RUNTIME,), decide=reservation),))  # KAI's reservation pod failed
