"""nodes.json -> NodeViews: every node the funnel, occupancy and diff read, built once; the nodes left out are
findings (file and JSON path), and what is known of each (its name, its labels) so no answer guesses about it."""

from __future__ import annotations

from analyzer.bundle.catalog import NODES
from analyzer.bundle.validation import Loaded, Violation
from analyzer.model import quantity
from analyzer.model.matching import taints_of
from analyzer.model.node_conditions import adverse_conditions
from analyzer.model.nodes import InvalidNode, NodeView, ready_of
from analyzer.model.quantity import QuantityError
from analyzer.model.views import Findings


def _units(resources: dict | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in (resources or {}).items():
        out[name] = quantity.scheduler_units(name, value)
    return out


def build_nodes(loaded: Loaded, findings: Findings) -> tuple[list[NodeView] | None, dict[int, list[Violation]]]:
    """NodeViews, and every node left out (schema findings merged with the model's own), by index."""
    doc = loaded.documents.get(NODES.name)
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
            node = NodeView(name=name, index=i, labels=meta.get("labels") or {}, unschedulable=bool(spec.get("unschedulable")),
                            taints=taints_of(item), capacity=_units(status.get("capacity")),
                            allocatable=_units(status.get("allocatable")), ready=ready_of(status),
                            conditions=adverse_conditions(status))
        except QuantityError as exc:
            invalid[i] = findings.add(doc.file, [(f"{path}.status", "quantities the scheduler can use", str(exc))])
            continue
        nodes.append(node)
    return nodes, invalid


def node_problems(loaded: Loaded, node_invalid: dict[int, list[Violation]]) -> list[InvalidNode]:
    ndoc = loaded.documents.get(NODES.name)
    out: list[InvalidNode] = []
    if ndoc is None:
        return out
    for i, found in sorted(node_invalid.items()):
        item = ndoc.items[i]
        meta = item.get("metadata") if isinstance(item, dict) else None
        name = meta.get("name") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None
        labels = meta.get("labels", {}) if isinstance(meta, dict) else None
        if not (isinstance(labels, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())):
            labels = None
        out.append(InvalidNode(name=name, labels=labels,
                               finding=str(found[0]) if found else f"{ndoc.file}: {ndoc.item_path(i)}: invalid"))
    return out
