"""Classification shared with a worker (classify.each_verdict): the same answer, byte for byte, as one process.

A run with SHARE_MIN_TARGETS targets or more classifies its second half in a forked worker. Here the threshold
is lowered so the recordings and a generated bundle are shared: `analyze -o words` and `-o json` (its shared
funnels and fits written once each, by content) are what one process writes, a worker that fails changes
nothing, and a run that stops early leaves no worker behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer import classify
from analyzer.bundle import forked
from helpers import LAB, run_cli


def _run(bundle: Path, fmt: str, monkeypatch: pytest.MonkeyPatch, *, workers: str) -> str:
    with monkeypatch.context() as m:
        m.setenv(forked.ENV, workers)
        m.setattr(classify, "SHARE_MIN_TARGETS", 2)
        result = run_cli("analyze", bundle, "-o", fmt)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def _children(m: pytest.MonkeyPatch) -> list[int]:
    made = [0]
    real = forked.Child

    def counting(work):
        made[0] += 1
        return real(work)

    m.setattr(forked, "Child", counting)
    return made


@pytest.mark.parametrize("fmt", ["words", "json"])
def test_a_shared_run_writes_what_one_process_writes(fmt: str, generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _run(generated, fmt, monkeypatch, workers="0")
    with monkeypatch.context() as m:
        made = _children(m)
        shared = _run(generated, fmt, m, workers="1")
    assert made[0] == 1  # the classification's (pods.json is below the size a worker reads a share of)
    assert shared == one and one.strip()


def test_the_recording_with_seven_words_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(LAB, "json", monkeypatch, workers="1") == _run(LAB, "json", monkeypatch, workers="0")


def test_a_worker_that_fails_is_redone_here(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def lost(*args: object) -> list:
        raise RuntimeError("worker lost")

    one = _run(generated, "json", monkeypatch, workers="0")
    with monkeypatch.context() as m:
        m.setattr(classify, "_classify_share", lost)
        assert _run(generated, "json", m, workers="1") == one


def test_a_run_that_stops_early_leaves_no_worker(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.pipeline import Options, analyse, iter_verdicts

    children: list = []
    real = forked.Child

    def keeping(work):
        children.append(real(work))
        return children[-1]

    with monkeypatch.context() as m:
        m.setenv(forked.ENV, "1")
        m.setattr(classify, "SHARE_MIN_TARGETS", 2)
        m.setattr(forked, "Child", keeping)
        analysis = analyse(generated, Options(), classify=False)
        verdicts = iter_verdicts(analysis)
        next(verdicts)
        verdicts.close()  # the caller stops: the worker is ended and reaped
        analysis.bundle.close()
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # already reaped: no such child of this process
        os.waitpid(children[0]._pid, os.WNOHANG)


def test_a_slow_reader_of_the_answer_has_its_share_classified_by_the_worker(generated: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """This process writes as it classifies; when writing is slow (a slow terminal, a full pipe), the worker takes
    the later halves of this process's targets (bundle/sharing.py), and the answer is the one-process answer."""
    import time

    from analyzer.pipeline import Options, analyse, iter_verdicts

    def words(workers: str, pause: float) -> list[tuple[str, str]]:
        with monkeypatch.context() as m:
            m.setenv(forked.ENV, workers)
            m.setattr(classify, "SHARE_MIN_TARGETS", 2)
            analysis = analyse(generated, Options(), classify=False)
            out = []
            for v in iter_verdicts(analysis):
                out.append((v.target.key, v.word))
                time.sleep(pause)
            analysis.bundle.close()
        return out

    parts: list[list[tuple[int, int]]] = []
    real_result = forked.Child.result

    def recorded(self: forked.Child) -> object:
        got = real_result(self)
        if isinstance(got, list):
            parts.append([(p[0], p[1]) for p in got])
        return got

    one = words("0", 0.0)
    with monkeypatch.context() as m:
        m.setattr(forked.Child, "result", recorded)
        shared = words("1", 0.01)
    assert shared == one and len(one) > 20
    assert len(parts) == 1 and len(parts[0]) >= 2, parts  # its own targets and at least one half of this process's
