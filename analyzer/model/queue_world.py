"""The queueing systems' records together (queues.md): Kueue with its quota tree, Volcano and KAI-Scheduler. Built once."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.validation import Loaded
from analyzer.model.kai import Kai, build_kai
from analyzer.model.queue_quota import QuotaTree, reservations
from analyzer.model.queues import Kueue, build_kueue
from analyzer.model.volcano import Volcano, build_volcano



@dataclass(frozen=True, kw_only=True)
class QueueWorld:
    kueue: Kueue
    tree: QuotaTree
    volcano: Volcano
    kai: Kai
    memo: dict = field(default_factory=dict, compare=False)  # rules' results per Workload: its pods share them

    @property
    def findings(self) -> list[tuple[str, str, str]]:
        return self.kueue.findings + self.volcano.findings + self.kai.findings


def build_queues(loaded: Loaded) -> QueueWorld:
    kueue = build_kueue(loaded)
    return QueueWorld(kueue=kueue, tree=QuotaTree(kueue, reservations(kueue)), volcano=build_volcano(loaded),
                      kai=build_kai(loaded))
