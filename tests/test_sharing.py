"""A List shared by two processes (bundle/sharing.py): the worker takes from the end of this process's items.

Whatever the timing, every item is read exactly once, by one process, and the answer is the one-pass answer; a
worker that dies, even holding the lock, neither hangs this process nor loses an item.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from test_streaming import _shared, _streamed

from analyzer import pipeline
from analyzer.bundle import forked
from analyzer.bundle.sharing import Shares


@pytest.fixture
def alarm():
    """A hang fails the test instead of the suite."""
    def stop(*_: object) -> None:
        raise TimeoutError("the parent waited for a lock nobody will give back")

    before = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


def _claim_all(shares: Shares, n: int) -> list[tuple[int, int]]:
    mine = []
    while True:
        lo, hi = shares.claim(n)
        if lo >= hi:
            return mine
        mine.append((lo, hi))


def test_claims_and_steals_never_overlap_and_leave_nothing_out(alarm: None) -> None:
    items = 200_000
    shares = Shares(items)

    def thief() -> list[tuple[int, int]]:
        taken = []
        while True:
            lo, hi = shares.steal(1)
            if lo >= hi:
                return taken
            taken.append((lo, hi))

    child = forked.Child(thief)
    shares.worker_done = child.done_fd
    mine = _claim_all(shares, 3)
    theirs = child.result()
    shares.close()
    assert theirs, "the worker took nothing"
    covered = sorted(mine + theirs)  # type: ignore[operator]
    assert covered[0][0] == 0 and covered[-1][1] == items
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))  # no gap, no item read twice


def test_a_worker_that_dies_holding_the_lock_does_not_hang_this_process(alarm: None) -> None:
    shares = Shares(1_000)

    def die_holding_it() -> None:
        shares._acquire()
        os._exit(1)  # killed between taking the token and giving it back

    child = forked.Child(die_holding_it)
    shares.worker_done = child.done_fd
    time.sleep(0.2)  # the child has taken the token by now
    got = _claim_all(shares, 100)
    assert child.result() is None
    shares.close()
    assert got[0][0] == 0 and got[-1][1] == 1_000  # everything was left to this process


def test_a_parent_slow_to_reach_its_share_has_most_of_it_read_by_the_worker(
        generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent reads its own pods last (after the other files and its imports); held up there, its share is
    taken from the end, half at a time, by the worker, and the answer is still the one-pass answer."""
    with monkeypatch.context() as m:
        m.setenv(forked.ENV, "0")
        want = _streamed(generated, strict=False)
    parts: list[list[tuple]] = []
    real_result = forked.Child.result

    def recorded(self: forked.Child) -> object:
        got = real_result(self)
        if isinstance(got, tuple) and isinstance(got[0], list):
            parts.append([(p[0], p[1]) for p in got[0]])
        return got

    real_rest = pipeline._the_rest

    def slow_rest() -> None:
        time.sleep(1.0)  # a busy machine, or many other files
        real_rest()

    with monkeypatch.context() as m:
        m.setattr(forked.Child, "result", recorded)
        m.setattr(pipeline, "_the_rest", slow_rest)
        got = _shared(monkeypatch, generated, strict=False)
    assert got == want and got["verdicts"]
    assert len(parts) == 1 and len(parts[0]) >= 3, parts  # its own items and at least two halves of the parent's
    first, total = parts[0][0][0], parts[0][-1][1]
    assert first < total // 8  # the parent read less than an eighth itself


def test_a_workers_parts_are_used_only_when_they_follow_one_another_to_the_end():
    from analyzer.bundle.sharing import tiles

    assert tiles([(5, 8, "a"), (8, 20, "b")], 5, 20)
    assert not tiles([(5, 8, "a"), (9, 20, "b")], 5, 20)  # an item nobody read
    assert not tiles([(5, 8, "a")], 5, 20)  # the end missing
    assert tiles([], 20, 20) and not tiles([], 5, 20)


def test_a_workers_part_whose_rows_are_not_of_their_types_is_refused_whole_and_changes_nothing():
    """merge() decodes a part straight to the rows' types; a part that does not decode so (no valid pod makes one)
    is refused (False: the parent reads those items itself), and nothing of it is kept."""
    import msgspec
    from conftest import lab_items

    from analyzer.model.pods_index import PodsIndex
    from analyzer.model.views import Findings

    pods = lab_items("pods")
    head = PodsIndex(file="pods.json", findings=Findings())
    tail = head.part()
    for i, p in enumerate(pods):
        (head if i < len(pods) // 2 else tail).add(f"$.items[{i}]", p)
    bulk, *rest = tail.summary()
    parts = msgspec.msgpack.decode(bulk)
    before = (set(head.keys), dict(head.usage), len(head.placed), len(head.targets))
    parts[8] = [{"app": 1} for _ in parts[8]]  # label values that are not strings
    assert parts[8], "the tail holds bound pods"
    assert not head.merge((msgspec.msgpack.encode(parts), *rest))
    assert (set(head.keys), dict(head.usage), len(head.placed), len(head.targets)) == before
    assert head.merge(tail.summary())  # the same part, as the worker sends it
    assert len(head.keys) == len(pods)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state from /proc")
def test_a_worker_whose_result_was_taken_is_never_left_a_zombie(alarm: None) -> None:
    """result() does not wait for the worker's exit (letting go of its copy-on-write memory takes a while): a worker
    that has not exited by then is reaped at the next fork without waiting, so a long-lived process (serve) keeps
    no zombies."""
    first = forked.Child(lambda: 42)
    assert first.result() == 42
    while _state(first._pid) not in ("Z", "gone"):  # exited (reaped already, or waiting to be)
        time.sleep(0.01)
    second = forked.Child(lambda: 7)
    with pytest.raises(ChildProcessError):  # reaped by now: no such child of this process
        os.waitpid(first._pid, os.WNOHANG)
    assert second.result() == 7
    forked.reap_exited()  # what the command does before it exits: the worker's usage counts in its own
    with pytest.raises(ChildProcessError):
        os.waitpid(second._pid, os.WNOHANG)
