"""An OpenShift / Kubernetes must-gather (`oc adm must-gather`, `oc adm inspect`) as the catalog's kinds.

The layout is openshift/oc's pkg/cli/admin/inspect: util.go's dirPathForInfo and filenameForInfo put a List
(what `inspect ns/<ns>` gathers per namespace, resource.go's groupResourceToInfos: not flattened) in
`namespaces/<ns>/<group>/<resource>.yaml` and one object (what a flattened `inspect <resource>` gathers) in
`namespaces/<ns>/<group>/<resource>/<name>.yaml` or `cluster-scoped-resources/<group>/<resource>/<name>.yaml`,
the group `core` for the core group; namespace.go's gatherNamespaceData writes the Namespace itself as
`namespaces/<ns>/<ns>.yaml`. Everything is YAML (the YAML printer). namespace.go's namespaceResourcesToCollect
is what `inspect ns/<ns>` gathers: the `all` category (pods, ReplicaSets, Jobs, StatefulSets, DaemonSets, ...),
configmaps, events, persistentvolumeclaims and a few more; ResourceQuotas, ResourceClaims and custom resources
only when a gather script inspects them by name. inspect.go's logTimestamp appends `time.Now()` to `timestamp`
at the start and the end. `oc adm must-gather` puts that tree under `must-gather.local.<n>/<image>/`.

NVIDIA's GPU Operator must-gather (gpu-operator hack/must-gather.sh) is not this layout: it holds the operator's
own pods and `kubectl describe` text of the GPU nodes, not the cluster's pods and nodes; it is named and refused.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.bundle import catalog as c
from analyzer.bundle.formats import LIST, OBJECT, Format, Part, files_in, objects, part_of
from analyzer.errors import BundleError

NAME = "must-gather"
NAMESPACES = "namespaces"
CLUSTER = "cluster-scoped-resources"
# What hack/must-gather.sh of NVIDIA/gpu-operator writes at its root.
NVIDIA_SCRIPT_FILES = ("gpu_operator_pod.yaml", "cluster_policy.yaml", "cluster_policy.missing", "gpu_operand_pods.yaml")


def _candidates(directory: Path) -> list[Path]:
    """The directory, its subdirectories and theirs (`must-gather.local.<n>/<image>/`), links never followed."""
    out = [directory]
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink()):
        out.append(child)
        out += sorted(p for p in child.iterdir() if p.is_dir() and not p.is_symlink())
    return out


def _is_root(d: Path) -> bool:
    ns = d / NAMESPACES
    if ns.is_dir() and not ns.is_symlink():
        for one in ns.iterdir():
            if one.is_dir() and ((one / "core").is_dir() or (one / f"{one.name}.yaml").is_file()):
                return True
    cluster = d / CLUSTER
    return cluster.is_dir() and not cluster.is_symlink() and (cluster / "core").is_dir()


def root_of(directory: Path) -> Path | None:
    """The must-gather's root at or under `directory`, by its layout; BundleError for NVIDIA's script's output."""
    candidates = _candidates(directory)
    for d in candidates:
        if _is_root(d):
            return d
    for d in candidates:
        if any((d / f).is_file() for f in NVIDIA_SCRIPT_FILES):
            raise BundleError(str(d), "an NVIDIA GPU Operator must-gather (its hack/must-gather.sh): it holds the operator's "
                              "own pods and `kubectl describe` text of the GPU nodes, not the cluster's pods and nodes as "
                              "objects, so no pod can be answered from it; run `oc adm inspect` on the pods' namespaces, "
                              "or gpu-triage collect")
    return None


def _group_dir(kind: c.Kind) -> str:
    return kind.group or "core"


def _plural(kind: c.Kind) -> str:
    return "configmaps" if kind is c.CA_STATUS_CONFIGMAP else kind.resource.split(".")[0]


def _files(base: Path, root: Path, kind: c.Kind) -> list[Part]:
    """The List `<group>/<plural>.yaml` under base, or the objects in `<group>/<plural>/`."""
    group = base / _group_dir(kind)
    plural = _plural(kind)
    only = c.CA_STATUS[1] if kind is c.CA_STATUS_CONFIGMAP else None
    listed = group / f"{plural}.yaml"
    if listed.is_file() and not listed.is_symlink():
        return [Part(path=listed.relative_to(root).as_posix(), shape=LIST, yaml=True, only_name=only)]
    return [Part(path=p.relative_to(root).as_posix(), shape=OBJECT, yaml=True, only_name=only)
            for p in files_in(group / plural, ".yaml", ".yml")]


def describe(root: Path) -> Format:
    parts: dict[str, tuple[Part, ...]] = {}
    lacks: dict[str, str] = {}
    ns_dirs = files_or_dirs(root / NAMESPACES)
    for kind in c.KINDS:
        found: list[Part] = []
        if kind is c.NAMESPACES:
            found = [part_of(root, d / f"{d.name}.yaml", OBJECT) for d in ns_dirs if (d / f"{d.name}.yaml").is_file()]
            found += _files(root / CLUSTER, root, kind)
            where = f"{NAMESPACES}/<namespace>/<namespace>.yaml"
        elif kind is c.CA_STATUS_CONFIGMAP:
            found = _files(root / NAMESPACES / c.CA_STATUS[0], root, kind)
            where = f"{NAMESPACES}/{c.CA_STATUS[0]}/core/configmaps.yaml"
        elif kind.namespaced:
            for d in ns_dirs:
                found += _files(d, root, kind)
            where = f"{NAMESPACES}/*/{_group_dir(kind)}/{_plural(kind)}.yaml"
        else:
            found = _files(root / CLUSTER, root, kind)
            where = f"{CLUSTER}/{_group_dir(kind)}/{_plural(kind)}/"
        if found:
            parts[kind.name] = tuple(found)
        else:
            lacks[kind.name] = f"{objects(kind.name)} were not collected in this {NAME} (it has no {where})"
    never = tuple(objects(k) for k in lacks if k in GPU_TRIAGE_READS)
    return Format(name=NAME, version=_timestamp(root), parts=parts, lacks=lacks, never=never)


# The kinds whose absence changes a GPU pod's answer in most clusters (the header names those this one lacks).
GPU_TRIAGE_READS = (c.NODES.name, c.PODS.name, c.EVENTS.name, c.RESOURCEQUOTAS.name, c.RUNTIMECLASSES.name,
                    c.RESOURCECLAIMS.name, c.RESOURCESLICES.name, c.DEVICECLASSES.name,
                    c.PERSISTENTVOLUMECLAIMS.name, c.PERSISTENTVOLUMES.name, c.STORAGECLASSES.name)


def files_or_dirs(directory: Path) -> list[Path]:
    if not directory.is_dir() or directory.is_symlink():
        return []
    return sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink())


def _timestamp(root: Path) -> str | None:
    """The first line of `timestamp` (inspect.go's logTimestamp: Go's time.Now(), appended at start and end)."""
    path = root / "timestamp"
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 4096:
        return None
    lines = [line.strip() for line in path.read_text("utf-8", errors="replace").splitlines() if line.strip()]
    if not lines:
        return None
    return lines[0] if len(lines) == 1 else f"{lines[0]} to {lines[-1]}"
