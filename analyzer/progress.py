"""A progress line on stderr for work that takes more than about a second.

Only when stderr is a terminal and --quiet was not given: never in pipes, never in a file, so
`-o json > out` and scripts see exactly what they saw before. rich draws it (typer already brings
rich) and erases it when done (transient). It appears only after DELAY seconds, so quick runs draw
nothing; GPU_TRIAGE_PROGRESS_DELAY changes that delay (the pseudo-terminal test sets 0).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

T = TypeVar("T")
DELAY = 1.0


def _delay() -> float:
    try:
        return float(os.environ.get("GPU_TRIAGE_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


class ProgressLine:
    """One line: the phase (the file being read, classifying), items done of total, items/s, time.
    `enabled=False` (a pipe, --quiet) makes every method a no-op that costs one attribute test."""

    def __init__(self, *, enabled: bool, delay: float | None = None) -> None:
        self.enabled = enabled
        self.delay = _delay() if delay is None else delay
        self.t0 = time.monotonic()
        self.started = False
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        if enabled:
            # rich only when a line may be drawn: its import is a tenth of a short run's start
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]} items/s"), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True, disable=False,
                                 # our stdout must stay ours: rich would otherwise route it through its console
                                 redirect_stdout=False, redirect_stderr=False)

    @classmethod
    def for_stderr(cls, *, quiet: bool) -> "ProgressLine":
        return cls(enabled=not quiet and sys.stderr.isatty())

    def _show(self) -> bool:
        if self._bar is None:
            return False
        if not self.started:
            if time.monotonic() - self.t0 < self.delay:
                return False
            self._bar.start()
            self.started = True
        return True

    def phase(self, description: str, total: int | None = None) -> Callable[[int, int], None] | None:
        """Start a phase; returns the (done, total) callback the loader calls, or None when disabled."""
        if self._bar is None:
            return None
        if self._task is not None:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(description, total=total, rate="-")
        began = time.monotonic()
        bar, task = self._bar, self._task

        def tick(done: int, of: int) -> None:
            if not self._show():
                return
            spent = time.monotonic() - began
            rate = f"{done / spent:,.0f}" if spent > 0 else "-"
            bar.update(task, completed=done, total=of, rate=rate)

        tick(0, total or 0)
        return tick

    def file(self, rel: str) -> Callable[[int, int], None] | None:
        return self.phase(f"reading {rel}")

    def counted(self, description: str, items: Iterable[T], total: int) -> Iterator[T]:
        """Pass `items` through, counting them on the line (classifying, writing)."""
        tick = self.phase(description, total)
        if tick is None:
            yield from items
            return
        for n, item in enumerate(items, 1):
            yield item
            if not n & 63:
                tick(n, total)
        tick(total, total)

    def close(self) -> None:
        if self._bar is not None and self.started:
            self._bar.stop()
        self._bar = None

    def __enter__(self) -> "ProgressLine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
