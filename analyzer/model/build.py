"""Validated documents -> slim views and indexes, built once per bundle.

Nothing here decides a cause word. It answers: which nodes exist and what they
offer (NodeView), what every non-terminated pod bound to a node uses (the
usage index), which pods are targets, what the scheduler last said about
each, and which RuntimeClasses and ResourceQuotas exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING


from analyzer.bundle.catalog import NAMESPACES, NODES, PODS, RESOURCEQUOTAS, RUNTIMECLASSES
from analyzer.bundle.engines import Violation
from analyzer.bundle.validation import Loaded
from analyzer.model import quantity
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.admission_world import AdmissionWorld, build_admission
from analyzer.model.autoscalers import build_autoscalers
from analyzer.model.dra.world import build_dra
from analyzer.model.events import HAMI_FILTER_EVENT, bundle_time, scheduler_events
from analyzer.model.columns import NodeColumns
from analyzer.model.node_index import NodeIndex
from analyzer.model.nominated import Nominated
from analyzer.model.placement import Placement
from analyzer.model.pods_index import PodsIndex
from analyzer.model.volumes import build_storage
from analyzer.model.node_start import read_node_start
from analyzer.model.quantity import QuantityError
from analyzer.model.build_nodes import build_nodes, node_problems
from analyzer.model.queue_world import build_queues
from analyzer.model.schedulers import SchedulerIndex
from analyzer.model.views import Cluster, Findings
from analyzer.model.vgpu import NODE_ANNOTATIONS, VgpuWorld, build_vgpu

if TYPE_CHECKING:
    from analyzer.model.autoscalers import Autoscalers
    from analyzer.model.dra.world import Dra
    from analyzer.model.node_start import NodeStart
    from analyzer.model.nodes import NodeView
    from analyzer.model.queue_world import QueueWorld
    from analyzer.model.volumes import Storage


def _server_minor(loaded: Loaded) -> int | None:
    text = None
    if loaded.version:
        text = (loaded.version.get("serverVersion") or {}).get("gitVersion")
    if not text and loaded.bundle.manifest:
        kubectl = loaded.bundle.manifest.get("kubectl")
        text = kubectl.get("serverVersion") if isinstance(kubectl, dict) else None
    m = re.match(r"v?1\.(\d+)", str(text or ""))
    return int(m.group(1)) if m else None


def _quotas(loaded: Loaded) -> tuple[dict[str, list[dict]] | None, dict[str, str]]:
    if RESOURCEQUOTAS.name not in loaded.documents:
        return None, {}
    quotas: dict[str, list[dict]] = {}
    problems: dict[str, str] = {}
    qdoc = loaded.documents[RESOURCEQUOTAS.name]
    for i, item in enumerate(qdoc.items):
        if i in qdoc.invalid:
            # An invalid quota cannot be left out silently: its namespace's quota rule becomes unknown.
            meta = item.get("metadata") if isinstance(item, dict) else None
            ns = meta.get("namespace") if isinstance(meta, dict) else None
            first = str(qdoc.invalid[i][0]) if qdoc.invalid[i] else f"{qdoc.file}: {qdoc.item_path(i)}: invalid"
            problems[ns if isinstance(ns, str) else "*"] = first
            continue
        quotas.setdefault(item["metadata"]["namespace"], []).append(item)
    return quotas, problems


@dataclass(kw_only=True)
class Prepared:
    """What the model makes of every file but pods.json, at the start of build_cluster. Its findings are kept
    apart, so the cluster's findings keep their order: nodes', pods', DRA's, queues', autoscalers'."""

    nodes: list[NodeView] | None
    node_findings: Findings
    node_invalid: dict[int, list[Violation]]
    rcs: dict[str, dict] | None
    quotas: dict[str, list[dict]] | None
    quota_problems: dict[str, str]
    dra: Dra | None
    ns_labels: dict[str, dict[str, str]] | None
    queues: QueueWorld
    autoscalers: Autoscalers
    node_index: NodeIndex | None
    claim_events: dict
    scheduler_events: dict
    node_start: NodeStart
    storage: Storage
    admission: AdmissionWorld


def prepare(loaded: Loaded) -> Prepared:
    node_findings = Findings()
    nodes, node_invalid = build_nodes(loaded, node_findings)
    rcs = None
    if RUNTIMECLASSES.name in loaded.documents:
        rcs = {item["metadata"]["name"]: item for _, item in loaded.documents[RUNTIMECLASSES.name].valid_items()}
    quotas, quota_problems = _quotas(loaded)
    namespaces = loaded.documents.get(NAMESPACES.name)
    ns_labels = ({item["metadata"]["name"]: item["metadata"].get("labels") or {} for _, item in namespaces.valid_items()}
                 if namespaces is not None else None)
    return Prepared(nodes=nodes, node_findings=node_findings, node_invalid=node_invalid, rcs=rcs, quotas=quotas,
                    quota_problems=quota_problems, dra=build_dra(loaded, nodes) if nodes is not None else None,
                    ns_labels=ns_labels, queues=build_queues(loaded), autoscalers=build_autoscalers(loaded),
                    node_index=NodeIndex(nodes) if nodes is not None else None,
                    claim_events=scheduler_events(loaded, "FailedResourceClaimCreation"),
                    scheduler_events=scheduler_events(loaded), node_start=read_node_start(loaded),
                    storage=build_storage(loaded), admission=build_admission(loaded, ns_labels))


def build_cluster(loaded: Loaded, config: AcceleratorConfig, *, keep: tuple[str, str] | None = None,
                  pods: PodsIndex | None = None) -> Cluster:
    """The views, built once. `keep`: a pod asked about by name that may not be a target.
    `pods`: the index pods.json was streamed into while loading (its findings follow the nodes' findings, as
    when pods were read here); without it, a pods Document is read here."""
    p = prepare(loaded)
    findings = Findings()
    findings.items.extend(p.node_findings.items)
    nodes = p.nodes
    if pods is not None:
        findings.items.extend(pods.findings.items)
        pods.findings = findings
    else:
        doc = loaded.documents.get(PODS.name)
        pods = PodsIndex(file=doc.file if doc else PODS.file, findings=findings, keep=keep)
        if doc is not None:
            for i, item in enumerate(doc.items):
                path = doc.item_path(i)
                if i in doc.invalid:
                    pods.add_invalid(path, item, doc.invalid[i])
                else:
                    pods.add(path, item)
    if p.dra is not None:
        findings.items.extend(p.dra.findings)
    for file, path, found in p.queues.findings:
        findings.add(file, [(path, "quantities the queue can use", found)])
    findings.items.extend(p.autoscalers.findings)
    findings.items.extend(p.admission.findings)
    nominated = Nominated(pods.nominated) if pods.nominated else None
    now = bundle_time(loaded)
    vgpu = _vgpu(loaded, nodes, pods, now[0] if now is not None else None)
    if vgpu is not None:
        for file, path, expected, found in vgpu.findings:
            findings.add(file, [(path, expected, found)])
    return Cluster(nominated=nominated, dra=p.dra, queues=p.queues, node_index=p.node_index,
                   columns=NodeColumns(nodes, pods.usage, nominated.totals() if nominated else None)
                   if nodes is not None else None,
                   claim_events=p.claim_events,
                   config=config, nodes=nodes, nodes_by_name={n.name: n for n in nodes or ()}, usage=pods.usage,
                   pods_on=pods.pods_on, unknown_usage=pods.unknown, pod_targets=pods.targets,
                   pod_keys=frozenset(pods.keys), runtimeclasses=p.rcs, quotas=p.quotas,
                   scheduler_events=p.scheduler_events, server_minor=_server_minor(loaded),
                   missing=dict(loaded.missing), findings=findings, quota_problems=p.quota_problems,
                   node_problems=node_problems(loaded, p.node_invalid), asked=pods.asked, storage=p.storage,
                   placement=Placement.build(pods.label_sets.sets, pods.placed, p.ns_labels), autoscalers=p.autoscalers,
                   node_start=p.node_start, newest_pod=pods.newest,
                   schedulers=pods.schedulers, scheduler_index=SchedulerIndex.of(pods.schedulers), now=now, vgpu=vgpu,
                   reservations=pods.reservations, admission=p.admission)


def _vgpu(loaded: Loaded, nodes: list[NodeView] | None, pods: PodsIndex, now: str | None) -> VgpuWorld | None:
    """HAMi's and Volcano's accounting: each node's annotations read once (only nodes that carry one)."""
    doc = loaded.documents.get(NODES.name)
    if doc is None or nodes is None:
        return None
    allocatable = {n.name: n.allocatable for n in nodes}
    marked = []
    for _, item in doc.valid_items():
        annotations = item["metadata"].get("annotations")
        name = item["metadata"]["name"]
        if annotations and name in allocatable and any(k in annotations for k in NODE_ANNOTATIONS):
            marked.append((name, annotations, allocatable[name]))
    if not marked and not pods.vgpu_allocations:
        return None
    images = [i for flagged, names, imgs in pods.schedulers.values() if "hami-scheduler" in flagged + names for i in imgs]
    world = build_vgpu(marked, pods.vgpu_allocations, now, [i for i in images if "hami" in i])
    if world is not None:
        world.said = scheduler_events(loaded, HAMI_FILTER_EVENT)  # HAMi's own per-node reasons (pkg/scheduler/event.go)
    return world


def exact_hard(quota: dict) -> dict[str, Fraction]:
    hard = (quota.get("spec") or {}).get("hard") or (quota.get("status") or {}).get("hard") or {}
    out = {}
    for k, v in hard.items():
        try:
            out[k] = quantity.parse(v)
        except QuantityError as exc:
            name = (quota.get("metadata") or {}).get("name", "?")
            raise QuantityError(f"{RESOURCEQUOTAS.file}: quota {name} spec.hard[{k!r}]: {exc}", file=RESOURCEQUOTAS.file) from None
    return out
