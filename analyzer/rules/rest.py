"""The last two words of causes.md: some node fits by this bundle. `unclassified` when the pod depends on something
not modelled (the scheduler's own message is then the best evidence), else `fits-now`."""

from __future__ import annotations

from analyzer import words
from analyzer import prose
from analyzer.model.gpu_sharing import sharing_request
from analyzer.model.podspec import unmodelled
from analyzer.rules import dra_devices
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule
from analyzer.text import some_names


def decide(case: Case) -> Decision:
    c, ev = case.cluster, case.evidence
    assert case.funnel is not None  # the funnel rule ran and left candidates
    fits = case.funnel.fit_names()
    if case.claims is not None:
        # Nodes where a device or expression the model cannot judge decides: unknown, not "fits".
        why = {n.name: dra_devices.unknown(case.claims, n, c) for n in case.funnel.fits}
        if all(why.values()):
            ev["not_modelled"] = sorted({reason for reason in why.values() if reason})[:10]  # all given: all()
            return Decision(word=words.UNCLASSIFIED,
                            reason=f"{len(fits)} node(s) might fit, but the claims cannot be judged there: "
                                   f"{next(iter(why.values()))}")
        fits = [n for n in fits if not why[n]]
    unknown = [n for n in fits if n in c.unknown_usage] if c.unknown_usage else []
    if unknown and len(unknown) == len(fits):
        ev["missing"] = c.unknown_usage[unknown[0]].file
        ev["unknown_usage"] = {n: str(c.unknown_usage[n]) for n in unknown[:20]}
        return Decision(word=words.INSUFFICIENT_EVIDENCE,
                        reason=f"only {some_names(unknown)} could take it, and an invalid pod bound there hides its usage")
    needs = unmodelled(case.spec or {})
    shared = ev.get("vgpu")
    if isinstance(shared, dict) and shared.get("fits_on"):  # HAMi's or Volcano's accounting is modelled (rules/vgpu.py)
        fits = [n for n in fits if n in shared["fits_on"]]
        needs = [n for n in needs if not n.startswith("schedulerName")]
    kai = ev.get("kai_queue")
    if (isinstance(kai, dict) and not kai.get("problem") and not kai.get("over")
            and not sharing_request(case.spec or {}, case.target.annotations)):
        # KAI-Scheduler's queue admits it (rules/kai_queues.py) and it asks for whole GPUs: KAI judges a node for
        # such a pod by its resources, pod count, Ready condition and then kube-scheduler's own filters
        # (pkg/scheduler/plugins/predicates/predicates.go), which the funnel above is. Its optional node
        # restriction (gpu-worker / cpu-worker labels) is a setting the bundle does not hold.
        needs = [n for n in needs if not n.startswith("schedulerName")]
    f = case.filters
    needs += sorted({t.unknown for t in (f.affinity + f.anti if f is not None else ()) if t.unknown})
    ev["fits_on"] = fits[:50]
    if needs:
        ev["not_modelled"] = needs
        return Decision(word=words.UNCLASSIFIED, reason=f"{len(fits)} node(s) fit, but it depends on: " + "; ".join(needs))
    # kube-scheduler moves an unschedulable pod back to its active queue when the cluster changes, and at the latest
    # after podMaxInUnschedulablePodsDuration (5 minutes by default: scheduling_queue.go).
    return Decision(word=words.FITS_NOW, reason=f"fits now on {some_names(fits)}",
                    action=f"wait for the scheduler's next try (within 5 minutes): by the bundle it fits on "
                           f"{some_names(fits)}; if it stays Pending, the scheduler sees what the bundle does not: "
                           f"compare its message with this evidence")


@prose.says("fits_on")
def _fits_on_says(value: object) -> list[str]:
    return [f"It fits now on {some_names([str(n) for n in value])}."] if isinstance(value, list) and value else []


@prose.says("not_modelled")
def _not_modelled_says(value: object) -> list[str]:
    return [f"It depends on what is not modelled: {'; '.join(map(str, value))}."] if value else []


@prose.says("unknown_usage")
def _unknown_usage_says(value: object) -> list[str]:
    return [f"Usage on node {n} is unknown: {why}." for n, why in value.items()] if isinstance(value, dict) else []


FAMILY: Family = Plain(name="rest", kinds=(catalog.NODES, catalog.PODS), rules=(
    Rule(rows="36-37", words=(words.UNCLASSIFIED, words.FITS_NOW), decide=decide),))
