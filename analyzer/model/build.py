"""Validated documents -> slim views and indexes, built once per bundle.

Nothing here decides a cause word. It answers: which nodes exist and what they
offer (NodeView), what every non-terminated pod bound to a node uses (the
usage index), which pods are targets, what the scheduler last said about
each, and which RuntimeClasses and ResourceQuotas exist.
"""

from __future__ import annotations

import re
from fractions import Fraction


from analyzer.bundle.catalog import NAMESPACES, PODS, RESOURCEQUOTAS, RUNTIMECLASSES
from analyzer.bundle.validation import Loaded
from analyzer.model import quantity
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.autoscalers import build_autoscalers
from analyzer.model.dra.world import build_dra
from analyzer.model.events import scheduler_events
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
from analyzer.model.views import Cluster, Findings


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


def build_cluster(loaded: Loaded, config: AcceleratorConfig, *, keep: tuple[str, str] | None = None,
                  pods: PodsIndex | None = None) -> Cluster:
    """The views, built once. `keep`: a pod asked about by name that may not be a target.
    `pods`: the index pods.json was streamed into while loading (issue 10; its findings follow the
    nodes' findings, as when pods were read here); without it, a pods Document is read here."""
    findings = Findings()
    nodes, node_invalid = build_nodes(loaded, findings)
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
    rcs = None
    if RUNTIMECLASSES.name in loaded.documents:
        rcs = {item["metadata"]["name"]: item for _, item in loaded.documents[RUNTIMECLASSES.name].valid_items()}
    quotas, quota_problems = _quotas(loaded)
    dra = build_dra(loaded, nodes) if nodes is not None else None
    namespaces = loaded.documents.get(NAMESPACES.name)
    ns_labels = ({item["metadata"]["name"]: item["metadata"].get("labels") or {} for _, item in namespaces.valid_items()}
                 if namespaces is not None else None)
    if dra is not None:
        findings.items.extend(dra.findings)
    queues = build_queues(loaded)
    for file, path, found in queues.findings:
        findings.add(file, [(path, "quantities the queue can use", found)])
    autoscalers = build_autoscalers(loaded)
    findings.items.extend(autoscalers.findings)
    nominated = Nominated(pods.nominated) if pods.nominated else None
    return Cluster(nominated=nominated, dra=dra, queues=queues, node_index=NodeIndex(nodes) if nodes is not None else None,
                   columns=NodeColumns(nodes, pods.usage, nominated.totals() if nominated else None)
                   if nodes is not None else None,
                   claim_events=scheduler_events(loaded, "FailedResourceClaimCreation"),
                   config=config, nodes=nodes, nodes_by_name={n.name: n for n in nodes or ()}, usage=pods.usage,
                   pods_on=pods.pods_on, unknown_usage=pods.unknown, pod_targets=pods.targets,
                   pod_keys=frozenset(pods.keys), runtimeclasses=rcs, quotas=quotas,
                   scheduler_events=scheduler_events(loaded), server_minor=_server_minor(loaded),
                   missing=dict(loaded.missing), findings=findings, quota_problems=quota_problems,
                   node_problems=node_problems(loaded, node_invalid), asked=pods.asked, storage=build_storage(loaded),
                   placement=Placement.build(pods.label_sets.sets, pods.placed, ns_labels), autoscalers=autoscalers,
                   node_start=read_node_start(loaded), newest_pod=pods.newest)


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
