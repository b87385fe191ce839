"""Pods nominated to a node by preemption, as the scheduler's filters count them (filters.md: existing pods).

A pending pod whose `status.nominatedNodeName` is set was promised room on that node when the scheduler preempted
lower-priority pods there. kube-scheduler (pkg/scheduler/framework/runtime/framework.go,
RunFilterPluginsWithNominatedPods and addGENominatedPods, `addGetPodsWithNominatedPods` in older releases) runs a
pod's filters on a node first with every pod nominated there added as if it ran there, when
`corev1.PodPriority(nominated) >= corev1.PodPriority(pod) && nominated.UID != pod.UID`, and again without them; the
node passes only when both passes do. Adding pods can only take room and ports away, so for NodeResourcesFit and
NodePorts the pass with them decides: their requests count as used and their host ports as held. Inter-pod affinity
and topology spread are not counted with nominated pods here (README, filters). Priority is `spec.priority`
(PodPriority: 0 when unset). Nothing here decides a word; rules/checks.py and rules/in_use.py read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analyzer.model.columns import Amounts, NodeColumns
from analyzer.model.placement import NominatedRow

NOMINATED = "nominated here by preemption"



@dataclass(frozen=True, slots=True, kw_only=True)
class NominatedPod:
    namespace: str
    name: str
    node: str
    priority: int
    requests: dict[str, int]
    ports: tuple[tuple[str, int, str], ...]
    phase: str = "Pending"
    nominated: bool = True

    @property
    def pod(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def key(self) -> str:
        """How a list of the pods holding a node's room names it."""
        return f"{NOMINATED}: {self.pod}"


@dataclass(kw_only=True)
class Overlay:
    """What one set of nominated pods adds to the nodes they are nominated to."""

    on: dict[str, list[NominatedPod]]  # node -> the nominated pods that count
    used: dict[str, dict[str, int]]  # node -> bound pods' usage plus theirs (only nodes with one)
    _columns: dict[str, np.ndarray] = field(default_factory=dict)

    def column(self, resource: str, amounts: Amounts, cols: NodeColumns) -> np.ndarray:
        """`amounts.used` with the nominated pods' requests of the resource added (exact: NodeColumns checked
        that the sums fit in int64)."""
        found = self._columns.get(resource)
        if found is None:
            found = amounts.used.copy()
            position = cols.position
            for node, pods in self.on.items():
                i = position.get(node)
                if i is not None:
                    found[i] += sum(p.requests.get(resource, 0) for p in pods) + (len(pods) if resource == "pods" else 0)
            self._columns[resource] = found
        return found


class Nominated:
    """Every nominated pod of the bundle, and the overlays pods of one priority ask for, made once per set."""

    def __init__(self, rows: list[NominatedRow]) -> None:
        self.pods = sorted((NominatedPod(namespace=ns, name=name, node=node, priority=priority, requests=requests,
                                         ports=ports)
                            for ns, name, node, priority, requests, ports in rows), key=lambda p: (p.node, p.pod))
        self._overlays: dict[tuple[str, ...], Overlay] = {}

    def counting(self, priority: int, me: str) -> tuple[str, ...]:
        """The nominated pods that count for a pod of this priority (itself excluded), as a key."""
        return tuple(p.pod for p in self.pods if p.priority >= priority and p.pod != me)

    def overlay(self, keys: tuple[str, ...], usage: dict[str, dict[str, int]]) -> Overlay:
        found = self._overlays.get(keys)
        if found is None:
            wanted = set(keys)
            on: dict[str, list[NominatedPod]] = {}
            for p in self.pods:
                if p.pod in wanted:
                    on.setdefault(p.node, []).append(p)
            used = {}
            for node, pods in on.items():
                total = dict(usage.get(node) or {})
                for p in pods:
                    for r, v in p.requests.items():
                        total[r] = total.get(r, 0) + v
                    total["pods"] = total.get("pods", 0) + 1  # NodeInfo.AddPodInfo counts the pod too
                used[node] = total
            found = self._overlays[keys] = Overlay(on=on, used=used)
        return found

    def totals(self) -> dict[str, dict[str, int]]:
        """node -> what every nominated pod there asks, summed (the most any overlay adds)."""
        out: dict[str, dict[str, int]] = {}
        for p in self.pods:
            total = out.setdefault(p.node, {})
            for r, v in p.requests.items():
                total[r] = total.get(r, 0) + v
            total["pods"] = total.get("pods", 0) + 1
        return out
