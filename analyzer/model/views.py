"""The slim views the rules read, built once per bundle and not changed afterwards.

Nothing here decides a cause word. NodeView: what a node offers; Cluster: the
views and indexes (usage per node, scheduler messages, quotas, RuntimeClasses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from analyzer.bundle.engines import Violation, violations

# Types of the Cluster's fields, for annotations only: the reader's PodsIndex imports this module for BoundPod and
# Findings and needs none of them, and the DRA model is imported only for a bundle that has DRA objects.
if TYPE_CHECKING:
    from analyzer.model.admission_world import AdmissionWorld
    from analyzer.model.accelerators import AcceleratorConfig
    from analyzer.model.events import SchedulerSaid
    from analyzer.model.nodes import InvalidNode, NodeView
    from analyzer.model.target import Target
    from analyzer.model.autoscalers import Autoscalers
    from analyzer.model.dra.world import Dra
    from analyzer.model.node_start import NodeStart
    from analyzer.model.columns import NodeColumns
    from analyzer.model.node_index import NodeIndex
    from analyzer.model.nominated import Nominated
    from analyzer.model.queue_world import QueueWorld
    from analyzer.model.placement import Placement
    from analyzer.model.schedulers import Reservation, SchedulerIndex, Says
    from analyzer.model.vgpu import VgpuWorld
    from analyzer.model.volumes import Storage



class BoundPod(NamedTuple):
    """A non-terminated pod bound to a node: what it holds there (effective requests, scheduler units). A named
    tuple, not a frozen dataclass: one is made per bound pod (150,000 on a large bundle), and a tuple is made
    five times faster."""

    namespace: str
    name: str
    phase: str | None
    requests: dict[str, int]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Findings:
    """What the model finds beyond the schemas (duplicates, unusable quantities, attempts that hold no
    valid pod). Kept here, beside the views, not written back into the validation result: data flows one way."""

    def __init__(self) -> None:
        self.items: list[Violation] = []

    def add(self, file: str, triples: list[tuple[str, str, str]]) -> list[Violation]:
        out = violations(file, triples)
        self.items.extend(out)
        return out


@dataclass(kw_only=True)
class Cluster:
    """The views and indexes every rule reads, built once per bundle (model/build.py) and not changed after."""

    config: AcceleratorConfig
    nodes: list[NodeView] | None  # None: nodes.json missing or unreadable (`missing` says which)
    nodes_by_name: dict[str, NodeView]
    usage: dict[str, dict[str, int]]  # node -> resource -> units held by non-terminated pods bound there
    pods_on: dict[str, list[BoundPod]]
    unknown_usage: dict[str, Violation]  # node -> the finding of an invalid pod bound there
    pod_targets: list[Target]
    pod_keys: frozenset[str]  # namespace/name of every valid pod (an attempt naming one is not a new pod)
    runtimeclasses: dict[str, dict] | None  # name -> RuntimeClass object; None when not in the bundle
    quotas: dict[str, list[dict]] | None  # namespace -> quota objects; None when not in the bundle
    scheduler_events: dict[tuple[str, str], SchedulerSaid]
    server_minor: int | None
    missing: dict[str, str]  # kind -> why its file is not usable
    findings: Findings = field(default_factory=Findings)
    quota_problems: dict[str, str] = field(default_factory=dict)  # namespace ("*": unknown) -> an invalid quota's finding
    node_problems: list[InvalidNode] = field(default_factory=list)  # nodes left out of the funnel
    asked: Target | None = None  # `why NS/NAME` of a pod that is not a target: kept whole, the only one
    node_index: "NodeIndex | None" = None  # nodes by name and label for the selector stage (None without nodes)
    dra: "Dra | None" = None  # Dynamic Resource Allocation: devices, claims, classes (None without nodes.json)
    claim_events: dict[tuple[str, str], SchedulerSaid] = field(default_factory=dict)  # FailedResourceClaimCreation
    queues: "QueueWorld | None" = None  # Kueue and Volcano (queues.md)
    storage: "Storage | None" = None  # claims, volumes, classes, CSI limits (model/volumes.py)
    placement: "Placement | None" = None  # the bound pods as the inter-pod, spread and port filters count them
    autoscalers: "Autoscalers | None" = None  # cluster-autoscaler's and Karpenter's events and objects
    node_start: "NodeStart | None" = None  # the kubelet's and attach/detach controller's pod events, node readiness
    newest_pod: dict[str, tuple[str, str, str, str]] = field(default_factory=dict)  # controller uid -> (created, name, phase, node)
    columns: "NodeColumns | None" = None  # node state as arrays over nodes (None without nodes)
    nominated: "Nominated | None" = None  # pending pods nominated to a node by preemption (None: there are none)
    # Running pods that say they run a scheduler (model/schedulers.py): namespace/name -> what they say
    schedulers: dict[str, "Says"] = field(default_factory=dict)
    scheduler_index: "SchedulerIndex | None" = None  # the same, by the names they say
    reservations: dict[str, "Reservation"] = field(default_factory=dict)  # KAI's, by GPU group (model/schedulers.py)
    vgpu: "VgpuWorld | None" = None  # HAMi's and Volcano's vGPU accounting (model/vgpu.py; None: neither is used)
    now: tuple[str, str] | None = None  # the bundle's time and its source (model/events.bundle_time)
    admission: "AdmissionWorld | None" = None  # LimitRanges, webhooks and policies (model/admission_world.py)

    @property
    def new_taint_wording(self) -> bool:
        """The scheduler's taint reason lost its `{key: value}` in v1.34 (kubernetes#134740)."""
        return self.server_minor is None or self.server_minor >= 34

    def why_missing(self, kind: str) -> str:
        return self.missing.get(kind, f"{kind}.json is not in the bundle")
