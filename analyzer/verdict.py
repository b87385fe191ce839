"""A verdict: one target's cause word, reason and evidence, complete when classification returns.

Formats (analyzer/report/) only render it; nothing here computes. The funnel and fit evidence are plain data
shared by every pod of one shape (a Deployment's hundred replicas share one funnel)."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import words
from analyzer.model.target import Target


@dataclass(frozen=True, kw_only=True)
class FitSize:
    requested: str
    largest_allocatable: str
    largest_free: str
    largest_free_on: str
    free_total: str
    candidates: int


@dataclass(frozen=True, kw_only=True)
class Fit:
    """For `exhausted`: each candidate's allocatable, used (by whom), free, requested; and the sub-cases."""

    rows: list[dict]
    fragmented: bool
    too_large: list[str]
    # When rows show only the candidates closest to fitting: how many there are, how many are short of each
    # resource, and the largest free amount of each anywhere among them (evidence/fit.py).
    rest: dict | None = None
    # Per resource short on every candidate: what the pod asks, the largest allocatable and free on one
    # candidate (and that node), the free summed over all: the numbers the action names.
    sizes: dict[str, "FitSize"] | None = None

    def as_data(self) -> dict:
        out = {"rows": self.rows, "fragmented": self.fragmented, "too_large": self.too_large}
        if self.rest is not None:
            out["rest"] = self.rest
        return out


@dataclass(frozen=True, kw_only=True)
class Verdict:
    target: Target
    word: str
    reason: str
    evidence: dict
    funnel: list[dict] | None = None  # per stage: name, nodes in/out, removed nodes grouped by reason
    fit: Fit | None = None
    scheduler: dict | None = None  # the scheduler's message: recorded, rebuilt, compared
    action: str | None = None  # this pod's own next action (its objects named); None: the word's

    @property
    def next_action(self) -> str:
        """What to do for this target: its own action when the rule named one, else the word's from causes.md."""
        return self.action or words.next_action(self.word)

    @property
    def key(self) -> str:
        return self.target.key

    @property
    def refused(self) -> bool:
        """A manifest, or an owner's pods, that the API server refuses (a never-created row of causes.md):
        no pod exists to look at, so a person meets these first."""
        return self.target.kind != "Pod" and self.word in words.NEVER_CREATED

    def to_dict(self) -> dict:
        """The JSON shape described by schemas/verdicts.schema.json."""
        t = self.target
        out: dict = {
            "kind": t.kind,
            "namespace": t.namespace,
            "name": t.name,
            "word": self.word,
            "reason": self.reason,
            "next_action": self.next_action,
            "source": t.source,
            "evidence": self.evidence,
            "funnel": self.funnel,
            "fit": self.fit.rows if self.fit else None,
            "fragmented": self.fit.fragmented if self.fit else None,
            "too_large": self.fit.too_large if self.fit else None,
            "scheduler_message": None,
        }
        if self.scheduler:
            out["scheduler_message"] = self.scheduler.get("message")
            out["scheduler"] = self.scheduler
        return out
