"""A share of the work on the other core: a forked child runs one function and pipes its result back.

Why fork and not a process pool: the child must see the mapped pods.json, its split items and the compiled
schemas as they are (copy-on-write, nothing re-read or re-compiled, nothing pickled on the way in), and only
its slim result comes back. Why the standard library and not multiprocessing: one child, one function, one
result; multiprocessing's machinery (spawn, a resource tracker, queues) is all cost here.

A worker can make a run faster, never change its answer: when anything goes wrong in the child (an exception,
a signal, a result that does not arrive or does not unpickle), `result()` gives None and the caller does that
share itself. Off where fork is missing (Windows), on one CPU, and with GPU_TRIAGE_WORKERS=0.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
from typing import Callable

ENV = "GPU_TRIAGE_WORKERS"


def available() -> bool:
    """May a worker process be forked? fork must exist; GPU_TRIAGE_WORKERS=0 says no, 1 says yes;
    unset, yes when two CPUs are ours (the affinity mask: a container's CPU limit)."""
    if not hasattr(os, "fork"):
        return False
    said = os.environ.get(ENV, "").strip()
    if said:
        return said != "0"
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


class Child:
    """One forked child running `work()`; `result()` waits for what it returned (None if it failed)."""

    def __init__(self, work: Callable[[], object]) -> None:
        self._done = False
        self._value: object = None
        # The result goes through a memory file where Linux has one (the pipe then carries only its size): a pipe
        # moves a few megabytes 64 KB at a time, each a switch between the processes, while this one waits.
        self._file = os.memfd_create("gpu-triage-result", os.MFD_CLOEXEC) if hasattr(os, "memfd_create") else None
        _reap_finished()
        read, write = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            for fd in (read, write, self._file):
                if fd is not None:
                    os.close(fd)
            raise
        if pid == 0:  # the child: never returns into the caller's code
            try:
                os.close(read)
                _child_signals(parent)
                try:
                    import pickle

                    payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException:  # noqa: BLE001 - any failure: the parent redoes the share
                    payload = b""
                if payload and self._file is not None:
                    _write_all(self._file, payload)
                    payload = struct.pack("q", len(payload))  # last: a child killed before it gave nothing
                _write_all(write, payload)
                os.close(write)  # the parent reads on now, while this process's memory is let go
            finally:
                os._exit(0)  # no atexit, no flushing of buffers inherited from the parent
        os.close(write)
        import pickle  # noqa: F401 - imported while the child works, not before it is forked (result() loads)

        self._pid = pid
        self._read = read

    @property
    def done_fd(self) -> int:
        """Readable once the child is done (its result is coming) or gone: select() on it never consumes anything."""
        return self._read

    def result(self) -> object | None:
        """The child's return value, or None when it failed; waits for it once. Not for the child's exit: a child
        lets go of a large memory (its copy-on-write pages) for a hundredth of a second after its result is
        written. The payload alone says whether it is whole (the size comes last; a torn pickle does not load)."""
        if self._done:
            return self._value
        self._done = True
        chunks = []
        try:
            while True:
                chunk = os.read(self._read, 1 << 22)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._read)
            _reap_soon(self._pid)
        payload: bytes | mmap.mmap = b"".join(chunks)
        del chunks
        try:
            if self._file is not None and len(payload) == 8:
                size = struct.unpack("q", payload)[0]
                payload = mmap.mmap(self._file, size, access=mmap.ACCESS_READ) if size > 0 else b""
            if not payload:
                return None
            try:
                import pickle

                self._value = pickle.loads(payload)  # a torn payload (a killed child) does not load
            except Exception:  # noqa: BLE001 - a torn or odd payload: the caller redoes the share
                self._value = None
            return self._value
        finally:
            if isinstance(payload, mmap.mmap):
                payload.close()
            self._close_file()

    def _close_file(self) -> None:
        if self._file is not None:
            os.close(self._file)
            self._file = None

    def abandon(self) -> None:
        """Stop and reap the child (the run is ending for another reason)."""
        if self._done:
            return
        self._done = True
        self._close_file()
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._read)
        _reap(self._pid)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:1 << 20]):]


def _reap(pid: int) -> None:
    """Wait for a child's exit (it was killed); already reaped (SIGCHLD ignored: the kernel reaps) is fine."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


# Children whose result was taken before they had exited: reaped without waiting at the next fork, so a
# long-lived process (serve) keeps no zombies, and a command's exit takes the last one with it.
_EXITING: list[int] = []


def _reap_soon(pid: int) -> None:
    _EXITING.append(pid)
    _reap_finished()


def reap_exited() -> None:
    """Wait for every worker whose result was taken (the command is ending: they have written it and are exiting)."""
    while _EXITING:
        _reap(_EXITING.pop())


def _reap_finished() -> None:
    for pid in list(_EXITING):
        try:
            gone = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            gone = True
        if gone:
            _EXITING.remove(pid)


def _child_signals(parent: int) -> None:
    """Ctrl-C ends the worker quietly (the parent reports it), unless the parent ignores it (a background job);
    and the worker dies with its parent, so a killed analyzer never leaves it running (Linux prctl)."""
    try:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # forked from a thread other than the main one: keep what the parent had
        pass
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's own handlers still stop it (abandon)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def start(work: Callable[[], object]) -> Child | None:
    """A child running `work`, or None when no worker may be forked (the caller does it all)."""
    if not available():
        return None
    try:
        return Child(work)
    except OSError:  # no processes or pipes left: do it here
        return None


# This process's share (of the bytes in kubectl's layout, else of the items) when the caller gives none.
PARENT_SHARE = 0.47


# The work this process does besides reading its share, as the bytes of pods it could read instead (a pod's
# byte: parsed, checked, indexed). Fitted on the 2-core machine to the generated bundles (170 MB of pods beside
# 34 MB of other files: 0.4; 1.7 GB beside 340 MB: 0.47): the other files cost half a pod's byte each (kept
# whole, no index), the caller's `meanwhile` (importing the model and the rules) 20 MB, and the worker's scan
# for its items' boundaries a tenth of reading them. Noisy: within a few hundredths either way the runs differ
# by less than the machine does from run to run.
OTHER_BYTE = 0.5
MEANWHILE_BYTES = 20 << 20


# The worker takes from this process's share once done with its own (bundle/sharing.py), never the other way: the
# first split leans this way by this much, so a worker slower than the estimate still finishes first.
STEAL_MARGIN = 0.15


def parent_share(size: int, others: int, meanwhile: int = 0) -> float:
    """Where the worker's items start in a List of `size` bytes: the share that would end both processes together
    (after its share this process reads the other files, `others` bytes, and does `meanwhile` bytes' worth of
    other work, while the worker reads the rest and finds where its items start), leaning to this process."""
    if size <= 0:
        return PARENT_SHARE
    mine = OTHER_BYTE * others + meanwhile
    return min(0.8, max(0.3, (1.1 * size - mine) / (2.1 * size) + STEAL_MARGIN))


__all__ = ["Child", "ENV", "MEANWHILE_BYTES", "PARENT_SHARE", "STEAL_MARGIN", "available", "parent_share", "start"]
