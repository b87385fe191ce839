"""One bundle -> a Snapshot (plain records): what was collected, words, pods, GPU nodes, pools, quotas.

The bundle is read once, by the pipeline `analyze` uses (`_analysed`, the one place diff touches the
classifier), and everything else comes from that analysis's validated documents and model: diff parses nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.bundle.catalog import BY_NAME, NODES, PODS, RESOURCEQUOTAS
from analyzer.kube import BLOCKING_EFFECTS
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.bundle.reading import Bundle
from analyzer.diff.records import NodeGpu, PodState, Snapshot
from analyzer.errors import BundleError
from analyzer.model.quantity import QuantityError, format_exact, parse
from analyzer.occupancy.records import USAGE_UNKNOWN

if TYPE_CHECKING:
    from analyzer.pipeline import Analysis

# A node label about its accelerators, beyond those that mention one by name.
EXTRA_GPU_LABELS = ("cloud.google.com/gke-accelerator",)


COLLECTED = "collected"
_COMPARED = (PODS.file, NODES.file, RESOURCEQUOTAS.file)


def _files(bundle: Bundle) -> dict[str, str]:
    """What was collected: file -> "collected", "failed" (the manifest says so, with kubectl's error)
    or "missing" (the manifest lists it, the bundle lacks it). Without a manifest, the files present; in another
    collector's archive, the kinds it holds, by our file names."""
    if bundle.format is not None:
        return {BY_NAME[k].file: COLLECTED for k in bundle.format.parts}
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


def _quotas(analysis: "Analysis") -> dict[tuple[str, str, str], tuple[str | None, str | None]] | None:
    """Every valid quota's hard and used per key (the invalid ones are the analysis's findings already)."""
    doc = analysis.loaded.documents.get(RESOURCEQUOTAS.name)
    if doc is None:
        return None
    out: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
    for _, q in doc.valid_items():
        meta, spec = q["metadata"], q.get("spec") or {}
        status = q.get("status") or {}
        hard = spec.get("hard") or status.get("hard") or {}
        used = status.get("used") or {}
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


def _analysed(path: str | Path) -> "Analysis":
    """The bundle analysed as `gpu-triage analyze` analyses it, with every pod's node and phase kept
    (`pod_states`). The caller closes `analysis.bundle`. Raises BundleError, naming the bundle, when it cannot
    be read."""
    from analyzer.pipeline import Options, analyse

    try:
        return analyse(path, Options(), pod_states=True)
    except BundleError as exc:
        label = str(path)
        if exc.file and not exc.file.startswith(label):
            raise BundleError(f"{label}: {exc.file}", exc.message, exc.path) from None  # which of the two bundles
        raise


def snapshot(path: str | Path, config: AcceleratorConfig | None = None) -> Snapshot:
    """Read one bundle (directory or .tar.gz) once, as `analyze` reads it (streamed: a 150,000-pod bundle is
    never held whole). Raises BundleError when it cannot be read at all. `config`: the accelerators counted
    in the GPU picture (the words are always analyze's own)."""
    from analyzer.occupancy.from_analysis import occupancy_of

    analysis = _analysed(path)
    with analysis.bundle as bundle:
        loaded = analysis.loaded
        for kind in (NODES, PODS):
            if not loaded.has(kind.name):
                raise BundleError(f"{path}: {kind.file}",
                                  f"not collected; diff needs {NODES.file} and {PODS.file} in both bundles")
        manifest = bundle.manifest or {}
        files = _files(bundle)
        occ = occupancy_of(analysis, config)
        assert occ is not None  # nodes and pods were read
        problems = _problems(analysis, list(occ.problems))
    config = config or analysis.cluster.config
    gpu_nodes = {r.node for r in occ.rows}
    used: dict[str, dict[str, int]] = {}
    offered: dict[str, dict[str, tuple[int | None, int | None]]] = {}  # devices a DeviceClass serves there
    unknown = {r.node for r in occ.rows if USAGE_UNKNOWN in r.states}  # a pod bound there could not be read
    for r in occ.rows:
        used.setdefault(r.node, {})[r.resource] = r.used
        offered.setdefault(r.node, {})[r.resource] = (r.capacity, r.allocatable)
    nodes: dict[str, NodeGpu] = {}
    for f in analysis.cluster.nodes or ():
        if f.name not in gpu_nodes:
            continue
        devices = {k: v for k, v in offered.get(f.name, {}).items() if k not in f.capacity and v[0] is not None}
        nodes[f.name] = NodeGpu(usage_unknown=f.name in unknown,
            capacity={**{k: v for k, v in f.capacity.items() if config.is_accelerator(k)},
                      **{k: v[0] for k, v in devices.items()}},
            allocatable={**{k: v for k, v in f.allocatable.items() if config.is_accelerator(k)},
                         **{k: v[1] for k, v in devices.items() if v[1] is not None}},
            used=used.get(f.name, {}), taints=tuple(sorted(str(t) for t in f.taints if t.effect in BLOCKING_EFFECTS)),
            cordoned=f.unschedulable, ready=f.ready,
            gpu_labels={k: v for k, v in sorted(f.labels.items())
                        if k in EXTRA_GPU_LABELS or config.mentions_accelerator(k)})
    targets = {v.key: (v.target.kind, v.word) for v in analysis.verdicts}
    reasons = {v.key: v.reason for v in analysis.verdicts}
    created = manifest.get("created")
    context = manifest.get("context")
    states = analysis.pod_states or {}
    return Snapshot(label=str(path), created=created if isinstance(created, str) else None,
                    context=context if isinstance(context, str) else None, files=files,
                    words={k: w for k, (_, w) in targets.items()}, reasons=reasons, kinds={k: kind for k, (kind, _) in targets.items()},
                    pods={k: PodState(node=node, phase=phase) for k, (node, phase) in states.items()}, nodes=nodes,
                    pools={(p.pool, p.resource): (p.allocatable, p.used, p.free) for p in occ.pools},
                    quotas=_quotas(analysis), problems=tuple(problems), edited=tuple(analysis.changed))
