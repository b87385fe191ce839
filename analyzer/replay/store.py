"""The bundle loaded once, read-only, indexed for the API: what is served, what is missing and why.

A file that cannot be read is not fatal: its kind is reported missing (with the file, the JSON path
and the reason) and everything else is served; only a bundle with nothing servable is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from analyzer.bundle.reading import open_bundle
from analyzer.errors import BundleError
from analyzer.replay.kinds import KINDS, Kind

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(kw_only=True)
class Served:
    kind: Kind
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
    served: dict[str, Served]
    missing: dict[str, str]  # resource -> why it is not served
    version: dict | None
    warnings: list[str] = field(default_factory=list)


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


def _load_kind(kind: Kind, data: bytes, warnings: list[str]) -> Served | str:
    """The kind's List, or the reason (file and JSON path) it cannot be served."""
    f = kind.file
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return f"{f}: not valid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"{f}: $: expected a kubectl List object"
    items = doc.get("items")
    if not isinstance(items, list):
        return f"{f}: $.items: expected an array"
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
    list_rv = (doc.get("metadata") or {}).get("resourceVersion") if isinstance(doc.get("metadata"), dict) else None
    rv_text = list_rv if isinstance(list_rv, str) and list_rv else str(newest_rv)
    return Served(kind=kind, version=version, items=kept, index=index, resource_version=rv_text)


def load_store(path: str | Path) -> Store:
    """Read every servable file of the bundle (directory or .tar.gz). Raises BundleError when none is."""
    bundle = open_bundle(path)
    with bundle:
        served: dict[str, Served] = {}
        missing: dict[str, str] = {}
        warnings: list[str] = []
        for kind in KINDS:
            failed = bundle.failed.get(kind.name)
            if failed is not None:
                missing[kind.resource] = f"{kind.file} was not collected: the collector failed ({failed or 'no message'})"
                continue
            if not bundle.has(kind.file):
                missing[kind.resource] = f"{kind.file} was not collected in this bundle"
                continue
            try:
                loaded = _load_kind(kind, bundle.read_bytes(kind.file), warnings)
            except BundleError as exc:
                loaded = str(exc)
            if isinstance(loaded, str):
                warnings.append(f"{loaded}; {kind.resource} not served")
                missing[kind.resource] = f"{loaded}; {kind.resource} are not served"
            else:
                served[kind.resource] = loaded
        version = None
        if bundle.has("version.json"):
            try:
                doc = orjson.loads(bundle.read_bytes("version.json"))
                sv = doc.get("serverVersion") if isinstance(doc, dict) else None
                if isinstance(sv, dict):
                    version = sv
                else:
                    warnings.append("version.json: $.serverVersion: missing or not an object; /version not served")
            except (orjson.JSONDecodeError, BundleError) as exc:
                warnings.append(f"version.json: not readable ({exc}); /version not served")
        if not served:
            raise BundleError(str(path), "nothing to serve: no readable " + ", ".join(k.file for k in KINDS[:4]) + ", …")
        created = parse_time((bundle.manifest or {}).get("created"))
        if created is not None:
            source = "manifest.json created"
        else:
            created = _newest_timestamp(served) or EPOCH
            source = "the newest timestamp in the bundle (no manifest.json created)"
        return Store(label=str(path), collected=created, collected_from=source, served=served,
                     missing=missing, version=version, warnings=warnings)
