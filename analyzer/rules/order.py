"""The order of causes.md (version 3) as one table: read top to bottom, the first rule that holds is the answer.

Each row names the rows of the contract it decides, the words it can give and the one function (in its
family module) that decides them. A rule returns a Decision, or None to pass the target on. A rule that
needs a file the bundle lacks answers `insufficient-evidence` naming the file. Rows 15-25 are one funnel
over the nodes (rules/funnel.py); its stages are data of their own.

To add a family of causes: one module in rules/ with a `decide(case)`, its words in words.py, and a row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer import words as w
from analyzer.rules import admission, dra, funnel, intent, readable, rest
from analyzer.rules.case import Case, Decision


@dataclass(frozen=True, kw_only=True)
class Rule:
    rows: str  # the rows of causes.md it decides ("" for the readability check before the order)
    words: tuple[str, ...]
    decide: Callable[[Case], Decision | None]


ORDER: tuple[Rule, ...] = (
    Rule(rows="", words=(w.INSUFFICIENT_EVIDENCE,), decide=readable.decide),
    Rule(rows="1-2", words=(w.NO_RUNTIMECLASS, w.QUOTA_EXCEEDED), decide=admission.decide),
    Rule(rows="2", words=(w.QUOTA_EXCEEDED,), decide=dra.claim_quota),  # a pod's ResourceClaim refused by quota
    Rule(rows="3", words=(w.NO_GPU_REQUEST,), decide=intent.no_gpu_request),
    Rule(rows="6", words=(w.SCHEDULING_GATED,), decide=intent.scheduling_gated),
    Rule(rows="10", words=(w.NODE_SIDE,), decide=intent.node_side),
    Rule(rows="11-12", words=(w.NO_RESOURCECLAIM, w.NO_DEVICECLASS), decide=dra.claims_exist),
    Rule(rows="15-25", words=tuple(s.word for s in funnel.STAGES[:3]) + (w.CORDONED,) +
         tuple(s.word for s in funnel.STAGES[3:]), decide=funnel.decide),
    Rule(rows="28-29", words=(w.UNCLASSIFIED, w.FITS_NOW), decide=rest.decide),
)


# The words some rule gives; a contract word outside it is not modelled yet (the README's table marks it).
DECIDED: frozenset[str] = frozenset(word for rule in ORDER for word in rule.words)


def walk(case: Case) -> Decision:
    for rule in ORDER:
        decision = rule.decide(case)
        if decision is not None:
            return decision
    raise AssertionError("the last rule always decides")  # rest.decide never passes
