"""kubectl JSON -> the occupancy records, and a bundle -> Occupancy. The only place raw JSON is read.

Bad input is normal input: an item that cannot be read is left out with a problem line naming the
file and JSON path (a bound pod left out makes its node's usage unknown); nothing raises for one item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import orjson

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.bundle.reading import gc_paused, open_bundle
from analyzer.errors import BundleError
from analyzer.occupancy.compute import compute
from analyzer.occupancy.records import NodeFacts, Occupancy, PodUse, Taint
from analyzer.model.matching import tolerations_of
from analyzer.model.podspec import effective_requests
from analyzer.model.quantity import QuantityError, scheduler_units


def _str_map(value: object) -> dict[str, str] | None:
    if value is None:
        return {}
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return value
    return None


def _units(value: object, where: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object of quantities")
    out: dict[str, int] = {}
    for name, amount in value.items():
        try:
            out[str(name)] = scheduler_units(str(name), amount)
        except QuantityError as exc:
            raise ValueError(f"{where}[{name!r}]: {exc}") from None
    return out


def _ready(status: dict) -> bool | None:
    for c in status.get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"  # "False" and "Unknown" (node lost) are both not ready
    return None


def node_facts(item: object, where: str) -> NodeFacts:
    """One kubectl Node -> NodeFacts. Raises ValueError naming the JSON path."""
    if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
        raise ValueError(f"{where}: not a Node object")
    meta = item["metadata"]
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.metadata.name: missing")
    labels = _str_map(meta.get("labels"))
    if labels is None:
        raise ValueError(f"{where}.metadata.labels: expected an object of strings")
    spec = item.get("spec") if isinstance(item.get("spec"), dict) else {}
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    taints = []
    for i, t in enumerate(spec.get("taints") or ()):
        if not isinstance(t, dict) or not isinstance(t.get("key"), str) or not isinstance(t.get("effect"), str):
            raise ValueError(f"{where}.spec.taints[{i}]: expected key and effect")
        taints.append(Taint(key=t["key"], value=str(t.get("value") or ""), effect=t["effect"]))
    return NodeFacts(name=name, labels=labels, capacity=_units(status.get("capacity"), f"{where}.status.capacity"),
                     allocatable=_units(status.get("allocatable"), f"{where}.status.allocatable"),
                     taints=tuple(taints), unschedulable=spec.get("unschedulable") is True, ready=_ready(status))


def pod_use(item: object, where: str) -> PodUse:
    """One kubectl Pod -> PodUse (effective requests). Raises ValueError naming the JSON path; a pod whose
    name is readable but whose requests are not comes back with readable=False."""
    if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict) or not isinstance(item.get("spec"), dict):
        raise ValueError(f"{where}: not a Pod object")
    meta, spec = item["metadata"], item["spec"]
    ns, name = meta.get("namespace"), meta.get("name")
    if not isinstance(ns, str) or not isinstance(name, str) or not ns or not name:
        raise ValueError(f"{where}.metadata: namespace and name required")
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else ""
    phase = status.get("phase") if isinstance(status.get("phase"), str) else None
    selector = _str_map(spec.get("nodeSelector")) or {}
    tolerations = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
    return PodUse(namespace=ns, name=name, node=node, phase=phase, requests=effective_requests(spec),
                  node_selector=selector,
                  tolerations=tolerations_of({"tolerations": [t for t in tolerations if isinstance(t, dict)]}))


def from_items(nodes: Iterable[object], pods: Iterable[object], config: AcceleratorConfig | None = None, *,
               nodes_file: str = "nodes.json", pods_file: str = "pods.json") -> Occupancy:
    """The occupancy picture from kubectl List items. Unreadable items become `problems`."""
    problems: list[str] = []
    facts: list[NodeFacts] = []
    seen: set[str] = set()
    for i, item in enumerate(nodes):
        where = f"$.items[{i}]"
        try:
            f = node_facts(item, where)
        except ValueError as exc:
            problems.append(f"{nodes_file}: {exc} (node left out)")
            continue
        if f.name in seen:
            problems.append(f"{nodes_file}: {where}.metadata.name: a second node named {f.name!r} (left out)")
            continue
        seen.add(f.name)
        facts.append(f)
    uses: list[PodUse] = []
    for i, item in enumerate(pods):
        where = f"$.items[{i}]"
        try:
            uses.append(pod_use(item, where))
        except (ValueError, QuantityError, TypeError, AttributeError) as exc:
            problems.append(f"{pods_file}: {where}.spec: {exc} (its requests are not counted)")
            partial = _readable_identity(item)
            if partial is not None:
                uses.append(partial)
    return compute(facts, uses, config, problems=problems)


def _readable_identity(item: object) -> PodUse | None:
    """What is known of a pod whose requests cannot be read: enough to mark its node's usage unknown."""
    if not isinstance(item, dict):
        return None
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    spec = item.get("spec") if isinstance(item.get("spec"), dict) else {}
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    node = spec.get("nodeName")
    if not isinstance(node, str) or not node:
        return None
    phase = status.get("phase") if isinstance(status.get("phase"), str) else None
    return PodUse(namespace=str(meta.get("namespace") or "?"), name=str(meta.get("name") or "?"), node=node,
                  phase=phase, readable=False)




def read_items(bundle_root_reader, file: str) -> list:  # type: ignore[no-untyped-def]
    """A kubectl List's items from one bundle file; BundleError (exit 2) naming the file and JSON path."""
    data = bundle_root_reader(file)
    if data.startswith(b"\xef\xbb\xbf"):
        raise BundleError(file, "not JSON: starts with a UTF-8 byte-order mark (BOM)", "$")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BundleError(file, f"not JSON: {exc}", "$") from None
    except RecursionError:
        raise BundleError(file, "not JSON: nested too deeply", "$") from None
    if not isinstance(doc, dict):
        raise BundleError(file, "expected a kubectl List object", "$")
    items = doc.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise BundleError(file, "expected an array", "$.items")
    return items


def load(path: str | Path, config: AcceleratorConfig | None = None) -> Occupancy:
    """Open a bundle (directory or .tar.gz) and compute its occupancy. Raises BundleError when nodes.json
    or pods.json is missing or unreadable as a whole."""
    with open_bundle(path) as bundle, gc_paused():
        for kind in ("nodes", "pods"):
            if not bundle.has(f"{kind}.json"):
                why = bundle.failed.get(kind)
                raise BundleError(f"{kind}.json", "not collected" + (f" ({why})" if why else "") +
                                  "; the occupancy picture needs nodes.json and pods.json")
        nodes = read_items(bundle.read_bytes, "nodes.json")
        pods = read_items(bundle.read_bytes, "pods.json")
        return from_items(nodes, pods, config)
