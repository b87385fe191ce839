"""A Replicated troubleshoot support bundle (`kubectl support-bundle`) as the catalog's kinds.

The layout is replicatedhq/troubleshoot's pkg/collect/cluster_resources.go (CollectClusterResources.Collect) and
pkg/constants/constants.go: under `cluster-resources/`, a namespaced kind is one file per namespace,
`<dir>/<namespace>.json`, each the typed client's List (`{"kind": "PodList", "items": [...]}`, json.MarshalIndent
with two spaces, GVKForObject setting kind and apiVersion); a cluster-scoped kind is one List, `nodes.json`,
`pvs.json`, `storage-classes.json`, `volumeattachments.json`; `namespaces.json` is a NamespaceList, or a bare array
when the spec names the namespaces (getNamespaces). Custom resources (crsV1 and storeCustomResource) are a bare
JSON array per CRD, `custom-resources/<plural>.<group>/<namespace>.json` (namespaced) or
`custom-resources/<plural>.<group>.json`, with a `.yaml` link to each (older releases wrote real YAML files
there); a CRD with no objects gets no file, and `custom-resource-definitions.json` lists the CRDs served.
Each collection error goes to `<dir>-errors.json` beside the data (marshalErrors: a map namespace -> message, or
an array of messages). `version.yaml` at the root is troubleshoot's own version (pkg/version.GetVersionFile), and
`cluster-info/cluster_version.json` the server's (`{"info": version.Info, "string": ...}`).

Never collected: RuntimeClasses, the resource.k8s.io kinds (built in, so not custom resources) and the CSI
objects (CSINode, CSIDriver, CSIStorageCapacity).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from analyzer.bundle import catalog as c
from analyzer.bundle.formats import ARRAY, LIST, CollectionError, Format, Part, files_in, objects, part_of

NAME = "troubleshoot support bundle"
DIR = "cluster-resources"
CR_DIR = "custom-resources"

# Namespaced kinds: the directory of per-namespace files (constants.go's CLUSTER_RESOURCES_*).
PER_NAMESPACE: dict[str, str] = {
    c.PODS.name: "pods", c.EVENTS.name: "events", c.RESOURCEQUOTAS.name: "resource-quota",
    c.REPLICASETS.name: "replicasets", c.JOBS.name: "jobs", c.STATEFULSETS.name: "statefulsets",
    c.DAEMONSETS.name: "daemonsets", c.PERSISTENTVOLUMECLAIMS.name: "pvcs",
}
# Cluster-scoped kinds: one List each, `<stem>.json` (constants.go names the stems, Collect adds ".json").
CLUSTER_FILES: dict[str, str] = {
    c.NODES.name: "nodes", c.NAMESPACES.name: "namespaces", c.PERSISTENTVOLUMES.name: "pvs",
    c.STORAGECLASSES.name: "storage-classes", c.VOLUMEATTACHMENTS.name: "volumeattachments",
}
NEVER: tuple[str, ...] = (
    c.RUNTIMECLASSES.name, c.RESOURCECLAIMS.name, c.RESOURCECLAIMTEMPLATES.name, c.RESOURCESLICES.name,
    c.DEVICECLASSES.name, c.DEVICETAINTRULES.name, c.CSINODES.name, c.CSIDRIVERS.name, c.CSISTORAGECAPACITIES.name,
)
CUSTOM: tuple[c.Kind, ...] = tuple(k for k in c.KINDS if k.group and k.name.endswith("." + k.group))
CONFIGMAPS = "configmaps"  # the autoscaler's status is one ConfigMap of configmaps/<namespace>.json


def root_of(directory: Path) -> Path | None:
    """The support bundle's root at or just under `directory` (an archive unpacks to `support-bundle-<time>/`):
    a `cluster-resources/` directory holding nodes.json or a pods/ directory. The layout decides, not a name."""
    for candidate in (directory, *sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink())):
        d = candidate / DIR
        if d.is_dir() and not d.is_symlink() and ((d / f"{CLUSTER_FILES[c.NODES.name]}.json").is_file() or (d / "pods").is_dir()):
            return candidate
    return None


def describe(root: Path) -> Format:
    """The kinds' files in this bundle, what it lacks and the errors it recorded."""
    base = root / DIR
    parts: dict[str, tuple[Part, ...]] = {}
    lacks: dict[str, str] = {}
    errors: list[CollectionError] = []
    for kind, sub in PER_NAMESPACE.items():
        found = tuple(part_of(root, p, LIST) for p in files_in(base / sub, ".json"))
        errors += _errors(root, base / f"{sub}-errors.json", kind)
        if found or (base / sub).is_dir():
            parts[kind] = found
        else:
            lacks[kind] = f"{objects(kind)} were not collected in this {NAME} (it has no {DIR}/{sub}/)"
    for kind, stem in CLUSTER_FILES.items():
        errors += _errors(root, base / f"{stem}-errors.json", kind)
        name = f"{stem}.json"
        if (base / name).is_file():
            parts[kind] = (part_of(root, base / name, ARRAY if kind == c.NAMESPACES.name else LIST),)
        else:
            lacks[kind] = f"{objects(kind)} were not collected in this {NAME} (it has no {DIR}/{name})"
    for kind in NEVER:
        lacks[kind] = f"{objects(kind)} are not collected by a {NAME} (its cluster-resources collector does not read them)"
    served = _served_crds(base / "custom-resource-definitions.json")
    errors += [_cr_kind(e) for e in _errors(root, base / CR_DIR / f"{CR_DIR}-errors.json", None)]
    for kind in CUSTOM:
        crd = kind.resource  # `<plural>.<group>`: the CRD's name, troubleshoot's file name
        files = files_in(base / CR_DIR / crd, ".json") or files_in(base / CR_DIR / crd, ".yaml")
        whole = [p for p in (base / CR_DIR / f"{crd}.json", base / CR_DIR / f"{crd}.yaml") if p.is_file() and not p.is_symlink()]
        found = tuple(part_of(root, p, ARRAY) for p in (files or whole[:1]))
        if found or (served is not None and crd in served):
            parts[kind.name] = found  # a served CRD with no objects has no file: none exist
        else:
            lacks[kind.name] = (f"{objects(kind.name)} were not collected in this {NAME} (no file under {DIR}/{CR_DIR}/, "
                                f"and no CustomResourceDefinition {crd} in {DIR}/custom-resource-definitions.json)")
    cm = base / CONFIGMAPS / f"{c.CA_STATUS[0]}.json"
    if cm.is_file():
        parts[c.CA_STATUS_CONFIGMAP.name] = (Part(path=cm.relative_to(root).as_posix(), shape=LIST,
                                                   only_name=c.CA_STATUS[1]),)
    elif (base / CONFIGMAPS).is_dir():
        parts[c.CA_STATUS_CONFIGMAP.name] = ()
    else:
        lacks[c.CA_STATUS_CONFIGMAP.name] = f"ConfigMaps were not collected in this {NAME} (it has no {DIR}/{CONFIGMAPS}/)"
    for e in errors:
        if e.kind and e.kind not in parts and e.kind not in NEVER:
            lacks[e.kind] = f"{objects(e.kind)} could not be collected by the {NAME}: {e.message}"
    return Format(name=NAME, version=_version(root), parts=parts, lacks=lacks, errors=tuple(errors),
                  server=_server(root), never=tuple(objects(k) for k in NEVER))


