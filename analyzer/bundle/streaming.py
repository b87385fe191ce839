"""A kubectl List read once, its items visited one at a time.

msgspec splits the file into raw byte slices (the top-level fields, then one slice per item) without
building a Python object for any of them; each item is then parsed by orjson, validated (jsonschema-rs
`is_valid`; the slow describe path only for an invalid item), handed to a sink, and dropped. So the
peak is the file's bytes plus one item plus what the sink keeps, not the whole parsed document.

Anything the fast split does not accept as a plain well-formed List (a BOM, bad UTF-8, a non-object,
`items` not an array, a single object, nesting deeper than msgspec goes, a number orjson refuses) is
read again by the whole-document path (parse_json + the same item loop), so every message
about malformed input stays word for word what it was.
"""

from __future__ import annotations

import mmap
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable, Protocol

import orjson

from analyzer.bundle import schemas as schema_files
from analyzer.bundle.catalog import BY_NAME, MANIFEST
from analyzer.bundle import layout
from analyzer.bundle.layout import LAYOUT_SPLIT, Slices, layout_split
from analyzer.bundle.engines import Compiled, SchemaSet, Violation, findings_of
from analyzer.bundle.item_errors import unreadable_item
from analyzer.bundle.reading import parse_json
from analyzer.errors import BundleError


Progress = Callable[[int, int], None]  # (items done, items in the file)
Add = Callable[[str, list[tuple[str, str, str]]], list[Violation]]  # Loaded.add: records findings, gives them back


class ItemSink(Protocol):
    """Where the items of one kind go, one at a time, in file order."""

    def add(self, path: str, item: dict) -> object:
        """A schema-valid item (`path`: its JSON path, `$.items[N]` or `$`)."""

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        """An item the schema refused, with its findings."""


@dataclass
class KeepAll:
    """Keep every item (the small kinds: nodes, quotas, DRA objects): a Document as before."""

    items: list = field(default_factory=list)
    invalid: dict[int, list[Violation]] = field(default_factory=dict)
    positions: list[int] | None = None  # set only by KeepIf

    def add(self, path: str, item: dict) -> None:
        self.items.append(item)

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        self.invalid[len(self.items)] = violations
        self.items.append(item)


@dataclass
class KeepIf(KeepAll):
    """Keep only the items a reader can use (events: the scheduler's and controllers' failures; owners: those an
    event or a queue names); `positions` remembers where each kept item was, so its JSON path stays right.
    `invalid_too`: an invalid item `wanted` accepts is kept too, with its findings (a reader names it invalid);
    `wanted` is then asked of whatever the item is, not only of a valid object."""

    wanted: Callable[[dict], bool] = lambda item: True
    invalid_too: bool = False
    seen: int = 0
    single: bool = False  # the file held one object (path "$"), not a List
    positions: list[int] = field(default_factory=list)

    def add(self, path: str, item: dict) -> None:
        if self.wanted(item):
            self.items.append(item)
            self.positions.append(self.seen)
        self.seen += 1
        self.single = path == "$"

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        # Its findings are already reported; kept only for a reader that names invalid items it needs.
        # type: ignore below: `wanted` takes the dict a valid item is; with invalid_too it is asked of any item, and
        # the predicates given then (pipeline._Wanted.owner) read what they are given defensively.
        if self.invalid_too and self.wanted(item):  # type: ignore[arg-type]
            self.invalid[len(self.items)] = violations
            self.items.append(item)
            self.positions.append(self.seen)
        self.seen += 1
        self.single = path == "$"


@dataclass(frozen=True, kw_only=True)
class Streamed:
    """What streaming one file gave: how many items, and whether it held a single object."""

    count: int
    single: bool


class EnvelopeError(BundleError):
    """The file parsed but is not a kubectl List (its findings are recorded): the manifest's size and
    checksum findings still apply to it."""


class _NotPlain(Exception):
    """The fast split does not take this file; the whole-document path reads it (same messages)."""


@lru_cache(maxsize=None)
def _envelope_fields(kind: str) -> tuple[str, ...] | None:
    """The top-level fields of a List besides `items`: the envelope's properties plus `metadata` (what kubectl
    writes). None when the envelope schema constrains fields it does not name (no List schema here does)."""
    parts = schema_files.envelope_and_item(kind)
    if parts is None:
        return None
    envelope = parts[0]
    if set(envelope) - {"$schema", "$id", "$defs", "title", "description", "type", "required", "properties"}:
        return None
    return tuple(dict.fromkeys([n for n in envelope.get("properties", {}) if n != "items"] + ["metadata"]))


