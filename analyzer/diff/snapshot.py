"""One bundle -> a Snapshot (plain records): what was collected, words, pods, GPU nodes, pools, quotas.

The bundle is read once, by the pipeline `analyze` uses (words.cause_words), and the occupancy picture
comes from that analysis; raw JSON stops here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.model.accelerators import AcceleratorConfig
from analyzer.bundle.reading import Bundle
from analyzer.diff.records import NodeGpu, PodState, Snapshot
from analyzer.diff.words import cause_words
from analyzer.errors import BundleError
from analyzer.occupancy.adapter import read_items
from analyzer.model.quantity import QuantityError, format_exact, parse
from analyzer.occupancy.records import USAGE_UNKNOWN

if TYPE_CHECKING:
    from analyzer.pipeline import Analysis

# A node label about its accelerators, beyond those that mention one by name.
EXTRA_GPU_LABELS = ("cloud.google.com/gke-accelerator",)


COLLECTED = "collected"
_COMPARED = ("pods.json", "nodes.json", "resourcequotas.json")


def _files(bundle: Bundle) -> dict[str, str]:
    """What was collected: file -> "collected", "failed" (the manifest says so, with kubectl's error)
    or "missing" (the manifest lists it, the bundle lacks it). Without a manifest, the files present."""
    if bundle.manifest and isinstance(bundle.manifest.get("files"), list):
        out = {}
        for e in bundle.manifest["files"]:
            if isinstance(e, dict) and isinstance(e.get("path"), str):
                status = str(e.get("status") or "ok")
                if status == "ok":
                    # A file the manifest lists as collected but that is gone is not collected evidence.
                    status = COLLECTED if bundle.has(e["path"]) else "missing"
                out[e["path"]] = status
        for rel in bundle.attempts():
            out.setdefault(rel, COLLECTED if bundle.has(rel) else "missing")
        return out
    out = {p.name: COLLECTED for p in sorted(bundle.root.glob("*.json")) if p.name != "manifest.json"}
    for rel in bundle.attempts():
        out[rel] = COLLECTED
    return out


def _canonical(value: object) -> str | None:
    if value is None:
        return None
    try:
        return format_exact(parse(value))  # "1" and "1000m" are the same hard limit
    except QuantityError:
        return str(value)


def _quotas(bundle: Bundle, problems: list[str]) -> dict[tuple[str, str, str], tuple[str | None, str | None]] | None:
    if not bundle.has("resourcequotas.json"):
        return None
    out: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
    for i, q in enumerate(read_items(bundle.read_bytes, "resourcequotas.json")):
        meta = q.get("metadata") if isinstance(q, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("namespace"), str) or not isinstance(meta.get("name"), str):
            problems.append(f"resourcequotas.json: $.items[{i}].metadata: namespace and name required (quota left out)")
            continue
        spec = q.get("spec") if isinstance(q.get("spec"), dict) else {}
        status = q.get("status") if isinstance(q.get("status"), dict) else {}
        hard = spec.get("hard") if isinstance(spec.get("hard"), dict) else (status.get("hard") if isinstance(status.get("hard"), dict) else {})
        used = status.get("used") if isinstance(status.get("used"), dict) else {}
        for key in set(hard) | set(used):
            out[(meta["namespace"], meta["name"], str(key))] = (_canonical(hard.get(key)), _canonical(used.get(key)))
    return out


_ITEM = re.compile(r"^\$\.items\[(\d+)\]")
_ITEM_LINE = re.compile(r"^([^:]+\.json): \$\.items\[(\d+)\]")


def _problems(analysis: "Analysis", own: list[str]) -> list[str]:
    """The items the comparison leaves out, one line per item: unreadable files, then the pods, nodes and quotas
    `analyze` could not use (its first finding on the item, word for word, and how many more), then what only
    diff reads (`own`) about items analyze did not already name. A manifest's size or checksum finding leaves
    nothing out: `validate` reports it, not diff."""
    out = [str(e) for e in analysis.loaded.unreadable]
    by_item: dict[tuple[str, str], list[str]] = {}
    for v in analysis.loaded.violations + analysis.findings:
        if v.file not in _COMPARED:
            continue
        m = _ITEM.match(v.path)
        by_item.setdefault((v.file, m.group(1) if m else v.path), []).append(str(v))
    for found in by_item.values():
        out.append(found[0] + (f" (and {len(found) - 1} more finding(s) on the same item)" if len(found) > 1 else ""))
    for line in own:
        m = _ITEM_LINE.match(line)
        if m is None or (m.group(1), m.group(2)) not in by_item:
            out.append(line)
    return list(dict.fromkeys(out))


def _pods(items: list) -> dict[str, PodState]:
    out = {}
    for p in items:
        if not isinstance(p, dict):
            continue
        meta = p.get("metadata") if isinstance(p.get("metadata"), dict) else {}
        spec = p.get("spec") if isinstance(p.get("spec"), dict) else {}
        status = p.get("status") if isinstance(p.get("status"), dict) else {}
        ns, name = meta.get("namespace"), meta.get("name")
        if isinstance(ns, str) and isinstance(name, str):
            node = spec.get("nodeName")
            phase = status.get("phase")
            out[f"{ns}/{name}"] = PodState(node=node if isinstance(node, str) else "",
                                           phase=phase if isinstance(phase, str) else None)
    return out


def snapshot(path: str | Path, config: AcceleratorConfig | None = None) -> Snapshot:
    """Read one bundle (directory or .tar.gz) once, as `analyze` reads it (streamed: a 150,000-pod bundle is
    never held whole). Raises BundleError when it cannot be read at all. `config`: the accelerators counted
    (the default's resources unless given)."""
    from analyzer.occupancy.adapter import node_facts
    from analyzer.occupancy.from_analysis import occupancy_of

    analysis = cause_words(path, config)
    with analysis.bundle as bundle:
        loaded = analysis.loaded
        for kind in ("nodes", "pods"):
            if not loaded.has(kind):
                raise BundleError(f"{path}: {kind}.json", "not collected; diff needs nodes.json and pods.json in both bundles")
        manifest = bundle.manifest or {}
        files = _files(bundle)
        quota_problems: list[str] = []
        quotas = _quotas(bundle, quota_problems)
        occ = occupancy_of(analysis)
        assert occ is not None  # nodes and pods were read
        node_items = loaded.documents["nodes"].items
        problems = _problems(analysis, [*occ.problems, *quota_problems])
    config = analysis.cluster.config
    gpu_nodes = {r.node for r in occ.rows}
    used: dict[str, dict[str, int]] = {}
    offered: dict[str, dict[str, tuple[int | None, int | None]]] = {}  # devices a DeviceClass serves there
    unknown = {r.node for r in occ.rows if USAGE_UNKNOWN in r.states}  # a pod bound there could not be read
    for r in occ.rows:
        used.setdefault(r.node, {})[r.resource] = r.used
        offered.setdefault(r.node, {})[r.resource] = (r.capacity, r.allocatable)
    nodes: dict[str, NodeGpu] = {}
    for i, item in enumerate(node_items):
        try:
            f = node_facts(item, f"$.items[{i}]")
        except (ValueError, TypeError):
            continue  # already a problem of the occupancy picture
        if f.name not in gpu_nodes or f.name in nodes:
            continue
        devices = {k: v for k, v in offered.get(f.name, {}).items() if k not in f.capacity and v[0] is not None}
        nodes[f.name] = NodeGpu(usage_unknown=f.name in unknown,
            capacity={**{k: v for k, v in f.capacity.items() if config.is_accelerator(k)},
                      **{k: v[0] for k, v in devices.items()}},
            allocatable={**{k: v for k, v in f.allocatable.items() if config.is_accelerator(k)},
                         **{k: v[1] for k, v in devices.items() if v[1] is not None}},
            used=used.get(f.name, {}), taints=tuple(sorted(str(t) for t in f.taints if t.effect in ("NoSchedule", "NoExecute"))),
            cordoned=f.unschedulable, ready=f.ready,
            gpu_labels={k: v for k, v in sorted(f.labels.items())
                        if k in EXTRA_GPU_LABELS or config.mentions_accelerator(k)})
    targets = {v.key: (v.target.kind, v.word) for v in analysis.verdicts}
    created = manifest.get("created")
    context = manifest.get("context")
    states = analysis.pod_states or {}
    return Snapshot(label=str(path), created=created if isinstance(created, str) else None,
                    context=context if isinstance(context, str) else None, files=files,
                    words={k: w for k, (_, w) in targets.items()}, kinds={k: kind for k, (kind, _) in targets.items()},
                    pods={k: PodState(node=node, phase=phase) for k, (node, phase) in states.items()}, nodes=nodes,
                    pools={(p.pool, p.resource): (p.allocatable, p.used, p.free) for p in occ.pools},
                    quotas=quotas, problems=tuple(problems), edited=tuple(analysis.changed))
