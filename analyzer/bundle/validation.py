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

from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

from analyzer.bundle.engines import SchemaSet, Violation, findings_of, violations
from analyzer.bundle.catalog import BY_NAME, MANIFEST, NAMES, PODS, REQUIRED, VERSION
from analyzer.bundle.changed import manifest_findings
from analyzer.bundle.manifest_paths import check_manifest_paths
from analyzer.bundle.raw import read_checked_whole
from analyzer.bundle.reading import Bundle
from analyzer.bundle.checksum import start_hash
from analyzer.bundle.formats import Format
from analyzer.bundle.parts import files_label, path_in_file, read_kind
from analyzer.bundle.streaming import EnvelopeError, ItemSink, KeepAll, KeepIf, Progress, stream_list
from analyzer.errors import BundleError

MAX_DETAILED = 10_000  # findings kept with full text; the rest are only counted

# -- documents -----------------------------------------------------------------

@dataclass(kw_only=True)
class Document:
    """One kubectl List as read: every item, and which items are invalid (index -> findings)."""

    kind: str
    file: str
    items: list
    invalid: dict[int, list[Violation]] = field(default_factory=dict)
    single: bool = False  # the file held one object (kubectl get pod X -o json), wrapped here
    # Set when only some items were kept (events: the failures readers use): items[i] was at positions[i].
    positions: list[int] | None = None
    starts: tuple[tuple[int, str], ...] = ()  # another collector's files: where each begins (bundle/parts.py)

    def item_path(self, index: int) -> str:
        at = index if self.positions is None else self.positions[index]
        if self.starts:
            return path_in_file(self.starts, at)
        return "$" if self.single else f"$.items[{at}]"

    def valid_items(self) -> Iterator[tuple[int, dict]]:
        invalid = self.invalid
        for i, item in enumerate(self.items):
            if i not in invalid:
                yield i, item


@dataclass(kw_only=True)
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
    streamed: dict[str, int] = field(default_factory=dict)  # kind -> item count, for kinds given to a sink (pods)
    # Files that differ from what manifest.json recorded (edited after collection): read as they are now, so
    # they leave nothing out; a finding for `validate` (strict), a warning for every other command.
    changed: list[Violation] = field(default_factory=list)
    strict: bool = False

    def has(self, kind: str) -> bool:
        """Was this kind read (kept as a Document, or streamed to a sink)?"""
        return kind in self.documents or kind in self.streamed

    def add(self, file: str, findings: list[tuple[str, str, str]]) -> list[Violation]:
        out = violations(file, findings)
        self.violation_count += len(out)
        room = MAX_DETAILED - len(self.violations)
        if room > 0:
            self.violations.extend(out[:room])
        return out

    def why_missing(self, kind: str) -> str:
        return self.missing.get(kind, f"{kind}.json is not in the bundle")

    def unreadable_file(self, kind: str) -> bool:
        """Is the kind's file there but unreadable (not JSON, not a List, not a regular file), not just absent?"""
        return any(e.file == f"{kind}.json" for e in self.unreadable)

    def note_changed(self, found: list[Violation], at: int | None = None) -> None:
        """A file changed since collection: a finding under `validate`, else a warning (nothing is left out)."""
        if not found:
            return
        if not self.strict:
            self.changed.extend(found)
            return
        self.violation_count += len(found)
        if at is None:
            self.violations.extend(found)
        else:
            self.violations[at:at] = found
        del self.violations[MAX_DETAILED:]


def read_checked(loaded: Loaded, rel: str) -> object:
    """Read one small file whole (version, attempts), check it against the manifest's size and sha256, parse it."""
    doc, changed = read_checked_whole(loaded.bundle, rel)
    loaded.note_changed(changed)
    return doc


