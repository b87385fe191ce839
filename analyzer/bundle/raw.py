"""A kubectl List read whole, for the one consumer that serves objects as they are (replay): parsed by the same
reader, its envelope checked, its size and sha256 held against the manifest. Items are not schema-checked:
kubectl is shown what was collected, and replay says which items it could not serve."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.engines import Violation
from analyzer.bundle.reading import Bundle, parse_json
from analyzer.bundle.changed import manifest_findings
from analyzer.bundle.checksum import start_hash
from analyzer.errors import BundleError


@dataclass(frozen=True, kw_only=True)
class RawList:
    file: str
    items: list
    resource_version: str | None  # the List's metadata.resourceVersion, when kubectl wrote one
    changed: tuple[Violation, ...]  # the manifest's size or sha256 disagrees: findings on manifest.json, as analyze reports them


def read_checked_whole(bundle: Bundle, rel: str) -> tuple[object, list[Violation]]:
    """One file read whole and parsed, with the manifest's size and sha256 held against it (a FileChanged
    when they disagree: the file changed after collection). BundleError when it is not JSON."""
    data = bundle.read_bytes(rel)
    index = bundle.entry_index(rel)
    hasher = start_hash(data) if index else None
    try:
        doc = parse_json(data, rel)
    finally:
        if hasher:
            hasher.join()
    return doc, (list(manifest_findings(rel, len(data), hasher.digest, index)) if hasher else [])


def read_raw_list(bundle: Bundle, rel: str) -> RawList:
    """Raises BundleError naming the file and JSON path when the file is not a kubectl List."""
    doc, found = read_checked_whole(bundle, rel)
    changed = tuple(found)
    if not isinstance(doc, dict):
        raise BundleError(rel, "expected a kubectl List object", "$")
    items = doc.get("items")
    if not isinstance(items, list):
        raise BundleError(rel, "expected an array", "$.items")
    meta = doc.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return RawList(file=rel, items=items, resource_version=rv if isinstance(rv, str) and rv else None, changed=changed)


def read_raw_object(bundle: Bundle, rel: str) -> object:
    """A small single-object file (version.json) parsed by the same reader; BundleError when it is not JSON."""
    return parse_json(bundle.read_bytes(rel), rel)
