"""A family of causes that lives in the tests only: what README "Adding a family" describes, in the fewest lines.

It decides one word for the pods it is told to hold (by name), writes one evidence key while deciding and one
after the decision, says each as a sentence, and speaks for its word in the scheduler's message. It reads no kind.
"""

from __future__ import annotations

from analyzer import prose, words
from analyzer.model.events import SchedulerSaid
from analyzer.rules.case import Case, Decision
from analyzer.bundle.catalog import Kind
from analyzer.rules.family import Answered, Family, Rule


class ToyFamily:
    """Written without rules/family.py's `Plain`: the interface is structural, any object with its members is one."""

    name = "toy"
    kinds: tuple[Kind, ...] = ()

    def __init__(self, *holds: str) -> None:
        self.holds = frozenset(holds)  # the pods (ns/name) it holds
        self.rules = (Rule(rows="toy", words=(words.UNCLASSIFIED,), decide=self.decide),)

    def decide(self, case: Case) -> Decision | None:
        if case.target.key not in self.holds:
            return None
        case.evidence["toy_hold"] = {"by": "the toy controller"}
        return Decision(word=words.UNCLASSIFIED, reason="held by the toy controller")

    def evidence(self, answered: Answered) -> None:  # after the decision: what a later stage would add
        if answered.decision.word == words.UNCLASSIFIED and "toy_hold" in answered.case.evidence:
            answered.case.evidence["toy_after"] = answered.case.target.name

    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        if "toy_hold" not in answered.case.evidence:
            return None
        return {"rebuilt": None, "comparison": "the toy controller holds it before any scheduler sees it"}

    def asks_nodes(self, answered: Answered) -> bool:
        return "toy_hold" not in answered.case.evidence


@prose.says("toy_hold")
def _say_hold(value: object) -> list[str]:
    return [f"The pod is held by {value['by']}."] if isinstance(value, dict) else []


@prose.says("toy_after")
def _say_after(value: object) -> list[str]:
    return [f"The toy looked at {value} once the answer was known."]


_CHECKED: type[Family] = ToyFamily  # the static check, as kube-scheduler's `var _ framework.FilterPlugin = &Fit{}`