def _stream_kind(loaded: Loaded, schemas: SchemaSet, kind: str, sink: ItemSink | None,
                 progress: Callable[[str], Progress | None] | None) -> Document | None:
    """Read one List once, its items one at a time (bundle/streaming.py). With a caller's `sink` (pods)
    nothing is kept here and the Document is None; otherwise the items are kept as a Document (small kinds).
    The file's size and checksum are checked by a thread while its items are read."""
    rel = f"{kind}.json"
    data = loaded.bundle.read_mapped(rel)
    size = len(data)
    index = loaded.bundle.entry_index(rel)
    hasher = start_hash(data) if index else None
    at = len(loaded.violations)

    def checked() -> None:
        # The size and checksum findings come before the file's own findings, as when it was read whole.
        if hasher is None:
            return
        hasher.join()
        loaded.note_changed(manifest_findings(rel, size, hasher.digest, index), at)

    keep = KeepAll()
    try:
        streamed = stream_list(data=data, file=rel, kind=kind, schemas=schemas, sink=keep if sink is None else sink,
                               add=loaded.add, progress=progress(rel) if progress else None)
    except EnvelopeError as exc:
        checked()
        raise BundleError(exc.file, exc.message, exc.path) from None
    except BaseException:
        if hasher is not None:
            hasher.pause()  # its thread reads the file's pages; the digest is not needed now
        raise
    del data
    checked()
    if sink is not None:
        loaded.streamed[kind] = streamed.count
        return None
    return Document(kind=kind, file=rel, items=keep.items, invalid=keep.invalid, single=streamed.single)


def load_documents(bundle: Bundle, *, engine: str | None = None, strict: bool = False,
                   sinks: Mapping[str, ItemSink] | None = None,
                   progress: Callable[[str], Progress | None] | None = None) -> Loaded:
    """Read, check and validate every file of the bundle that the analyzer uses, in the catalog's order.

    Every List is read once and its items visited one at a time. `sinks`: kinds whose items go to the
    caller's sink (pods to model.pods_index.PodsIndex) instead of being kept: such a kind is not in
    `documents`, only counted in `streamed`. A KeepIf sink keeps some items as a Document (events).
    `progress(file)`: a callback (items done, total) for that file, or None.

    strict=True (validate): an unreadable file of any kind raises BundleError
    (exit 2). strict=False (analyze): pods.json and nodes.json unreadable raise;
    other unreadable files are recorded in `unreadable` and treated as missing,
    so the pods that do not need them are still answered.
    """
    schemas = _schema_set(engine)  # compiled once per process and engine, not once per bundle
    loaded = Loaded(bundle=bundle, engine=schemas.engine, strict=strict)
    if bundle.manifest_error is not None:
        if strict:
            raise bundle.manifest_error
        loaded.unreadable.append(bundle.manifest_error)  # read as a bare bundle: the same answers, exit 2
    if bundle.manifest is not None:
        man = schemas.whole("manifest")
        if not man.is_valid(bundle.manifest):
            loaded.add(MANIFEST, findings_of(man, bundle.manifest, ()))
        check_manifest_paths(loaded.bundle, loaded.add)
    _read_lists(loaded, schemas, strict=strict, sinks=sinks or {}, progress=progress)
    _read_singles(loaded, schemas, strict=strict)
    return loaded


def _read_lists(loaded: Loaded, schemas: SchemaSet, *, strict: bool, sinks: Mapping[str, ItemSink],
                progress: Callable[[str], Progress | None] | None) -> None:
    """Every List of the catalog, in its order."""
    bundle = loaded.bundle
    if bundle.format is not None:
        return _read_format(loaded, bundle.format, schemas, strict=strict, sinks=sinks, progress=progress)
    for kind in NAMES:
        rel = f"{kind}.json"
        try:
            present = bundle.present(rel)  # refuses a link that leaves the bundle, a FIFO, a device
        except BundleError as exc:
            if strict or BY_NAME[kind].fatal_when_missing:
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
                needed = " and ".join(BY_NAME[k].file for k in REQUIRED)
                problem = BundleError(rel, f"missing: a bundle needs {needed} ({loaded.missing[kind]})")
                if strict or BY_NAME[kind].fatal_when_missing:
                    raise problem
                loaded.unreadable.append(problem)  # analyze goes on: funnel answers name the missing file
            continue
        try:
            sink = sinks.get(kind)
            if isinstance(sink, KeepIf):
                _stream_kind(loaded, schemas, kind, sink, progress)
                loaded.streamed.pop(kind, None)
                loaded.documents[kind] = Document(kind=kind, file=rel, items=sink.items, invalid=sink.invalid,
                                                  single=sink.single, positions=sink.positions)
            else:
                document = _stream_kind(loaded, schemas, kind, sink, progress)
                if document is not None:
                    loaded.documents[kind] = document
        except BundleError as exc:
            # An unreadable file is a missing one for what depends on it (nodes.json included: the pods that
            # need nodes answer insufficient-evidence naming it); only pods.json leaves nothing to answer.
            if strict or BY_NAME[kind].fatal_when_missing:
                raise
            loaded.unreadable.append(exc)
            loaded.missing[kind] = f"{rel} is unreadable: {exc.message}"


