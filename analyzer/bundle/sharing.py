"""One List's items read by two processes that finish together (pods.json on a large bundle).

This process forks a worker after a first split of the items (forked.parent_share): the worker reads the items
after it at once; this process reads the ones before it last, after the other files and its own imports, and
claims them a chunk at a time. A worker that is done takes the later half of what this process has left, again
and again (work stealing): the two finish within a chunk of each other whatever else the machine runs, where a
fixed split left one of them idle for a third of a second in most runs on the 2-core machine. Each range the
worker reads becomes a part of its own (Splittable.part); the parts come back with their ranges and are merged
in file order after this process's own items, so the answer is the one-pass answer; a part that cannot be merged
exactly, and everything a failed worker had, are read here.
"""

from __future__ import annotations

import array
import mmap
import os
import select
import struct
from typing import Callable, Protocol

import orjson

from analyzer.bundle import forked
from analyzer.bundle.engines import Compiled, Violation, findings_of, violations
from analyzer.bundle.item_errors import unreadable_item
from analyzer.bundle.layout import Slices

Add = Callable[[str, list[tuple[str, str, str]]], list[Violation]]


class ItemSink(Protocol):
    """Where the items of one kind go, one at a time, in file order."""

    def add(self, path: str, item: dict) -> object:
        """A schema-valid item (`path`: its JSON path, `$.items[N]` or `$`)."""

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        """An item the schema refused, with its findings."""


class Splittable(ItemSink, Protocol):
    """A sink whose work can be shared with a worker process (pods: model.pods_index.PodsIndex). The worker fills
    `part()`, a new empty sink alike, with a range of the items and sends back its `summary()`; `merge(summary)`
    adds it as if those items had come here after this sink's own, or returns False, changing nothing, when
    that cannot be exact (a pod in both, say); then they are read here."""

    def part(self) -> "Splittable": ...

    def summary(self) -> object: ...

    def merge(self, summary: object) -> bool: ...


def visit(raws: list | Slices, lo: int, hi: int, *, file: str, item_check: Compiled, sink: ItemSink, add: Add,
          progress: Callable[[int], None] | None = None) -> None:
    """Items lo..hi-1: parse, validate, hand to the sink, drop. An item orjson refuses is a finding at its
    path (bundle/item_errors.py), handed to the sink as an invalid item with what of it can be read; the
    others are read (LayoutMisread instead when the split, not the file, was wrong)."""
    is_valid = item_check.is_valid
    loads = orjson.loads
    release = None
    if isinstance(raws, Slices):
        release = raws.release
        raws.begin(lo)
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


class Shares:
    """This process's items not yet read, [next, end), in a page both processes see. This process alone moves
    `next` (claim), the worker alone moves `end` (steal), each decision under one lock: a token in a pipe, held
    by whoever read it, released by writing it back. A worker that dies holding it cannot hang this process:
    once the worker's result pipe is readable (it is done, or gone) nothing else contends."""

    _NEXT, _END = 0, 8

    def __init__(self, end: int, start: int = 0) -> None:
        self._page = mmap.mmap(-1, mmap.PAGESIZE)  # anonymous, shared: the forked worker sees the same page
        self._token, self._give = os.pipe()
        os.set_blocking(self._token, False)
        os.write(self._give, b".")
        struct.pack_into("qq", self._page, 0, start, end)
        self.worker_done: int | None = None  # this process's end of the worker's result pipe, once forked
        self._alone = False

    def _get(self, at: int) -> int:
        return struct.unpack_from("q", self._page, at)[0]

    def _acquire(self) -> bool:
        """Take the token (False: the worker is done, there is nobody to exclude)."""
        while not self._alone:
            try:
                os.read(self._token, 1)
                return True
            except BlockingIOError:
                pass
            watch = [self._token] if self.worker_done is None else [self._token, self.worker_done]
            ready = select.select(watch, [], [])[0]
            if self._token not in ready:
                self._alone = True
        return False

    def _release(self) -> None:
        os.write(self._give, b".")

    def claim(self, n: int) -> tuple[int, int]:
        """This process's next n items (fewer at the end): (lo, hi), empty when none are left."""
        held = self._acquire()
        try:
            lo, end = self._get(self._NEXT), self._get(self._END)
            hi = min(lo + n, end)
            struct.pack_into("q", self._page, self._NEXT, hi)
            return lo, hi
        finally:
            if held:
                self._release()

    def steal(self, least: int) -> tuple[int, int]:
        """The worker's: the later half of what this process has left, or an empty range when less than `least`."""
        held = self._acquire()
        try:
            lo, end = self._get(self._NEXT), self._get(self._END)
            if end - lo < least:
                return end, end
            mid = end - (end - lo) // 2
            struct.pack_into("q", self._page, self._END, mid)
            return mid, end
        finally:
            if held:
                self._release()

    def end(self) -> int:
        """Where this process's items stop (final once the worker is done)."""
        return self._get(self._END)

    def begin(self, end: int) -> None:
        """This process's items, once it has found them: only before the worker is told (Published), so the
        worker, which alone moves `end` afterwards, has not begun to take from them."""
        struct.pack_into("q", self._page, self._END, end)

    def close(self) -> None:
        _close(self._page, self._token, self._give)


