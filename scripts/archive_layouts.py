#!/usr/bin/env python3
"""Write one of our bundles (kubectl's Lists) as a troubleshoot support bundle or as a must-gather would hold it.

Written from the formats' own sources, not from gpu-triage's reader, so the reader is tested against the layout
and not against itself:
- troubleshoot: replicatedhq/troubleshoot pkg/collect/cluster_resources.go (CollectClusterResources.Collect:
  per-namespace `<dir>/<namespace>.json` Lists, json.MarshalIndent with two spaces and kind/apiVersion set by
  GVKForObject; `nodes.json`, `pvs.json`, `storage-classes.json`, `volumeattachments.json`; crsV1 and
  storeCustomResource: a bare array per CRD and namespace under `custom-resources/<crd>/<ns>.json`, a `.yaml`
  link beside it (SymLinkResult), no file for a CRD without objects), pkg/constants/constants.go (directory
  names), pkg/version GetVersionFile (`version.yaml`), pkg/collect/cluster_info.go (`cluster_version.json`),
  pkg/collect/result.go ArchiveBundle (one top-level directory in the archive, relative link names).
- must-gather: openshift/oc pkg/cli/admin/inspect (util.go dirPathForInfo/filenameForInfo: Lists gathered per
  namespace as `namespaces/<ns>/<group>/<resource>.yaml`, objects inspected one by one as
  `<group>/<resource>/<name>.yaml`, `core` for the core group, cluster-scoped under `cluster-scoped-resources/`;
  namespace.go: `namespaces/<ns>/<ns>.yaml` and namespaceResourcesToCollect, which has no ResourceQuotas;
  inspect.go logTimestamp: `timestamp`), under `must-gather.local.<n>/<image>/` as `oc adm must-gather` writes.

Only what the original bundle has is written (a converted bundle holds the same evidence, in another layout),
less what the format never collects. Usage:
    python scripts/archive_layouts.py troubleshoot BUNDLE OUT [--tar]
    python scripts/archive_layouts.py must-gather BUNDLE OUT [--tar]
OUT is created; with --tar, OUT.tar.gz is written instead (as `kubectl support-bundle` hands it over). A large
bundle's pods are written a namespace at a time (the lead's 150,000-pod comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

import orjson

TS_DIR = "cluster-resources"
# constants.go: our file -> troubleshoot's per-namespace directory, or its cluster-scoped file.
TS_NAMESPACED = {"pods": "pods", "events": "events", "resourcequotas": "resource-quota", "replicasets": "replicasets",
                 "jobs": "jobs", "statefulsets": "statefulsets", "daemonsets": "daemonsets",
                 "persistentvolumeclaims": "pvcs", "limitranges": "limitranges"}
TS_CLUSTER = {"nodes": "nodes.json", "persistentvolumes": "pvs.json", "storageclasses": "storage-classes.json",
              "volumeattachments": "volumeattachments.json", "priorityclasses": "priorityclasses.json"}
TS_VERSION = "v0.117.0"
CA_STATUS = "configmaps.cluster-autoscaler-status"

# must-gather: our file -> (group directory, resource); namespaced Lists come from `inspect ns/<ns>`.
MG_NAMESPACE_GATHER = {"pods": ("core", "pods"), "events": ("core", "events"),
                       "persistentvolumeclaims": ("core", "persistentvolumeclaims"),
                       "replicasets": ("apps", "replicasets"), "statefulsets": ("apps", "statefulsets"),
                       "daemonsets": ("apps", "daemonsets"), "jobs": ("batch", "jobs")}
# Not gathered by `inspect ns/<ns>` (namespace.go): dropped, so the converted must-gather lacks them as a real one does.
MG_NOT_GATHERED = ("resourcequotas",)
MG_TIMESTAMP = "2026-12-01 10:00:00.123456789 +0000 UTC m=+0.041\n2026-12-01 10:01:30.987654321 +0000 UTC m=+90.5\n"


# The typed List of each kind written, for a List with no item to take it from (GVKForObject on the list).
LIST_KINDS = {"pods": ("PodList", "v1"), "events": ("EventList", "v1"), "resourcequotas": ("ResourceQuotaList", "v1"),
              "replicasets": ("ReplicaSetList", "apps/v1"), "jobs": ("JobList", "batch/v1"),
              "statefulsets": ("StatefulSetList", "apps/v1"), "daemonsets": ("DaemonSetList", "apps/v1"),
              "persistentvolumeclaims": ("PersistentVolumeClaimList", "v1"), "limitranges": ("LimitRangeList", "v1"),
              "nodes": ("NodeList", "v1"), "persistentvolumes": ("PersistentVolumeList", "v1"),
              "storageclasses": ("StorageClassList", "storage.k8s.io/v1"), "namespaces": ("NamespaceList", "v1"),
              "volumeattachments": ("VolumeAttachmentList", "storage.k8s.io/v1"), CA_STATUS: ("ConfigMapList", "v1")}


def _load(raw: object) -> dict:
    """An item: a msgspec.Raw slice, or an item already parsed (a List re-read whole)."""
    return raw if isinstance(raw, dict) else orjson.loads(memoryview(raw))  # type: ignore[arg-type]


class Items:
    """One List's items as raw JSON slices of the file (msgspec.Raw): a 1.7 GB pods.json is split, never built
    as one document; each item is parsed when it is written (and once to learn its namespace)."""

    def __init__(self, path: Path) -> None:
        import msgspec

        self.name = path.stem
        self.data = path.read_bytes()
        top = msgspec.json.decode(self.data, type=dict[str, msgspec.Raw])
        self.kind = json.loads(bytes(top["kind"])) if "kind" in top else "List"
        self.raws = msgspec.json.decode(top["items"], type=list[msgspec.Raw]) if "items" in top else []

    def parsed(self) -> list[dict]:
        return [_load(r) for r in self.raws]

    def by_namespace(self) -> dict[str, list]:
        groups: dict[str, list] = defaultdict(list)
        for raw in self.raws:
            meta = _load(raw).get("metadata") or {}
            groups[meta.get("namespace") or ""].append(raw)
        return groups


def _lists(bundle: Path) -> dict[str, Items]:
    """Every kubectl List of the bundle, by file name without `.json` (manifest, version and attempts aside)."""
    out = {}
    for p in sorted(bundle.glob("*.json")):
        if p.name in ("manifest.json", "version.json"):
            continue
        items = Items(p)
        if items.raws or p.read_bytes().lstrip().startswith(b"{"):
            out[p.stem] = items
    return out


def _namespaces(lists: dict[str, Items]) -> list[str]:
    names = {(i.get("metadata") or {}).get("name") for i in lists["namespaces"].parsed()} if "namespaces" in lists else set()
    for name, doc in lists.items():
        if name in ("nodes", "namespaces"):
            continue
        names |= set(doc.by_namespace())
    return sorted(n for n in names if n)


def _list_kind(doc: Items, raws: list) -> tuple[str, str]:
    """The typed List's kind and apiVersion, as GVKForObject sets them."""
    first = _load(raws[0]) if raws else (_load(doc.raws[0]) if doc.raws else None)
    if first is None:
        return LIST_KINDS.get(doc.name, ("List", "v1"))
    kind = doc.kind if doc.kind != "List" else f"{first.get('kind', 'Object')}List"
    return kind, first.get("apiVersion", "v1")


