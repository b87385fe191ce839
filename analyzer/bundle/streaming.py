"""A kubectl List read once, its items visited one at a time (issue 10).

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

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol

import msgspec
import orjson

from analyzer.bundle.catalog import BY_NAME, MANIFEST
from analyzer.bundle.engines import Compiled, SchemaSet, Violation, findings_of
from analyzer.bundle.reading import parse_json
from analyzer.errors import BundleError


class ItemSink(Protocol):
    """Where the items of one kind go, one at a time, in file order."""

    def add(self, path: str, item: dict) -> object:
        """A schema-valid item (`path`: its JSON path, `$.items[N]` or `$`)."""

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        """An item the schema refused, with its findings."""


Progress = Callable[[int, int], None]  # (items done, items in the file)


@dataclass
class KeepAll:
    """Keep every item (the small kinds: nodes, quotas, owners, DRA objects): a Document as before."""

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
    """Keep only the valid items a reader can use (events: the scheduler's and controllers' failures);
    `positions` remembers where each kept item was, so its JSON path stays right."""

    wanted: Callable[[dict], bool] = lambda item: True
    seen: int = 0

    def __post_init__(self) -> None:
        self.positions = []

    def add(self, path: str, item: dict) -> None:
        if self.wanted(item):
            self.items.append(item)
            self.positions.append(self.seen)  # type: ignore[union-attr]
        self.seen += 1

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        self.seen += 1  # its findings are already reported; no reader uses an invalid event


@dataclass(frozen=True, kw_only=True)
class Streamed:
    """What streaming one file gave: how many items, and whether it held a single object."""

    count: int
    single: bool


class _Hasher(threading.Thread):
    """sha256 on the other core while this one parses (hashlib releases the GIL on large buffers)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(daemon=True)
        self.data = data
        self.digest = ""

    def run(self) -> None:
        self.digest = hashlib.sha256(self.data).hexdigest()
        self.data = b""


class UnreadableItem(BundleError):
    """An item orjson refuses after earlier items were handed over: the caller takes back the findings
    recorded since the file began (the whole-document path reports only this error)."""


class EnvelopeError(BundleError):
    """The file parsed but is not a kubectl List (its findings are recorded): the manifest's size and
    checksum findings still apply to it."""


class _NotPlain(Exception):
    """The fast split does not take this file; the whole-document path reads it (same messages)."""


def _split(data: bytes) -> tuple[dict, list[msgspec.Raw]]:
    """(the top-level fields but `items`, parsed; the raw items), or _NotPlain."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise _NotPlain
    try:
        top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
        raw_items = top.pop("items", None)
        if raw_items is None:
            raise _NotPlain  # a single object, or a document that is not a List
        items = msgspec.json.decode(raw_items, type=list[msgspec.Raw])
        del raw_items
        envelope = {k: orjson.loads(memoryview(v)) for k, v in top.items()}
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, RecursionError, MemoryError):
        raise _NotPlain from None
    return envelope, items


def stream_list(*, data: bytes, file: str, kind: str, schemas: SchemaSet, sink: ItemSink,
                add: Callable[[str, list[tuple[str, str, str]]], list[Violation]],
                progress: Progress | None = None) -> Streamed:
    """Validate every item of one List and hand it to `sink`. `add(file, findings)` records findings
    (Loaded.add). Raises BundleError for a file that is not a usable List (the message of the whole path).
    The caller drops `data` afterwards; nothing here keeps it."""
    envelope_check, item_check = schemas.split(kind)  # type: ignore[misc]
    try:
        envelope, raws = _split(data)
    except _NotPlain:
        return _whole(data=data, file=file, kind=kind, envelope_check=envelope_check, item_check=item_check,
                      sink=sink, add=add, progress=progress)
    envelope["items"] = []  # the envelope schema only asks that items be an array
    _check_envelope(envelope_check, envelope, file, add)
    del envelope
    total = len(raws)
    is_valid = item_check.is_valid
    loads = orjson.loads
    parsed_ok = True
    # An item orjson refuses (a number out of range, bad UTF-8 msgspec let through) makes the file
    # unreadable, as orjson on the whole file would: its message is orjson's on the whole file.
    for i in range(total):
        raw = raws[i]
        raws[i] = None  # type: ignore[call-overload]  # the slice goes as soon as its item is read
        try:
            item = loads(memoryview(raw))
        except orjson.JSONDecodeError:
            parsed_ok = False
            break
        del raw
        path = f"$.items[{i}]"
        if is_valid(item):
            sink.add(path, item)
        else:
            sink.add_invalid(path, item, add(file, findings_of(item_check, item, ("items", i))))
        if progress is not None and not i & 1023:
            progress(i, total)
    if not parsed_ok:
        # orjson's own message for the whole file: the same words the whole-document path gives.
        try:
            parse_json(data, file)
        except BundleError as exc:
            raise UnreadableItem(exc.file, exc.message, exc.path) from None
        raise UnreadableItem(file, "not JSON: an item orjson cannot read", f"$.items[{i}]")
    if progress is not None:
        progress(total, total)
    return Streamed(count=total, single=False)


def _check_envelope(envelope_check: Compiled, doc: object, file: str,
                    add: Callable[[str, list[tuple[str, str, str]]], list[Violation]]) -> None:
    if not envelope_check.is_valid(doc):
        found = findings_of(envelope_check, doc, ())
        add(file, found)
        raise EnvelopeError(file, f"expected {found[0][1]}, found {found[0][2]}" if found else "not a kubectl List",
                            found[0][0] if found else "$")


def _whole(*, data: bytes, file: str, kind: str, envelope_check: Compiled, item_check: Compiled, sink: ItemSink,
           add: Callable[[str, list[tuple[str, str, str]]], list[Violation]], progress: Progress | None) -> Streamed:
    """The whole-document path (malformed or unusual files): parse all, then the same per-item loop."""
    doc = parse_json(data, file)
    single_kind = BY_NAME[kind].item_kind
    if isinstance(doc, dict) and doc.get("kind") == single_kind and "items" not in doc:
        items, single = [doc], True
    else:
        _check_envelope(envelope_check, doc, file, add)
        items, single = doc["items"], False  # type: ignore[index]
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


def start_hash(data: bytes) -> _Hasher:
    hasher = _Hasher(data)
    hasher.start()
    return hasher


def manifest_findings(rel: str, size: int, digest: str, index: tuple[str, int, dict] | None) -> list[tuple[str, str, str]]:
    """The manifest's size and sha256 for this file, as findings on manifest.json (empty when they agree)."""
    if index is None:
        return []
    section, i, entry = index
    base = f"$.{section}[{i}]"
    out = []
    if isinstance(entry.get("bytes"), int) and entry["bytes"] != size:
        out.append((base + ".bytes", f"{size} (the size of {rel})", str(entry["bytes"])))
    if isinstance(entry.get("sha256"), str) and entry["sha256"] != digest:
        out.append((base + ".sha256", f"{digest} (the sha256 of {rel})", entry["sha256"]))
    return out


__all__ = ["EnvelopeError", "ItemSink", "KeepAll", "UnreadableItem", "KeepIf", "MANIFEST", "Progress", "Streamed", "manifest_findings", "start_hash",
           "stream_list"]