def _cr_kind(e: CollectionError) -> CollectionError:
    """A custom-resources error is keyed by the CRD's name (`<plural>.<group>`, or `<crd>/<namespace>`)."""
    crd = e.path.removeprefix('$["').removesuffix('"]').split("/")[0]
    kind = next((k.name for k in CUSTOM if k.resource == crd), None)
    return CollectionError(file=e.file, path=e.path, message=e.message, kind=kind)


def _errors(root: Path, path: Path, kind: str | None) -> list[CollectionError]:
    """marshalErrors' output: a map (namespace or CRD -> message) or an array of messages."""
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 16 * 2**20:
        return []
    rel = path.relative_to(root).as_posix()
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        return [CollectionError(file=rel, path="$", message=f"not JSON: {exc}", kind=None)]
    if isinstance(doc, dict):
        return [CollectionError(file=rel, path=f'$["{k}"]', message=str(v), kind=kind) for k, v in doc.items()]
    if isinstance(doc, list):
        return [CollectionError(file=rel, path=f"$[{i}]", message=str(v), kind=kind) for i, v in enumerate(doc)]
    return [CollectionError(file=rel, path="$", message=str(doc), kind=kind)]


def _served_crds(path: Path) -> set[str] | None:
    """The CRDs' names in custom-resource-definitions.json (a CustomResourceDefinitionList), None if unreadable."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return None
    items = doc.get("items") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return None
    return {str((i.get("metadata") or {}).get("name")) for i in items if isinstance(i, dict) and isinstance(i.get("metadata"), dict)}


def _version(root: Path) -> str | None:
    """version.yaml's spec.versionNumber (troubleshoot.sh/v1beta2 SupportBundle), read by the bounded loader."""
    path = root / "version.yaml"
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 1 << 16:
        return None
    from analyzer.bundle.safe_yaml import NotYaml, UnsafeYaml, load_all

    try:
        docs = load_all(path.read_text("utf-8", errors="replace"))
    except (NotYaml, UnsafeYaml):
        return None
    spec = docs[0].get("spec") if docs and isinstance(docs[0], dict) else None
    number = spec.get("versionNumber") if isinstance(spec, dict) else None
    return str(number) if number else None


def _server(root: Path) -> dict | None:
    """cluster-info/cluster_version.json's `info`: the server's version.Info, as version.json's serverVersion."""
    path = root / "cluster-info" / "cluster_version.json"
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 1 << 16:
        return None
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return None
    info = doc.get("info") if isinstance(doc, dict) else None
    return info if isinstance(info, dict) else None
