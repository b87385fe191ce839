"""Splitting a List written in kubectl's own layout by its byte runs: the fast split of a large file.

`kubectl get -o json` writes four spaces per level and sorted keys, so in pods.json every item is an object at
depth 2 and items are separated by one fixed run of bytes. Finding those runs is a scan in C, where decoding
1.6 GB into raw slices (bundle/streaming.py's split) is seconds of one core before any item is read. Nothing
is assumed unchecked: every byte is in the envelope or in an item and each is parsed by orjson; a file that
does not have the layout goes to the decoding split, and a valid file the layout split misread (a value at
an item's depth with other spacing) raises LayoutMisread and is read again without it (pipeline.load_streamed).
"""

from __future__ import annotations

import contextvars
import mmap

import orjson


class LayoutMisread(Exception):
    """A valid List whose kubectl-layout split did not give its items (pipeline.load_streamed reads it again)."""


# Off: every List is split by decoding it (bundle/streaming.py), as after a LayoutMisread.
LAYOUT_SPLIT = contextvars.ContextVar("layout_split", default=True)


# kubectl's layout of a List (`-o json`: four spaces per level, keys sorted, so `items` follows `apiVersion`):
# each item an object at depth 2, between `[\n        {` and `}\n    ]`, items separated by `},\n        {`.
# A raw newline cannot occur inside a JSON string, so these byte runs are structure wherever they appear.
_OPEN = b'\n    "items": [\n        {\n'
_SEP = b"\n        },\n        {\n"
_CLOSE = b"\n        }\n    ]"
_FIELD_INDENT = b" " * 12


def _separator(first_field: str) -> bytes:
    """The run between two items, with the next item's first field when the kind names it: CPython's search skips
    whole runs of indentation only when the needle ends in something else (three times faster on pods.json)."""
    if not first_field:
        return _SEP
    return _SEP + _FIELD_INDENT + b'"' + first_field.encode() + b'"'


class Slices:
    """The items of a List as (start, end) offsets into the mapped file: item i is read (copied out of the
    map) when asked for. Setting an item to None is a no-op: nothing is held per item."""

    def __init__(self, data: bytes | mmap.mmap, starts: list[int], ends: list[int]) -> None:
        self.data, self.starts, self.ends = data, starts, ends
        self._released = 0
        self.whole_parses: bool | None = None  # asked once an item does not parse (check_misread)

    def check_misread(self) -> None:
        """An item did not parse alone: LayoutMisread when the whole file parses (the split cut a value kubectl
        never writes at an item's depth), else the item itself is bad and the others are read."""
        if self.whole_parses is None:
            try:
                orjson.loads(memoryview(self.data))
                self.whole_parses = True
            except (orjson.JSONDecodeError, RecursionError, MemoryError):
                self.whole_parses = False
        if self.whole_parses:
            raise LayoutMisread

    def release(self, i: int) -> None:
        """Let the mapped pages before item i go from this process (its items there are read; the pages stay
        in the page cache): otherwise every page read would count as this process's memory until the end."""
        if not isinstance(self.data, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
            return
        end = self.starts[i] & ~(mmap.PAGESIZE - 1)
        if end > self._released:
            try:
                self.data.madvise(mmap.MADV_DONTNEED, self._released, end - self._released)
            except OSError:
                return
            self._released = end

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> bytes:
        return self.data[self.starts[i]:self.ends[i]]

    def __setitem__(self, i: int, value: None) -> None:
        pass


def _scan(data: bytes | mmap.mmap, first: int, close: int, sep: bytes) -> tuple[list[int], list[int]]:
    """The items' (starts, ends), from the item starting at `first` to the closing bracket at `close`."""
    find = data.find
    step = len(_SEP) - 2  # from a separator to the `{` opening the next item
    starts, ends = [first], []
    at = find(sep, first, close)
    while at >= 0:
        ends.append(at + 10)  # after the `}` closing an item
        starts.append(at + step)
        at = find(sep, at + step, close)
    ends.append(close + 10)
    return starts, ends


def layout_split(data: bytes | mmap.mmap, envelope_fields: tuple[str, ...], first_field: str = ""
                 ) -> tuple[dict, Slices] | None:
    """The split of a List in kubectl's own layout by its byte runs (a scan for a separator, in C, instead of
    decoding 1.6 GB into raw slices): the envelope (everything but the items, parsed as one small document)
    and the items' offsets. Every byte of the file is in the envelope or in an item, and each item is parsed
    by orjson when visited, so a malformed file is still found malformed (then read whole, same messages).
    `first_field` (catalog.Kind.first_field): the field every item starts with, searched with the separator.
    None when the file is not in that layout or its envelope is not the plain one: the decoding split (bundle/streaming.py) decides then."""
    head = data.find(_OPEN, 0, 4096)
    if head < 0 or data[:1] != b"{":
        return None
    first = head + len(_OPEN) - 2  # the first item's `{`
    close = data.rfind(_CLOSE)
    if close < first:
        return None
    try:
        envelope = orjson.loads(bytes(data[:first]) + b"]" + bytes(data[close + len(_CLOSE):]))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(envelope, dict) or envelope.get("items") != [] or set(envelope) - set(envelope_fields) - {"items"}:
        return None
    del envelope["items"]
    starts, ends = _scan(data, first, close, _separator(first_field))
    return envelope, Slices(data, starts, ends)