@lru_cache(maxsize=None)
def _envelope_type(kind: str) -> tuple[type, tuple[str, ...]] | None:
    """A msgspec type that splits a List in one pass (one scan of 1.6 GB, not two): `items` as a list of raw
    item slices, and the envelope's fields (_envelope_fields) as raw slices, each then parsed by orjson as
    before. Any other top-level field fails the decode and the file is split in two passes keeping every field,
    each parsed by orjson. Known gap (in both splits): a top-level key given twice keeps its last value, as
    orjson does, but the earlier value is only checked for JSON syntax, not for what orjson alone refuses (a
    number like 1e400, bad UTF-8), so such a file is answered where the whole-document reading would call it
    unreadable; kubectl never writes a key twice."""
    import msgspec  # only for files not in kubectl's layout: the layout split needs none

    names = _envelope_fields(kind)
    if names is None:
        return None
    fields: list[tuple] = [(f"f{i}", msgspec.Raw, msgspec.Raw()) for i in range(len(names))]
    fields.append(("items", list[msgspec.Raw] | None, None))
    shape = msgspec.defstruct(f"{kind}_list", fields, rename={f"f{i}": n for i, n in enumerate(names)},
                              forbid_unknown_fields=True)
    return shape, names


def _decoding_split(data: bytes | mmap.mmap, kind: str) -> tuple[dict, list]:
    """(the top-level fields but `items`, parsed; the raw items, msgspec.Raw slices), or _NotPlain."""
    import msgspec

    if data[:3] == b"\xef\xbb\xbf":
        raise _NotPlain
    try:
        one_pass = _envelope_type(kind)
        top = None
        if one_pass is not None:
            shape, names = one_pass
            try:
                top = msgspec.json.decode(data, type=shape)
            except msgspec.ValidationError:
                top = None  # another top-level field, or items not an array: the two-pass split decides
        if top is not None:
            items = top.items  # type: ignore[attr-defined]  # msgspec made its type at run time (_envelope_type)
            fields = {name: getattr(top, f"f{i}") for i, name in enumerate(names)}
            fields = {name: raw for name, raw in fields.items() if len(raw)}  # an empty slice: the field is absent
        else:
            fields = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
            raw_items = fields.pop("items", None)
            items = None if raw_items is None else msgspec.json.decode(raw_items, type=list[msgspec.Raw])
            del raw_items
        if items is None:
            raise _NotPlain  # a single object, or a document that is not a List
        envelope = {k: orjson.loads(memoryview(v)) for k, v in fields.items()}
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, RecursionError, MemoryError):
        raise _NotPlain from None
    return envelope, items


def _items_alone(data: bytes | mmap.mmap, kind: str) -> tuple[dict, list | Slices] | None:
    """The items of a List that does not parse whole, found by either split, each to be parsed alone (None: no
    item boundary can be found). Called only once the whole parse has failed, so an item that does not parse
    is the file's own, never the split's."""
    found = layout.layout_split(data, _envelope_fields(kind) or ())  # the plain separator: exact, if slower
    if found is not None:
        found[1].whole_parses = False
        return found
    try:
        return _decoding_split(data, kind)
    except _NotPlain:
        return None


_split = _decoding_split  # the fast path's name for it (a test turns the fast path off, never the fallback)


def _unmap_pages(data: bytes | mmap.mmap) -> None:
    """The split touched every page of a mapped file; let them go from this process (they stay in the page
    cache, and each item's pages come back as it is read). Without this the whole file would count as this
    process's memory until its last item is read."""
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        try:
            data.madvise(mmap.MADV_DONTNEED)
        except OSError:
            pass


# A file not in kubectl's layout below this size is parsed whole by orjson (the whole-document path): splitting it
# would cost more (msgspec's import alone is 10 ms) than keeping it whole while its items are read.
WHOLE_BELOW = 1 << 20


