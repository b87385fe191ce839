"""Bytes -> validated documents. One function (`load_documents`) hides the engine.

Each kubectl List is checked in two steps: the envelope (kind, items is an
array), then every item on its own, so one bad pod marks that pod, not the
whole bundle. The fast engine (jsonschema-rs) only answers "valid?"; every
finding is then described by one formatter from (JSON path, keyword, keyword
value, instance), whichever engine found it, so messages read the same:
`pods.json: $.items[3].spec.containers: expected array, found string "app"`.
The reference engine (jsonschema) is used when jsonschema-rs is missing and by
the test that proves both engines give the same findings.
"""

from __future__ import annotations

import hashlib
import threading
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Iterator

from analyzer.bundle.engines import Compiled, SchemaSet, Violation, findings_of
from analyzer.bundle.catalog import BY_NAME, MANIFEST, NAMES, REQUIRED
from analyzer.bundle.reading import Bundle, parse_json
from analyzer.errors import BundleError

MAX_DETAILED = 10_000  # findings kept with full text; the rest are only counted

# -- documents -----------------------------------------------------------------

@dataclass
class Document:
    """One kubectl List as read: every item, and which items are invalid (index -> findings)."""

    kind: str
    file: str
    items: list
    invalid: dict[int, list[Violation]] = field(default_factory=dict)
    single: bool = False  # the file held one object (kubectl get pod X -o json), wrapped here

    def item_path(self, index: int) -> str:
        return "$" if self.single else f"$.items[{index}]"

    def valid_items(self) -> Iterator[tuple[int, dict]]:
        invalid = self.invalid
        for i, item in enumerate(self.items):
            if i not in invalid:
                yield i, item


@dataclass
class Loaded:
    """What a bundle gave: documents, findings (exit 1 for validate), and unreadable files (exit 2)."""

    bundle: Bundle
    documents: dict[str, Document] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    violation_count: int = 0
    unreadable: list[BundleError] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # kind -> why it is not there
    version: dict | None = None
    attempts: list[tuple[str, dict]] = field(default_factory=list)  # (file, attempt document)
    engine: str = ""

    def add(self, file: str, findings: list[tuple[str, str, str]]) -> list[Violation]:
        out = [Violation(file, p, e, f) for p, e, f in findings]
        self.violation_count += len(out)
        room = MAX_DETAILED - len(self.violations)
        if room > 0:
            self.violations.extend(out[:room])
        return out

    def why_missing(self, kind: str) -> str:
        return self.missing.get(kind, f"{kind}.json is not in the bundle")


class _Hasher(threading.Thread):
    """sha256 of a large buffer on the other core while orjson parses it (hashlib releases the GIL)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(daemon=True)
        self.data = data
        self.digest = ""

    def run(self) -> None:
        self.digest = hashlib.sha256(self.data).hexdigest()


def _check_entry(loaded: Loaded, rel: str, data: bytes, digest: str, index: tuple[str, int, dict] | None) -> None:
    if index is None:
        return
    section, i, entry = index
    base = f"$.{section}[{i}]"
    if isinstance(entry.get("bytes"), int) and entry["bytes"] != len(data):
        loaded.add(MANIFEST, [(base + ".bytes", f"{len(data)} (the size of {rel})", str(entry["bytes"]))])
    if isinstance(entry.get("sha256"), str) and entry["sha256"] != digest:
        loaded.add(MANIFEST, [(base + ".sha256", f"{digest} (the sha256 of {rel})", entry["sha256"])])


def read_checked(loaded: Loaded, rel: str) -> object:
    """Read one file, check it against the manifest's size and sha256, parse it."""
    data = loaded.bundle.read_bytes(rel)
    index = loaded.bundle.entry_index(rel)
    hasher = _Hasher(data) if index else None
    if hasher:
        hasher.start()
    try:
        doc = parse_json(data, rel)
    finally:
        if hasher:
            hasher.join()
    if hasher:
        _check_entry(loaded, rel, data, hasher.digest, index)
    del data
    return doc


def _load_list(loaded: Loaded, schemas: SchemaSet, kind: str, doc: object) -> Document:
    file = f"{kind}.json"
    envelope, item_check = schemas.split(kind)  # type: ignore[misc]
    single_kind = BY_NAME[kind].item_kind
    if isinstance(doc, dict) and doc.get("kind") == single_kind and "items" not in doc:
        document = Document(kind, file, [doc], single=True)
    else:
        if not envelope.is_valid(doc):
            found = findings_of(envelope, doc, ())
            loaded.add(file, found)
            raise BundleError(file, f"expected {found[0][1]}, found {found[0][2]}" if found else "not a kubectl List", found[0][0] if found else "$")
        document = Document(kind, file, doc["items"])  # type: ignore[index]
    is_valid = item_check.is_valid
    for i, item in enumerate(document.items):
        if not is_valid(item):
            prefix: tuple = () if document.single else ("items", i)
            document.invalid[i] = loaded.add(file, findings_of(item_check, item, prefix))
    return document


