"""The bundle loaded once, read-only, indexed for the API: what is served, what is missing and why.

A file that cannot be read is not fatal: its kind is reported missing (with the file, the JSON path
and the reason) and everything else is served; only a bundle with nothing servable is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from analyzer.bundle.catalog import VERSION
from analyzer.bundle.parts import raw_items
from analyzer.bundle.raw import RawList, read_raw_list, read_raw_object
from analyzer.bundle.reading import open_bundle
from analyzer.errors import BundleError
from analyzer.replay.kinds import RESOURCES, ApiResource

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(kw_only=True)
class Served:
    kind: ApiResource
    version: str
    items: list[dict]
    index: dict[tuple[str, str], dict]
    resource_version: str

    @property
    def group_version(self) -> str:
        return self.kind.group_version(self.version)


@dataclass(kw_only=True)
class Store:
    label: str
    collected: datetime
    collected_from: str  # where the collection time came from, said to the person
    served: dict[str, Served]  # by the catalog's name of the kind (jobs and jobs.batch.volcano.sh are two)
    missing: dict[str, str]  # kind name -> why it is not served
    version: dict | None
    warnings: list[str] = field(default_factory=list)
    shift_times: bool = True  # each answer's times moved so kubectl's own ages count from collection (clock.py)


def parse_time(value: Any) -> datetime | None:
    """RFC 3339 as the API server writes it (with or without fractional seconds)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _newest_timestamp(served: dict[str, Served]) -> datetime | None:
    newest: datetime | None = None
    for s in served.values():
        for item in s.items:
            meta = item.get("metadata") or {}
            status = item.get("status") if isinstance(item.get("status"), dict) else {}
            stamps = [meta.get("creationTimestamp"), item.get("lastTimestamp"), item.get("eventTime"),
                      item.get("firstTimestamp")]
            for cond in status.get("conditions") or ():
                if isinstance(cond, dict):
                    stamps += [cond.get("lastTransitionTime"), cond.get("lastHeartbeatTime")]
            for text in stamps:
                t = parse_time(text)
                if t is not None and (newest is None or t > newest):
                    newest = t
    return newest


def _load_kind(kind: ApiResource, raw: RawList, warnings: list[str]) -> Served:
    """The kind's items that can be served; each one left out is a warning naming its JSON path."""
    f, items = kind.file, raw.items
    warnings.extend(str(v) for v in raw.changed)
    kept: list[dict] = []
    index: dict[tuple[str, str], dict] = {}
    version = kind.version
    newest_rv = 0
    for i, item in enumerate(items):
        where = f"{f}: $.items[{i}]"
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            warnings.append(f"{where}.metadata.name: missing or not a string; item not served")
            continue
        ns = meta.get("namespace", "") if kind.namespaced else ""
        if not isinstance(ns, str) or (kind.namespaced and not ns):
            warnings.append(f"{where}.metadata.namespace: missing or not a string; item not served")
            continue
        key = (ns, meta["name"])
        if key in index:
            warnings.append(f"{where}: a second {kind.singular} {'/'.join(p for p in key if p)}; the first is served")
            continue
        if kind.group and isinstance(item.get("apiVersion"), str) and item["apiVersion"].startswith(kind.group + "/"):
            version = item["apiVersion"].split("/", 1)[1]  # DRA: v1beta1/v1beta2/v1 as collected
        rv = meta.get("resourceVersion")
        if isinstance(rv, str) and rv.isdigit():
            newest_rv = max(newest_rv, int(rv))
        kept.append(item)
        index[key] = item
    return Served(kind=kind, version=version, items=kept, index=index, resource_version=raw.resource_version or str(newest_rv))


def load_store(path: str | Path, *, shift_times: bool = True) -> Store:
    """Read every servable file of the bundle (directory or .tar.gz). Raises BundleError when none is.
    `shift_times`: move every timestamp so kubectl's own ages count from the collection time (clock.py)."""
    bundle = open_bundle(path)
    with bundle:
        served: dict[str, Served] = {}
        missing: dict[str, str] = {}
        warnings: list[str] = []
        for kind in RESOURCES:
            fmt = bundle.format
            if fmt is not None:  # another collector's archive: its files of the kind, read whole (bundle/parts.py)
                if kind.name not in fmt.parts:
                    missing[kind.name] = fmt.lacks.get(kind.name) or f"{kind.file} has no counterpart in this {fmt.name}"
                    continue
                items, problems = raw_items(bundle, fmt.parts[kind.name])
                warnings += problems
                served[kind.name] = _load_kind(kind, RawList(file=kind.file, items=items, resource_version=None,
                                                             changed=()), warnings)
                continue
            failed = bundle.failed.get(kind.name)
            if failed is not None:
                missing[kind.name] = f"{kind.file} was not collected: the collector failed ({failed or 'no message'})"
                continue
            if not bundle.has(kind.file):
                missing[kind.name] = f"{kind.file} was not collected in this bundle"
                continue
            try:
                served[kind.name] = _load_kind(kind, read_raw_list(bundle, kind.file), warnings)
            except BundleError as exc:
                warnings.append(f"{exc}; {kind.resource} not served")
                missing[kind.name] = f"{exc}; {kind.resource} are not served"
        version = bundle.format.server if bundle.format is not None else None
        if bundle.has(VERSION):
            try:
                doc = read_raw_object(bundle, VERSION)
                sv = doc.get("serverVersion") if isinstance(doc, dict) else None
                if isinstance(sv, dict):
                    version = sv
                else:
                    warnings.append(f"{VERSION}: $.serverVersion: missing or not an object; /version not served")
            except BundleError as exc:
                warnings.append(f"{VERSION}: not readable ({exc}); /version not served")
        if not served:
            raise BundleError(str(path), "nothing to serve: no readable " + ", ".join(k.file for k in RESOURCES[:4]) + ", …")
        created = parse_time((bundle.manifest or {}).get("created"))
        if created is not None:
            source = "manifest.json created"
        else:
            created = _newest_timestamp(served) or EPOCH
            source = "the newest timestamp in the bundle (no manifest.json created)"
        return Store(label=str(path), collected=created, collected_from=source, served=served,
                     missing=missing, version=version, warnings=warnings, shift_times=shift_times)
