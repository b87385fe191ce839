"""Validated documents -> slim views and indexes, built once per bundle.

Nothing here decides a cause word. It answers: which nodes exist and what they
offer (NodeView), what every non-terminated pod bound to a node uses (the
usage index), which pods are targets, what the scheduler last said about
each, and which RuntimeClasses and ResourceQuotas exist.
"""

from __future__ import annotations

import re
from fractions import Fraction

from analyzer.bundle.validation import Document, Loaded, Violation
from analyzer.model import quantity
from analyzer.model.accelerators import AcceleratorConfig, is_extended
from analyzer.model.events import scheduler_events
from analyzer.model.matching import taints_of
from analyzer.model.podspec import effective_requests
from analyzer.model.quantity import QuantityError
from analyzer.model.views import TERMINATED, Cluster, Findings, InvalidNode, NodeView
from analyzer.targets.target import Target


def _units(resources: dict | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in (resources or {}).items():
        out[name] = quantity.scheduler_units(name, value)
    return out


def _extended_integer_problems(spec: dict, base: str) -> list[tuple[str, str, str]]:
    """Extended resources must be whole numbers (API validation); a hostile bundle may say 0.5."""
    found = []
    for section in ("initContainers", "containers"):
        for ci, c in enumerate(spec.get(section) or ()):
            res = c.get("resources") or {}
            for kind in ("requests", "limits"):
                for name, value in (res.get(kind) or {}).items():
                    if is_extended(name):
                        try:
                            q = quantity.parse(value)
                        except QuantityError:
                            continue
                        if q.denominator != 1:
                            found.append((f"{base}.spec.{section}[{ci}].resources.{kind}[\"{name}\"]",
                                          f"a whole number for extended resource {name}", repr(value)))
    return found


def build_nodes(loaded: Loaded, findings: Findings) -> tuple[list[NodeView] | None, dict[int, list[Violation]]]:
    """NodeViews, and every node left out (schema findings merged with the model's own), by index."""
    doc = loaded.documents.get("nodes")
    if doc is None:
        return None, {}
    invalid = dict(doc.invalid)
    nodes: list[NodeView] = []
    seen: dict[str, dict] = {}
    for i, item in doc.valid_items():
        meta = item["metadata"]
        name = meta["name"]
        path = doc.item_path(i)
        if name in seen:
            found = findings.add(doc.file, [(f"{path}.metadata.name", "each node once", f"a second node named {name!r}")])
            if item != seen[name]:
                invalid[i] = found  # a different second copy: the funnel cannot know which one is true
            continue
        seen[name] = item
        spec = item.get("spec") or {}
        status = item.get("status") or {}
        try:
            node = NodeView(name, i, meta.get("labels") or {}, bool(spec.get("unschedulable")), taints_of(item),
                            _units(status.get("capacity")), _units(status.get("allocatable")))
        except QuantityError as exc:
            invalid[i] = findings.add(doc.file, [(f"{path}.status", "quantities the scheduler can use", str(exc))])
            continue
        nodes.append(node)
    return nodes, invalid


def _server_minor(loaded: Loaded) -> int | None:
    text = None
    if loaded.version:
        text = (loaded.version.get("serverVersion") or {}).get("gitVersion")
    if not text and loaded.bundle.manifest:
        kubectl = loaded.bundle.manifest.get("kubectl")
        text = kubectl.get("serverVersion") if isinstance(kubectl, dict) else None
    m = re.match(r"v?1\.(\d+)", str(text or ""))
    return int(m.group(1)) if m else None


def build_cluster(loaded: Loaded, config: AcceleratorConfig) -> Cluster:
    findings = Findings()
    nodes, node_invalid = build_nodes(loaded, findings)
    pod_invalid: dict[int, list[Violation]] = {}
    usage: dict[str, dict[str, int]] = {}
    pods_on: dict[str, list[tuple[int, dict[str, int]]]] = {}
    unknown: dict[str, str] = {}
    targets: list[Target] = []
    doc = loaded.documents.get("pods")
    if doc is not None:
        seen: set[tuple[str, str]] = set()
        seen_uids: set[str] = set()
        items = doc.items
        invalid = pod_invalid = dict(doc.invalid)
        for i in range(len(items)):
            item = items[i]
            if i in invalid:
                _invalid_pod(doc, i, item, invalid[i], unknown, targets)
                continue
            meta = item["metadata"]
            spec = item["spec"]
            status = item.get("status") or {}
            ns, name = meta["namespace"], meta["name"]
            uid = meta.get("uid")
            if (ns, name) in seen or (uid and uid in seen_uids):
                by_name = (ns, name) in seen
                what = f"a second pod {ns}/{name}" if by_name else f"a second pod with uid {uid}"
                where = f"{doc.item_path(i)}.metadata.{'name' if by_name else 'uid'}"
                invalid[i] = findings.add(doc.file, [(where, "each pod once", what)])
                continue
            seen.add((ns, name))
            if uid:
                seen_uids.add(uid)
            phase = status.get("phase")
            node = spec.get("nodeName") or ""
            bad = None
            counts = node and phase not in TERMINATED
            is_target = phase == "Pending" or not node
            try:
                # Targets are parsed now too, so an unusable quantity marks the pod, not the whole run.
                requests = effective_requests(spec) if counts or is_target else None
                if not counts:
                    requests = None
            except QuantityError as exc:
                # The slow, precise path only for the bad pod: name the container and the field.
                bad = _extended_integer_problems(spec, doc.item_path(i)) or [
                    (f"{doc.item_path(i)}.spec", "quantities the scheduler can use", str(exc))]
                requests = None
            if bad:
                invalid[i] = findings.add(doc.file, bad)
                _invalid_pod(doc, i, item, invalid[i], unknown, targets)
                continue
            if requests is not None:
                used = usage.get(node)
                if used is None:
                    used = usage[node] = {}
                    pods_on[node] = []
                for k, v in requests.items():
                    used[k] = used.get(k, 0) + v
                used["pods"] = used.get("pods", 0) + 1
                pods_on[node].append((i, requests))
            if phase == "Pending" or not node:
                targets.append(Target("Pod", ns, name, spec, True, f"pods.json {doc.item_path(i)}", phase, node, status,
                                      str(meta.get("uid") or "")))
    rcs = None
    if "runtimeclasses" in loaded.documents:
        rcs = {item["metadata"]["name"]: item for _, item in loaded.documents["runtimeclasses"].valid_items()}
    quotas = None
    quota_problems: dict[str, str] = {}
    if "resourcequotas" in loaded.documents:
        quotas = {}
        qdoc = loaded.documents["resourcequotas"]
        for i, item in enumerate(qdoc.items):
            if i in qdoc.invalid:
                # An invalid quota cannot be left out silently: its namespace's quota rule becomes unknown.
                ns = (item.get("metadata") or {}).get("namespace") if isinstance(item, dict) and isinstance(item.get("metadata"), dict) else None
                first = str(qdoc.invalid[i][0]) if qdoc.invalid[i] else f"{qdoc.file}: {qdoc.item_path(i)}: invalid"
                quota_problems[ns if isinstance(ns, str) else "*"] = first
                continue
            quotas.setdefault(item["metadata"]["namespace"], []).append(item)
    node_problems: list[InvalidNode] = []
    if "nodes" in loaded.documents:
        ndoc = loaded.documents["nodes"]
        for i, found in sorted(node_invalid.items()):
            item = ndoc.items[i]
            meta = item.get("metadata") if isinstance(item, dict) else None
            name = meta.get("name") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None
            labels = meta.get("labels", {}) if isinstance(meta, dict) else None
            if not (isinstance(labels, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())):
                labels = None
            node_problems.append(InvalidNode(name, labels, str(found[0]) if found else f"{ndoc.file}: {ndoc.item_path(i)}: invalid"))
    return Cluster(loaded, config, nodes, {n.name: n for n in nodes or ()}, usage, pods_on, unknown, targets, rcs, quotas,
                   scheduler_events(loaded), _server_minor(loaded), findings, quota_problems, node_problems, pod_invalid)


def _invalid_pod(doc: Document, i: int, item: object, violations: list[Violation], unknown: dict[str, str],
                 targets: list[Target]) -> None:
    """An invalid pod: its node's usage becomes unknown, and it is answered insufficient-evidence if it is a target."""
    if not isinstance(item, dict):
        return
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    spec = item.get("spec") if isinstance(item.get("spec"), dict) else {}
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else ""
    phase = status.get("phase") if isinstance(status.get("phase"), str) else None
    first = str(violations[0]) if violations else f"{doc.file}: {doc.item_path(i)}: invalid"
    if node and phase not in TERMINATED:
        unknown.setdefault(node, first)
    ns, name = meta.get("namespace"), meta.get("name")
    if isinstance(ns, str) and isinstance(name, str) and ns and name and (phase == "Pending" or not node):
        targets.append(Target("Pod", ns, name, None, True, f"pods.json {doc.item_path(i)}", phase, node, {},
                              invalid=list(violations)))


def exact_hard(quota: dict) -> dict[str, Fraction]:
    hard = (quota.get("spec") or {}).get("hard") or (quota.get("status") or {}).get("hard") or {}
    out = {}
    for k, v in hard.items():
        try:
            out[k] = quantity.parse(v)
        except QuantityError as exc:
            name = (quota.get("metadata") or {}).get("name", "?")
            raise QuantityError(f"resourcequotas.json: quota {name} spec.hard[{k!r}]: {exc}") from None
    return out
