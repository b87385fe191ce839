"""A file's sha256 on the other core while this one reads it (the manifest's checksums, bundle/changed.py)."""

from __future__ import annotations

import hashlib
import mmap
import threading


class Hasher:
    """sha256 of one file on the other core while this one splits and parses (hashlib releases the GIL on large
    buffers). In chunks, so it can stop (pause) when the reading fails and the file is about to be closed."""

    CHUNK = 32 << 20  # a pause waits for at most one chunk (about 15 ms); large, so the thread seldom asks for the GIL

    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data = data
        self.digest = ""
        self._sha = hashlib.sha256()
        self._at = 0
        self._stop = False
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        view = memoryview(self.data)
        drop = getattr(self.data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
        try:
            while self._at < len(view) and not self._stop:
                end = min(self._at + self.CHUNK, len(view))
                self._sha.update(view[self._at:end])
                if drop is not None:  # the hashed pages leave this process (they stay in the page cache)
                    try:
                        drop(mmap.MADV_DONTNEED, self._at, end - self._at)
                    except OSError:
                        drop = None
                self._at = end
        finally:
            view.release()

    def start(self) -> None:
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def pause(self) -> None:
        """Stop the thread after its chunk; join() then hashes the rest here."""
        self._stop = True
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def join(self) -> None:
        """Wait for the digest (hashing the rest here if the thread is paused)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if not self.digest:
            self._stop = False
            self._run()
            self.digest = self._sha.hexdigest()
            self.data = b""


def start_hash(data: bytes | mmap.mmap) -> Hasher:
    hasher = Hasher(data)
    hasher.start()
    return hasher


__all__ = ["Hasher", "start_hash"]
