"""The order of causes.md as one table: read top to bottom, the first rule that holds is the answer.

Each entry places one family's rule (rules/family.py): the rows of the contract it decides, the words it can give
and the function that decides them all come from the family's module. A rule returns a Decision, or None to pass
the target on; one that needs a file the bundle lacks answers `insufficient-evidence` naming the file. The rows
selector-mismatch to exhausted are one funnel over the nodes (rules/funnel.py); its stages are data of their own.

To add a family of causes: one module in rules/ with its `FAMILY` object, its words in words.py, and its place
here (README, "Adding a family"). A family placed twice decides rows at two places of the contract.
"""

from __future__ import annotations

from analyzer.rules import (admission, autoscalers, dra, funnel, intent, kai_queues, node_start, queues, readable, rest,
                            schedulers, vgpu, volumes)
from analyzer.rules.case import Case, Decision
from analyzer.rules.family import Placed, place

ORDER: tuple[Placed, ...] = (
    place(readable.FAMILY, ""),
    place(admission.FAMILY, "1-6"),
    place(dra.FAMILY, "6"),
    place(intent.FAMILY, "7"),
    place(queues.FAMILY, "8-11"),
    place(kai_queues.FAMILY, "8-9"),
    place(intent.FAMILY, "11"),
    place(schedulers.FAMILY, "12"),
    place(node_start.FAMILY, "13-17"),
    place(schedulers.FAMILY, "16"),
    place(dra.FAMILY, "18-19"),
    place(volumes.FAMILY, "20-21"),
    place(funnel.FAMILY, "22-33"),
    place(queues.FAMILY, "33"),
    place(vgpu.FAMILY, "22, 24, 33"),
    place(autoscalers.FAMILY, "34-35"),
    place(rest.FAMILY, "36-37"),
)

# What the classifier takes from the order besides the rules, so that it names no family: the funnels its rules
# share per pod shape, and the answer for a pod asked for by name that is no target (a Running pod).
Funnels = funnel.Funnels
running_pod = intent.running_pod

# The words some rule gives; a contract word outside it is not modelled yet (the README's table marks it).
DECIDED: frozenset[str] = frozenset(word for placed in ORDER for word in placed.words)


def walk(case: Case, order: tuple[Placed, ...] = ORDER) -> Decision:
    for i, placed in enumerate(order):
        decide = placed.rule.decide
        decision = decide(case) if decide is not None else None
        if decision is not None:
            for later in order[i + 1:]:
                if later.rule.refine is not None:
                    decision = later.rule.refine(case, decision) or decision
            return decision
    raise AssertionError("the last rule always decides")  # rest's rule never passes