def load_documents(bundle: Bundle, *, engine: str | None = None, strict: bool = False) -> Loaded:
    """Read, check and validate every file of the bundle that the analyzer uses.

    strict=True (validate): an unreadable file of any kind raises BundleError
    (exit 2). strict=False (analyze): pods.json and nodes.json unreadable raise;
    other unreadable files are recorded in `unreadable` and treated as missing,
    so the pods that do not need them are still answered.
    """
    schemas = SchemaSet(engine)
    loaded = Loaded(bundle=bundle, engine=schemas.engine)
    if bundle.manifest is not None:
        man = schemas.whole("manifest")
        if not man.is_valid(bundle.manifest):
            loaded.add(MANIFEST, findings_of(man, bundle.manifest, ()))
        _check_manifest_paths(loaded)
    for kind in NAMES:
        rel = f"{kind}.json"
        try:
            present = bundle.path(rel).is_file()  # refuses a link that leaves the bundle
        except BundleError as exc:
            if strict or kind in REQUIRED:
                raise
            loaded.unreadable.append(exc)
            loaded.missing[kind] = f"{rel} is unreadable: {exc.message}"
            continue
        if not present:
            if kind in bundle.failed:
                loaded.missing[kind] = f"{rel} could not be collected: {bundle.failed[kind] or 'no reason recorded'}"
            else:
                loaded.missing[kind] = f"{rel} is not in the bundle"
            if kind in REQUIRED:
                problem = BundleError(rel, f"missing: a bundle needs pods.json and nodes.json ({loaded.missing[kind]})")
                if strict or kind == "pods":
                    raise problem
                loaded.unreadable.append(problem)  # analyze goes on: funnel answers name the missing file
            continue
        try:
            doc = read_checked(loaded, rel)
            loaded.documents[kind] = _load_list(loaded, schemas, kind, doc)
            del doc
        except BundleError as exc:
            if strict or kind in REQUIRED:
                raise
            loaded.unreadable.append(exc)
            loaded.missing[kind] = f"{rel} is unreadable: {exc.message}"
    if bundle.has("version.json"):
        try:
            version = read_checked(loaded, "version.json")
            check = schemas.whole("version")
            if not check.is_valid(version):
                loaded.add("version.json", findings_of(check, version, ()))
            elif isinstance(version, dict):
                loaded.version = version
        except BundleError as exc:
            if strict:
                raise
            loaded.unreadable.append(exc)
    attempt_check = schemas.whole("attempt")
    for rel in bundle.attempts():
        try:
            doc = read_checked(loaded, rel)
        except BundleError as exc:
            if strict:
                raise
            loaded.unreadable.append(exc)
            continue
        if attempt_check.is_valid(doc):
            loaded.attempts.append((rel, doc))  # type: ignore[arg-type]
        else:
            loaded.add(rel, findings_of(attempt_check, doc, ()))
    return loaded


def _check_manifest_paths(loaded: Loaded) -> None:
    """Every file the manifest lists as collected must exist inside the bundle."""
    manifest = loaded.bundle.manifest or {}
    for section in ("files", "attempts"):
        entries = manifest.get(section)
        if not isinstance(entries, list):
            continue
        for i, e in enumerate(entries):
            if not isinstance(e, dict) or not isinstance(e.get("path"), str) or e.get("status") != "ok":
                continue
            try:
                present = loaded.bundle.path(e["path"]).is_file()
            except BundleError as exc:
                loaded.add(MANIFEST, [(f"$.{section}[{i}].path", "a path inside the bundle", f"{e['path']!r} ({exc.message})")])
                continue
            if not present:
                loaded.add(MANIFEST, [(f"$.{section}[{i}].path", "a file that exists in the bundle", f"{e['path']!r} is missing")])


@lru_cache(maxsize=4)
def _schema_set(engine: str | None) -> SchemaSet:
    return SchemaSet(engine)  # compiled once per engine, not once per attempt


def check_pod_object(obj: object, engine: str | None = None) -> list[tuple[str, str, str]]:
    """Findings for one pod object outside a List (an attempt's manifest), same schema as pods.json items."""
    split = _schema_set(engine).split("pods")
    assert split is not None
    item = split[1]
    if item.is_valid(obj):
        return []
    return findings_of(item, obj, ())
