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
    map) when asked for. Setting an item to None is a no-op: nothing is held per item.

    A split may stop part way (scan_until): then only the items before the stop are known, the next one's start
    is the last of `starts`, and `complete()` scans the rest. So two processes sharing a List each find their
    own items on their own core (cut, scan_until, after, behind), instead of one finding all before the fork."""

    def __init__(self, data: bytes | mmap.mmap, starts: list[int], ends: list[int], close: int,
                 sep: bytes = _SEP) -> None:
        self.data, self.starts, self.ends, self.close, self.sep = data, starts, ends, close, sep
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

    def begin(self, i: int) -> None:
        """Reading goes on from item i: when that is before the pages already let go (a range taken from the other
        process's share), let go from there on."""
        if self.starts[i] < self._released:
            self._released = self.starts[i] & ~(mmap.PAGESIZE - 1)

    def drop_pages(self) -> None:
        """Let every mapped page go from this process (after a scan: each item's pages come back as it is read)."""
        if isinstance(self.data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            try:
                self.data.madvise(mmap.MADV_DONTNEED)
            except OSError:
                pass

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

    @property
    def partial(self) -> bool:
        return len(self.starts) > len(self.ends)

    def covered(self) -> float:
        """The share of the items' bytes the split has gone through (1.0 when complete)."""
        if not self.partial:
            return 1.0
        first = self.starts[0]
        return (self.starts[-1] - first) / max(1, self.close - first)

    def complete(self) -> None:
        """Find the items after the stop (nothing to do when the split went to the end)."""
        if self.partial:
            _scan(self.data, self.starts, self.ends, self.close, None, self.sep)

    # -- one List scanned by two processes at once (bundle/streaming.py's worker): each finds its own items --------
    def cut(self, share: float) -> int | None:
        """The separator at or after `share` of the items' bytes, where a worker's items begin (None: no item
        starts after that point). Asked of a split that found nothing yet (layout_split with scan=False)."""
        first = self.starts[0]
        at = self.data.find(self.sep, first + int((self.close - first) * share), self.close)
        return at if at >= 0 else None

    def scan_until(self, cut: int) -> None:
        """This process's items: those before the separator at `cut` (the next item's start kept, its end not)."""
        _scan(self.data, self.starts, self.ends, self.close, cut, self.sep)

    def after(self, cut: int) -> "Slices":
        """The items after the separator at `cut`, found here, numbered from 0 until `behind` numbers them."""
        starts: list[int] = [cut + len(_SEP) - 2]
        ends: list[int] = []
        _scan(self.data, starts, ends, self.close, None, self.sep)
        return Slices(self.data, starts, ends, self.close, self.sep)

    def behind(self, before: list[int], cut: int) -> None:
        """Put first the items before `cut`, given by their starts (another process found them): each ends where
        the separator before the next one begins, the last at `cut`."""
        step = len(_SEP) - 2
        self.ends[:0] = [s - step + 10 for s in before[1:]] + [cut + 10] if before else []
        self.starts[:0] = before

    def most_before(self, cut: int) -> int:
        """An upper bound of the items before `cut`: separators do not overlap."""
        return (cut - self.starts[0]) // len(self.sep) + 1

    def estimate(self, sample: int = 1 << 20) -> int:
        """About how many items there are, from the separators in the first `sample` bytes (exact when that is all)."""
        first = self.starts[0]
        end = min(self.close, first + sample)
        found, at = 0, self.data.find(self.sep, first, end)
        while at >= 0:  # an mmap has find, not count
            found += 1
            at = self.data.find(self.sep, at + 1, end)
        if first + sample >= self.close:
            return found + 1
        return int(found * (self.close - first) / sample) + 1


def _scan(data: bytes | mmap.mmap, starts: list[int], ends: list[int], close: int, upto: int | None,
          sep: bytes = _SEP) -> None:
    """Extend starts/ends from the item starting at starts[-1]; with `upto`, stop once an item starts at or
    after that offset (its start kept, its end not yet known)."""
    find = data.find
    step = len(_SEP) - 2  # from a separator to the `{` opening the next item
    at = find(sep, starts[-1], close)
    while at >= 0:
        ends.append(at + 10)  # after the `}` closing an item
        starts.append(at + step)
        if upto is not None and at >= upto:
            return
        at = find(sep, at + step, close)
    ends.append(close + 10)


def layout_split(data: bytes | mmap.mmap, envelope_fields: tuple[str, ...], first_field: str = "",
                 scan: bool = True) -> tuple[dict, Slices] | None:
    """The split of a List in kubectl's own layout by its byte runs (a scan for a separator, in C, instead of
    decoding 1.6 GB into raw slices): the envelope (everything but the items, parsed as one small document)
    and the items' offsets. Every byte of the file is in the envelope or in an item, and each item is parsed
    by orjson when visited, so a malformed file is still found malformed (then read whole, same messages).
    `first_field` (catalog.Kind.first_field): the field every item starts with, searched with the separator.
    `scan=False`: find no item yet (Slices.cut, scan_until and after share the scan between two processes).
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
    starts: list[int] = [first]
    ends: list[int] = []
    sep = _separator(first_field)
    if scan:
        _scan(data, starts, ends, close, None, sep)
    return envelope, Slices(data, starts, ends, close, sep)
