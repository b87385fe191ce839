"""A family of causes: the one typed interface every family module implements, and the classifier reads.

A family is one module of rules/ with one object, `FAMILY`, that says which catalog kinds it reads, which rows of
causes.md it decides (each a `Rule`: its words and the function that decides them), and the evidence it adds once
the answer is known (`evidence`, `scheduler`). rules/order.py places the families' rules in the contract's order;
the classifier walks that order and calls these hooks, and never names a family or a word for its evidence.

The check that a module's object implements the interface is made where it is defined, as kube-scheduler does with
`var _ framework.FilterPlugin = &Fit{}`: `FAMILY: Family = AdmissionFamily()` is checked by a type checker, and
tests/test_family_protocol.py checks every family in the order at run time (`Family` is runtime-checkable).

Evidence sentences are not part of this interface's methods: each evidence key a family writes is said by the
renderer it registers beside the code that writes it (`@prose.says("key")`, analyzer/prose.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from analyzer.bundle.catalog import Kind
from analyzer.model.views import Cluster
from analyzer.rules.case import Case, Decision

from analyzer.rules.funnel_result import FunnelResult, ShapeEvidence

if TYPE_CHECKING:
    from analyzer.model.events import SchedulerSaid
    from analyzer.rules.checks import PodFacts
    from analyzer.verdict import Fit


class EvidenceMakers(Protocol):
    """What the evidence layer (analyzer/evidence/makers.py) makes for a family's hooks, over one bundle: the
    families decide when each is made and for which pods, the makers how. Passed in by the classifier, as the
    evidence modules read the rules' checks and rules/ cannot import them back."""

    def fit(self, funnel: FunnelResult, *, every: bool) -> Fit: ...  # exhausted's rows (every: not just closest)

    def fit_action(self, fit: Fit, facts: PodFacts, controller: str | None) -> str | None: ...  # exhausted's action, by its sub-case

    def nearest(self, facts: PodFacts) -> dict: ...  # the nodes one change away

    def filters(self, funnel: FunnelResult) -> dict: ...  # volumes, inter-pod terms, spread counts

    def gpu_names(self, funnel: FunnelResult) -> dict: ...  # the vendor's other device names, GFD labels

    def rebuilt(self, facts: PodFacts) -> str | None: ...  # the scheduler's message rebuilt from the checks

    def prefilter(self, sentence: str) -> str: ...  # a PreFilter rejection's whole message


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One place of a family in the order: the rows of causes.md it decides ("" for the readability check before
    the order), the words it can give, and the one function that decides them. A rule that refines an earlier
    rule's answer (scaling-up and scale-up-blocked refine the funnel's) has `refine` instead: it runs after the
    answer is found, and returns the refined Decision or None to keep it."""

    rows: str
    words: tuple[str, ...]
    decide: Callable[[Case], Decision | None] | None = None
    refine: Callable[[Case, Decision], Decision | None] | None = None


@dataclass(kw_only=True)
class Answered:
    """A target once its answer is found: what the families' evidence hooks read, and what they give the verdict
    beside the evidence (the funnel's stage table, exhausted's fit rows, a next action of the pod's own)."""

    case: Case
    decision: Decision
    word: str  # the word whose evidence is shown: a refined decision keeps its underlying word's
    makers: EvidenceMakers
    node_limit: int | None  # names per removed-nodes group in the funnel evidence (None: every node)
    stages: list[dict] | None = None
    fit: Fit | None = None
    action: str | None = None

    @property
    def cluster(self) -> Cluster:
        return self.case.cluster

    nodes_asked: bool = True  # False: a family held the pod before any node was asked (Family.asks_nodes)

    @property
    def shape(self) -> ShapeEvidence | None:
        """The per-shape evidence of the case's funnel; None when no funnel was run for it."""
        return shape_of(self.case.funnel) if self.case.funnel is not None else None


def shape_of(funnel: FunnelResult) -> ShapeEvidence:
    """The per-shape evidence of a funnel, made on first use."""
    if funnel.evidence is None:
        funnel.evidence = ShapeEvidence()
    return funnel.evidence


@runtime_checkable
class Family(Protocol):
    """What a family of causes implements (analyzer/rules/*.py, one object `FAMILY` per module)."""

    # Read-only members: a frozen dataclass's fields, a class attribute or a property all implement them.
    @property
    def name(self) -> str: ...  # for messages and tests: the family's name ("admission", "funnel")

    @property
    def kinds(self) -> tuple[Kind, ...]: ...  # the catalog rows it reads (analyzer/bundle/catalog.py)

    @property
    def rules(self) -> tuple[Rule, ...]: ...  # its places in the order, each with the rows and words it decides

    def evidence(self, answered: Answered) -> None:
        """Add the evidence made after the decision to `answered.case.evidence` (or answered's other fields)."""
        ...

    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        """What the scheduler's message entry says beside the recorded message (`rebuilt`, `comparison`) when
        this family speaks for the answer's word; None when it does not (the next family in the order is asked)."""
        ...

    def asks_nodes(self, answered: Answered) -> bool:
        """False when this family held the pod before any node was asked (a queue): no message is rebuilt."""
        ...


@dataclass(frozen=True, kw_only=True, eq=False)
class Plain:
    """A family with no evidence after the decision: its hooks do nothing. A family with some subclasses it and
    overrides the hooks it needs. Compared by identity: a family is one object."""

    name: str
    kinds: tuple[Kind, ...]
    rules: tuple[Rule, ...]

    def evidence(self, answered: Answered) -> None:
        return None

    def scheduler(self, answered: Answered, said: SchedulerSaid | None) -> dict | None:
        return None

    def asks_nodes(self, answered: Answered) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<family {self.name}>"


@dataclass(frozen=True, kw_only=True)
class Placed:
    """One entry of the order: a family's rule at its place."""

    family: Family
    rule: Rule

    @property
    def rows(self) -> str:
        return self.rule.rows

    @property
    def words(self) -> tuple[str, ...]:
        return self.rule.words


def place(family: Family, rows: str) -> Placed:
    """The family's rule deciding `rows`, for the order."""
    for r in family.rules:
        if r.rows == rows:
            return Placed(family=family, rule=r)
    raise KeyError(f"family {family.name} decides no rows {rows!r}")


def families(order: tuple[Placed, ...]) -> tuple[Family, ...]:
    """Each family of the order once, at its first place."""
    return tuple(dict.fromkeys(p.family for p in order))


def with_hook(among: tuple[Family, ...], hook: str) -> tuple[Family, ...]:
    """The families, in the given order, whose `hook` may do something: a Plain's own does nothing, so the
    classifier does not call it for every target (a few microseconds each, on 150,000 pods)."""
    return tuple(f for f in among if not (isinstance(f, Plain) and getattr(type(f), hook) is getattr(Plain, hook)))