def _read_format(loaded: Loaded, fmt: Format, schemas: SchemaSet, *, strict: bool, sinks: Mapping[str, ItemSink],
                 progress: Callable[[str], Progress | None] | None) -> None:
    """Another collector's archive (bundle/formats.py): each kind from its files into its one sink (bundle/parts.py).
    A kind the format lacks is missing with the format's reason; its own collection errors are findings."""
    for e in fmt.errors:
        loaded.add(e.file, [(e.path, "the collection to succeed", e.message)])
    if fmt.server is not None:
        loaded.version = {"serverVersion": fmt.server}
    for kind in NAMES:
        parts = fmt.parts.get(kind)
        if parts is None:
            loaded.missing[kind] = fmt.lacks.get(kind) or f"{BY_NAME[kind].file} has no counterpart in this {fmt.name}"
            if kind in REQUIRED:
                problem = BundleError(BY_NAME[kind].file, f"missing: {loaded.missing[kind]}")
                if strict or BY_NAME[kind].fatal_when_missing:
                    raise problem
                loaded.unreadable.append(problem)
            continue
        given, starts = sinks.get(kind), []
        keep = KeepAll() if given is None else given
        count = read_kind(loaded.bundle, parts, kind=kind, schemas=schemas, sink=keep, add=loaded.add, strict=strict,
                          unreadable=loaded.unreadable, progress=progress, starts=starts)
        if isinstance(keep, KeepAll):  # a KeepIf too: the items kept, each where it was
            loaded.documents[kind] = Document(kind=kind, file=files_label(parts), items=keep.items, invalid=keep.invalid,
                                              positions=keep.positions, starts=tuple(starts))
        else:
            loaded.streamed[kind] = count


def _read_singles(loaded: Loaded, schemas: SchemaSet, *, strict: bool) -> None:
    """version.json and the stored attempts: small files read whole."""
    bundle = loaded.bundle
    if bundle.format is not None:
        return
    if bundle.has(VERSION) or _special(bundle, VERSION):
        try:
            version = read_checked(loaded, VERSION)
            check = schemas.whole("version")
            if not check.is_valid(version):
                loaded.add(VERSION, findings_of(check, version, ()))
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
        if attempt_check.is_valid(doc) and isinstance(doc, dict):  # the attempt schema asks for an object
            loaded.attempts.append((rel, doc))
        else:
            loaded.add(rel, findings_of(attempt_check, doc, ()))


def _special(bundle: Bundle, rel: str) -> bool:
    """Is something other than a regular file there (a FIFO, a device)? Then reading it says what it is."""
    try:
        bundle.present(rel)
    except BundleError:
        return True
    return False


@lru_cache(maxsize=4)
def _schema_set(engine: str | None) -> SchemaSet:
    return SchemaSet(engine)  # compiled once per engine, not once per attempt


def check_pod_object(obj: object, engine: str | None = None) -> list[tuple[str, str, str]]:
    """Findings for one pod object outside a List (an attempt's manifest), same schema as pods.json items."""
    item = _schema_set(engine).list_checks(PODS.name)[1]
    if item.is_valid(obj):
        return []
    return findings_of(item, obj, ())
