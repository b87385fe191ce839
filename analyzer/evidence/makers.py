"""The evidence the families make after a decision, over one bundle (rules/family.py `EvidenceMakers`).

The families' hooks decide when a piece of evidence is made and for which pods; this says how, with the modules
of this package. Made once per classifier: the nearest nodes and the rebuilt message keep bundle-wide memos.
"""

from __future__ import annotations

from analyzer.evidence import scheduler_message
from analyzer.evidence.filters import filter_evidence, prefilter_message
from analyzer.evidence.fit import CLOSEST, fit_evidence
from analyzer.evidence.fit import action as fit_action
from analyzer.evidence.gpu_names import gpu_names
from analyzer.evidence.nearest import Nearest
from analyzer.model.views import Cluster
from analyzer.rules.checks import PodFacts
from analyzer.rules.family import EvidenceMakers
from analyzer.rules.funnel_result import FunnelResult
from analyzer.verdict import Fit


class Makers:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._rebuilder = scheduler_message.Rebuilder(cluster)
        self._nearest = Nearest(cluster)

    def fit(self, funnel: FunnelResult, *, every: bool) -> Fit:
        return fit_evidence(self.cluster, funnel.facts, funnel, None if every else CLOSEST)

    def fit_action(self, fit: Fit, facts: PodFacts, controller: str | None) -> str | None:
        return fit_action(fit, facts, controller)

    def nearest(self, facts: PodFacts) -> dict:
        return self._nearest.of(facts)

    def filters(self, funnel: FunnelResult) -> dict:
        return filter_evidence(self.cluster, funnel)

    def gpu_names(self, funnel: FunnelResult) -> dict:
        return gpu_names(funnel, self.cluster)

    def rebuilt(self, facts: PodFacts) -> str | None:
        return self._rebuilder.rebuild(facts)

    def prefilter(self, sentence: str) -> str:
        return prefilter_message(self.cluster, sentence)


_CHECKED: type[EvidenceMakers] = Makers  # Makers implements the interface the families' hooks read