class Published:
    """The starts of this process's items, found after the fork while the worker finds its own (layout.Slices.cut),
    handed to the worker in memory both see, with a byte in a pipe to say they are there."""

    def __init__(self, most: int) -> None:
        self._page = mmap.mmap(-1, 8 * (most + 1))  # pages are made as they are written: `most` costs nothing
        self._ready, self._say = os.pipe()
        self._most = most

    def publish(self, starts: list[int]) -> None:
        if len(starts) > self._most:  # cannot happen (most is a bound): the worker fails, this process reads all
            struct.pack_into("q", self._page, 0, -1)
        else:
            self._page[8:8 + 8 * len(starts)] = array.array("q", starts).tobytes()
            struct.pack_into("q", self._page, 0, len(starts))
        os.write(self._say, b".")

    def wait(self) -> list[int]:
        """(the worker) The starts, once published; raises when they could not be."""
        os.read(self._ready, 1)
        count = struct.unpack_from("q", self._page, 0)[0]
        if count < 0:
            raise RuntimeError("the parent's item starts did not fit")
        return array.array("q", self._page[8:8 + 8 * count]).tolist()

    def close(self) -> None:
        _close(self._page, self._ready, self._say)


def _close(page: mmap.mmap, *fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    page.close()


def chunk_of(items: int) -> int:
    """Items claimed at a time: a few milliseconds of reading, so the two finish within that of each other, and
    a few hundred lock round trips for the largest files."""
    return max(32, min(512, items // 64))


def worker_share(raws: list | Slices, lo: int, *, file: str, item_check: Compiled, sink: Splittable,
                 shares: Shares, least: int, cut: int | None = None, published: Published | None = None
                 ) -> tuple[list[tuple], int]:
    """In the worker: items lo.., then halves taken from the end of the parent's, each into a fresh part.
    With `cut` (kubectl's layout): the items after that separator, found here while the parent finds its own
    and publishes their starts; lo is then the parent's count. ([(lo, hi, summary, findings of each invalid
    item)] in file order, the List's item count)."""
    if isinstance(raws, Slices) and cut is not None and published is not None:
        mine = raws.after(cut)
        before = published.wait()
        mine.behind(before, cut)
        raws, lo = mine, len(before)
        least = max(least, chunk_of(lo))
        raws.drop_pages()  # the scanned pages are not this worker's memory: each item's come back as it is read
    parts = []
    hi = len(raws)
    while lo < hi:
        part = sink.part()
        found: list[list[tuple[str, str, str]]] = []

        def add(file: str, triples: list[tuple[str, str, str]], found: list = found) -> list[Violation]:
            found.append(triples)
            return violations(file, triples)

        visit(raws, lo, hi, file=file, item_check=item_check, sink=part, add=add)
        parts.append((lo, hi, part.summary(), found))
        lo, hi = shares.steal(least)
    parts.sort(key=lambda p: p[0])
    return parts, len(raws)


class Pending:
    """One List shared with a worker: `finish()` reads this process's items (a chunk at a time, the worker taking
    from their end), then merges the worker's parts, or reads them here when it failed; it sets `count` (the
    List's items). `abandon()` stops the worker."""

    def __init__(self, *, child: forked.Child, shares: Shares, data: bytes | mmap.mmap, raws: list | Slices,
                 file: str, item_check: Compiled, sink: Splittable, add: Add, chunk: int, total: int) -> None:
        self.child, self.shares, self.data, self.raws = child, shares, data, raws
        self.file, self.item_check, self.sink, self.add, self.chunk = file, item_check, sink, add, chunk
        self.total = total  # the List's items, estimated when the split stopped part way (the progress line's)
        shares.worker_done = child.done_fd
        self.count = 0

    def _here(self, lo: int, hi: int, progress: Callable[[int], None] | None = None) -> None:
        if isinstance(self.raws, Slices) and hi > len(self.raws):
            self.raws.complete()  # the worker's items, read here: the split stopped before them
        visit(self.raws, lo, hi, file=self.file, item_check=self.item_check, sink=self.sink, add=self.add,
              progress=progress)

    def finish(self, progress: Callable[[int, int], None] | None = None) -> None:
        total = self.total
        tick = None if progress is None else (lambda i: progress(min(i, total), total))
        try:
            while True:
                lo, hi = self.shares.claim(self.chunk)
                if lo >= hi:
                    break
                self._here(lo, hi, tick)
            at = self.shares.end()
            got = self.child.result()
            parts, count = got if got is not None else ([], 0)  # type: ignore[misc]
            if not tiles(parts, at, count):
                parts = []  # not the items after this process's (cannot happen): read them here
            for lo, hi, summary, found in parts:
                if self.sink.merge(summary):
                    for triples in found:
                        self.add(self.file, triples)
                else:
                    self._here(lo, hi)
            if not parts:
                if isinstance(self.raws, Slices):
                    self.raws.complete()
                self._here(at, len(self.raws))
                count = len(self.raws)
            self.count = count
            if progress is not None:
                progress(count, count)
        except BaseException:
            self.child.abandon()
            raise
        finally:
            self.shares.close()
            self.data = self.raws = None  # type: ignore[assignment]

    def abandon(self) -> None:
        self.child.abandon()
        self.shares.close()
        self.data = self.raws = None  # type: ignore[assignment]


def tiles(parts: list, start: int, end: int) -> bool:
    """Do the parts' ranges (each part's first two values, lo and hi) follow one another from `start` to `end`?
    What a worker sends back is checked so before it is used: anything else, which cannot happen, is read here
    instead."""
    lo = start
    for p in parts:
        if p[0] != lo:
            return False
        lo = p[1]
    return lo == end


__all__ = ["Add", "ItemSink", "Pending", "Published", "Shares", "Splittable", "chunk_of", "tiles", "visit",
           "worker_share"]
