"""The slim views the rules read, built once per bundle and not changed afterwards.

Nothing here decides a cause word. NodeView: what a node offers; Cluster: the
views and indexes (usage per node, scheduler messages, quotas, RuntimeClasses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from analyzer.bundle.validation import Document, Loaded, Violation
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.matching import Taint
from analyzer.targets.target import Target

TERMINATED = ("Succeeded", "Failed")


@dataclass(slots=True)
class NodeView:
    name: str
    index: int
    labels: dict[str, str]
    unschedulable: bool
    taints: tuple[Taint, ...]
    capacity: dict[str, int]
    allocatable: dict[str, int]


@dataclass(frozen=True)
class InvalidNode:
    """A node that failed validation: out of the funnel, but a pod it might have served is not guessed at."""

    name: str | None
    labels: dict[str, str] | None  # None when unreadable: then it might match any selector
    finding: str


@dataclass
class SchedulerSaid:
    message: str
    source: str  # "PodScheduled condition" or "FailedScheduling event at <time>"
    reason: str = ""


@dataclass
class Cluster:
    loaded: Loaded
    config: AcceleratorConfig
    nodes: list[NodeView] | None
    nodes_by_name: dict[str, NodeView]
    usage: dict[str, dict[str, int]]
    pods_on: dict[str, list[tuple[int, dict[str, int]]]]  # node -> (pods.json index, effective requests)
    unknown_usage: dict[str, str]
    pod_targets: list[Target]
    runtimeclasses: dict[str, dict] | None  # name -> RuntimeClass object; None when not in the bundle
    quotas: dict[str, list[dict]] | None  # namespace -> quota objects; None when not in the bundle
    scheduler_events: dict[tuple[str, str], SchedulerSaid]
    server_minor: int | None
    findings: "Findings" = field(default_factory=lambda: Findings())
    quota_problems: dict[str, str] = field(default_factory=dict)  # namespace ("*": unknown) -> an invalid quota's finding
    node_problems: list["InvalidNode"] = field(default_factory=list)  # nodes left out of the funnel
    pod_invalid: dict[int, list[Violation]] = field(default_factory=dict)  # pods.json index -> why it is left out

    def valid_pods(self) -> Iterator[tuple[int, dict]]:
        doc = self.pods
        if doc is None:
            return
        for i, item in enumerate(doc.items):
            if i not in self.pod_invalid:
                yield i, item

    @property
    def pods(self) -> Document | None:
        return self.loaded.documents.get("pods")

    def why_missing(self, kind: str) -> str:
        return self.loaded.why_missing(kind)



class Findings:
    """What the model finds beyond the schemas (duplicates, unusable quantities, attempts that hold no
    valid pod). Kept here, beside the views, not written back into the validation result: data flows one way."""

    def __init__(self) -> None:
        self.items: list[Violation] = []

    def add(self, file: str, triples: list[tuple[str, str, str]]) -> list[Violation]:
        out = [Violation(file, p, e, f) for p, e, f in triples]
        self.items.extend(out)
        return out


