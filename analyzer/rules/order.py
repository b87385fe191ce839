"""The order of causes.md (version 4) as one table: read top to bottom, the first rule that holds is the answer.

Each row names the rows of the contract it decides, the words it can give and the one function (in its
family module) that decides them. A rule returns a Decision, or None to pass the target on. A rule that
needs a file the bundle lacks answers `insufficient-evidence` naming the file. Rows 22-33 are one funnel
over the nodes (rules/funnel.py); its stages are data of their own.

To add a family of causes: one module in rules/ with a `decide(case)`, its words in words.py, and a row here.
A row that refines an earlier row's answer (scaling-up and scale-up-blocked refine the funnel's) has `refine(case, decision)` instead:
it runs after the answer is found, and returns the refined Decision or None to keep it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer import words as w
from analyzer.rules import (admission, autoscalers, dra, funnel, intent, kai_queues, node_start, queues, readable, rest,
                            schedulers, vgpu, volumes)
from analyzer.rules.case import Case, Decision


@dataclass(frozen=True, kw_only=True)
class Rule:
    rows: str  # the rows of causes.md it decides ("" for the readability check before the order)
    words: tuple[str, ...]
    decide: Callable[[Case], Decision | None] | None = None
    refine: Callable[[Case, Decision], Decision | None] | None = None


ORDER: tuple[Rule, ...] = (
    Rule(rows="", words=(w.INSUFFICIENT_EVIDENCE,), decide=readable.decide),
    Rule(rows="1-6", words=(w.NO_RUNTIMECLASS, w.INVALID_SPEC, w.LIMIT_RANGE, w.ADMISSION_DENIED,
                            w.ADMISSION_UNAVAILABLE, w.QUOTA_EXCEEDED), decide=admission.decide),
    Rule(rows="6", words=(w.QUOTA_EXCEEDED,), decide=dra.claim_quota),  # a pod's ResourceClaim refused by quota
    Rule(rows="7", words=(w.NO_GPU_REQUEST,), decide=intent.no_gpu_request),
    # A queue holds it (Kueue, Volcano). Every flavor ruled out by the pod's selector or tolerations gives the
    # funnel's own words (selector-mismatch, untolerated-taint, listed at their rows below), the flavor named.
    Rule(rows="8-11", words=(w.QUEUE_MISCONFIGURED, w.QUEUE_QUOTA, w.QUEUE_TOPOLOGY, w.SCHEDULING_GATED),
         decide=queues.decide),
    # KAI-Scheduler's Queue of a pod's PodGroup (its scheduler running): missing, looping, or over limit / quota.
    Rule(rows="8-9", words=(w.QUEUE_MISCONFIGURED, w.QUEUE_QUOTA, w.INSUFFICIENT_EVIDENCE), decide=kai_queues.decide),
    Rule(rows="11", words=(w.SCHEDULING_GATED,), decide=intent.scheduling_gated),
    Rule(rows="12", words=(w.NO_SCHEDULER,), decide=schedulers.decide),  # a scheduler nothing runs
    # (also exhausted, for a kubelet rejection OutOf<resource>: listed with the funnel, at its place)
    Rule(rows="13-17", words=(w.IMAGE_PULL, w.VOLUME_MOUNT, w.NUMA_UNALIGNED, w.NODE_RUNTIME, w.NODE_SIDE),
         decide=node_start.decide),
    Rule(rows="16", words=(w.NODE_RUNTIME,), decide=schedulers.reservation),  # KAI's reservation pod failed
    Rule(rows="18-19", words=(w.NO_RESOURCECLAIM, w.NO_DEVICECLASS), decide=dra.claims_exist),
    Rule(rows="20-21", words=(w.NO_VOLUMECLAIM, w.VOLUME_UNBOUND), decide=volumes.decide),
    Rule(rows="22-33", words=tuple(dict.fromkeys(word for s in funnel.STAGES for word in
                                                 ((w.CORDONED, w.NODE_UNHEALTHY, s.word) if s.name == "taints" else
                                                  (w.RESOURCE_NAME_MISMATCH, s.word) if s.name == "advertised" else
                                                  (s.word,)))),
         decide=funnel.decide),
    Rule(rows="33", words=(w.EXHAUSTED,), decide=queues.gang),  # a Volcano gang: minMember pods at once
    # A GPU shared by HAMi or Volcano's vGPU: their device accounting over the funnel's candidates.
    Rule(rows="22, 24, 33", words=(w.SELECTOR_MISMATCH, w.NO_GPU_NODE, w.EXHAUSTED), decide=vgpu.decide),
    Rule(rows="34-35", words=(w.SCALING_UP, w.SCALE_UP_BLOCKED), refine=autoscalers.refine),
    Rule(rows="36-37", words=(w.UNCLASSIFIED, w.FITS_NOW), decide=rest.decide),
)


# The words some rule gives; a contract word outside it is not modelled yet (the README's table marks it).
DECIDED: frozenset[str] = frozenset(word for rule in ORDER for word in rule.words)


def walk(case: Case) -> Decision:
    for i, rule in enumerate(ORDER):
        decision = rule.decide(case) if rule.decide is not None else None
        if decision is not None:
            for later in ORDER[i + 1:]:
                if later.refine is not None:
                    decision = later.refine(case, decision) or decision
            return decision
    raise AssertionError("the last rule always decides")  # rest.decide never passes