def stream_list(*, data: bytes | mmap.mmap, file: str, kind: str, schemas: SchemaSet, sink: ItemSink, add: Add,
                progress: Progress | None = None) -> Streamed:
    """Validate every item of one List and hand it to `sink`, in file order. `add(file, findings)` records
    findings (Loaded.add). Raises BundleError for a file that is not a usable List (the message of the whole
    path). The caller drops `data` afterwards; nothing here keeps it."""
    envelope_check, item_check = schemas.list_checks(kind)
    try:
        names = _envelope_fields(kind)
        found = (layout_split(data, names, BY_NAME[kind].first_field)
                 if LAYOUT_SPLIT.get() and names is not None else None)
        if found is None and len(data) < WHOLE_BELOW:
            raise _NotPlain  # small: read whole (an empty List is not in the layout: kubectl writes `"items": []`)
        envelope, raws = found if found is not None else _split(data, kind)
    except _NotPlain:
        return _whole(data=data, file=file, kind=kind, envelope_check=envelope_check, item_check=item_check,
                      sink=sink, add=add, progress=progress)
    envelope["items"] = []  # the envelope schema only asks that items be an array
    check_envelope(envelope_check, envelope, file)
    del envelope
    _unmap_pages(data)
    total = len(raws)
    tick = None if progress is None else (lambda i: progress(i, total))
    visit(raws, 0, total, file=file, item_check=item_check, sink=sink, add=add, progress=tick)
    if progress is not None:
        progress(total, total)
    return Streamed(count=total, single=False)


def visit(raws: list | Slices, lo: int, hi: int, *, file: str, item_check: Compiled, sink: ItemSink, add: Add,
          progress: Callable[[int], None] | None = None) -> None:
    """Items lo..hi-1: parse, validate, hand to the sink, drop. An item orjson refuses is a finding at its
    path (bundle/item_errors.py), handed to the sink as an invalid item with what of it can be read; the
    others are read (LayoutMisread instead when the split, not the file, was wrong)."""
    is_valid = item_check.is_valid
    loads = orjson.loads
    release = raws.release if isinstance(raws, Slices) else None
    for i in range(lo, hi):
        raw = raws[i]
        raws[i] = None  # the slice goes as soon as its item is read
        path = f"$.items[{i}]"
        try:
            item = loads(memoryview(raw))
        except orjson.JSONDecodeError as exc:
            start = None
            if isinstance(raws, Slices):
                raws.check_misread()
                start = raws.starts[i]
            stub, finding = unreadable_item(raw, exc, path, start)
            sink.add_invalid(path, stub, add(file, [finding]))
            continue
        del raw
        if is_valid(item):
            sink.add(path, item)
        else:
            sink.add_invalid(path, item, add(file, findings_of(item_check, item, ("items", i))))
        if not i & 1023:
            if progress is not None:
                progress(i)
            if release is not None:
                release(i)


def check_envelope(envelope_check: Compiled, doc: object, file: str) -> None:
    if not envelope_check.is_valid(doc):
        found = findings_of(envelope_check, doc, ())
        # Only raised, not added as well: the file is reported once, as unreadable.
        raise EnvelopeError(file, f"expected {found[0][1]}, found {found[0][2]}" if found else "not a kubectl List",
                            found[0][0] if found else "$")


def _whole(*, data: bytes, file: str, kind: str, envelope_check: Compiled, item_check: Compiled, sink: ItemSink,
           add: Callable[[str, list[tuple[str, str, str]]], list[Violation]], progress: Progress | None) -> Streamed:
    """The whole-document path (malformed or unusual files): parse all, then the same per-item loop. A List
    that does not parse whole but whose items can be found (kubectl's layout) is read item by item: only the
    items that do not parse are lost, each a finding."""
    try:
        doc = parse_json(data, file)
    except BundleError:
        found = _items_alone(data, kind)
        if found is None:
            raise  # no item boundary: the file is unreadable
        envelope, raws = found
        envelope["items"] = []
        check_envelope(envelope_check, envelope, file)
        visit(raws, 0, len(raws), file=file, item_check=item_check, sink=sink, add=add,
              progress=None if progress is None else (lambda i: progress(i, len(raws))))
        return Streamed(count=len(raws), single=False)
    single_kind = BY_NAME[kind].item_kind
    if isinstance(doc, dict) and doc.get("kind") == single_kind and "items" not in doc:
        items, single = [doc], True
    else:
        check_envelope(envelope_check, doc, file)
        assert isinstance(doc, dict)  # the envelope schema passed: an object with an `items` array
        items, single = doc["items"], False
    del doc
    is_valid = item_check.is_valid
    total = len(items)
    for i in range(total):
        item = items[i]
        items[i] = None
        path = "$" if single else f"$.items[{i}]"
        if is_valid(item):
            sink.add(path, item)
        else:
            prefix: tuple = () if single else ("items", i)
            sink.add_invalid(path, item, add(file, findings_of(item_check, item, prefix)))
        if progress is not None and not i & 1023:
            progress(i, total)
    if progress is not None:
        progress(total, total)
    return Streamed(count=total, single=single)


__all__ = ["Add", "EnvelopeError", "ItemSink", "KeepAll", "KeepIf", "MANIFEST", "Progress", "Streamed", "stream_list",
           "visit"]