def _write_go_list(path: Path, doc: Items, raws: list) -> None:
    """A typed client's List as json.MarshalIndent(list, "", "  ") writes it: kind, apiVersion, metadata, items."""
    kind, api = _list_kind(doc, raws)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(b'{\n  "kind": %s,\n  "apiVersion": %s,\n  "metadata": {\n    "resourceVersion": "1"\n  },\n  "items": ['
                 % (orjson.dumps(kind), orjson.dumps(api)))
        for i, raw in enumerate(raws):
            fh.write(b"\n    " if i == 0 else b",\n    ")
            fh.write(orjson.dumps(_load(raw), option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    "))
        fh.write(b"\n  ]\n}" if raws else b"]\n}")


def _write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2))


def to_troubleshoot(bundle: Path, out: Path) -> Path:
    """Write `bundle` as `out/support-bundle-<time>/…`; returns that directory."""
    root = out / "support-bundle-2026-12-01T10_00_00"
    base = root / TS_DIR
    lists = _lists(bundle)
    namespaces = _namespaces(lists)
    root.mkdir(parents=True, exist_ok=True)
    (root / "version.yaml").write_text(f"apiVersion: troubleshoot.sh/v1beta2\nkind: SupportBundle\nspec:\n"
                                       f"  versionNumber: {TS_VERSION}\n")
    version = bundle / "version.json"
    if version.is_file():
        server = json.loads(version.read_bytes()).get("serverVersion") or {}
        _write_json(root / "cluster-info" / "cluster_version.json", {"info": server, "string": server.get("gitVersion", "")})
    if "namespaces" in lists:
        _write_go_list(base / "namespaces.json", lists["namespaces"], lists["namespaces"].raws)
    else:
        _write_json(base / "namespaces.json", {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {}, "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces]})
    for ours, sub in TS_NAMESPACED.items():
        if ours not in lists:
            continue
        groups = lists[ours].by_namespace()
        for ns in namespaces:  # pods(): one file per namespace listed, empty Lists too
            _write_go_list(base / sub / f"{ns}.json", lists[ours], groups.get(ns, []))
    for ours, name in TS_CLUSTER.items():
        if ours in lists:
            _write_go_list(base / name, lists[ours], lists[ours].raws)
    crds = []
    for ours, doc in lists.items():
        if ours == CA_STATUS or "." not in ours:
            continue
        crds.append({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": ours}})
        if not doc.raws:
            continue  # crsV1: `if len(customResourceList.Items) == 0 { continue }`
        for ns, group in doc.by_namespace().items():
            items = [_load(r) for r in group]
            _cr_file(base / "custom-resources" / (f"{ours}/{ns}.json" if ns else f"{ours}.json"), items)
    _write_json(base / "custom-resource-definitions.json",
                {"kind": "CustomResourceDefinitionList", "apiVersion": "apiextensions.k8s.io/v1", "metadata": {},
                 "items": crds})
    if CA_STATUS in lists:
        _write_go_list(base / "configmaps" / "kube-system.json", lists[CA_STATUS], lists[CA_STATUS].raws)
    return root


def _cr_file(path: Path, items: list) -> None:
    _write_json(path, items)
    os.symlink(path.name, path.with_suffix(".yaml"))  # SymLinkResult's backward-compatible YAML name


def to_mustgather(bundle: Path, out: Path) -> Path:
    """Write `bundle` as `out/must-gather.local.<n>/<image>/…`; returns that directory."""
    import yaml

    def dump(path: Path, value: object) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True))

    root = out / "must-gather.local.5271098301287" / "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0c1d"
    lists = _lists(bundle)
    namespaces = _namespaces(lists)
    root.mkdir(parents=True, exist_ok=True)
    (root / "timestamp").write_text(MG_TIMESTAMP)
    known = {(i.get("metadata") or {}).get("name"): i for i in (lists["namespaces"].parsed() if "namespaces" in lists else [])}
    for ns in namespaces:
        d = root / "namespaces" / ns
        dump(d / f"{ns}.yaml", known.get(ns) or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for ours, (group, resource) in MG_NAMESPACE_GATHER.items():
            if ours in lists:
                dump(d / group / f"{resource}.yaml", _go_list(lists[ours], lists[ours].by_namespace().get(ns, [])))
    if CA_STATUS in lists:
        d = root / "namespaces" / "kube-system" / "core"
        dump(d / "configmaps.yaml", _go_list(lists[CA_STATUS], lists[CA_STATUS].raws))
    for ours, doc in lists.items():
        if ours in MG_NAMESPACE_GATHER or ours in MG_NOT_GATHERED or ours in ("namespaces", CA_STATUS):
            continue
        # Inspected one by one (`oc adm inspect <resource>`, flattened): one file per object.
        resource, _, group = ours.partition(".")
        for item in doc.parsed():
            meta = item.get("metadata") or {}
            group_dir = group or _group_of(item)
            where = (root / "namespaces" / meta["namespace"] if meta.get("namespace") else root / "cluster-scoped-resources")
            dump(where / group_dir / resource / f"{meta['name']}.yaml", item)
    return root


def _go_list(doc: Items, raws: list) -> dict:
    """A List as the dynamic client returns it (`inspect` prints it with the YAML printer)."""
    kind, api = _list_kind(doc, raws)
    return {"apiVersion": api, "kind": kind, "metadata": {"resourceVersion": "1"}, "items": [_load(r) for r in raws]}


def _group_of(item: dict) -> str:
    api = str(item.get("apiVersion") or "v1")
    return api.split("/")[0] if "/" in api else "core"


def tar_of(directory: Path, archive: Path) -> Path:
    """A .tar.gz whose members are `directory`'s top-level entries and their trees, links kept as links."""
    with tarfile.open(archive, "w:gz") as tf:
        for child in sorted(directory.iterdir()):
            tf.add(child, arcname=child.name)
    return archive


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("format", choices=("troubleshoot", "must-gather"))
    ap.add_argument("bundle", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--tar", action="store_true", help="write OUT.tar.gz instead of the directory OUT")
    args = ap.parse_args(argv)
    convert = to_troubleshoot if args.format == "troubleshoot" else to_mustgather
    if not args.tar:
        print(convert(args.bundle, args.out))
        return 0
    with tempfile.TemporaryDirectory(prefix="archive-layouts-") as tmp:
        convert(args.bundle, Path(tmp))
        archive = args.out.with_name(args.out.name + ".tar.gz")
        print(tar_of(Path(tmp), archive))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
