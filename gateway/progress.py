"""Progress bars for the CLI's long jobs (replay, calibrate, eval, warmup, index rebuild, models prepare).

The library functions only take a plain `progress(done, total)` callback, so tests and other callers run
them without any bar; the CLI hands them a ProgressBar, which is such a callback. The bar is drawn on
stderr and only when stderr is a terminal: piped output and CI logs get no control characters.
"""
from __future__ import annotations

import os
import sys


class ProgressBar:
    """`with ProgressBar("replay", "requests", enabled) as bar: job(progress=bar)`.

    `plain_every`: without a terminal, a plain `  done/total unit` line on stderr every that many items
    (for jobs whose logs were already expected to show headway, such as `semcache eval` in CI)."""

    def __init__(self, description: str, unit: str, enabled: bool = True, plain_every: int | None = None):
        self.unit = unit
        self._progress = _rich_progress(unit) if enabled else None
        self._task = None
        self._description = description
        self._plain_every = plain_every if enabled and self._progress is None else None

    @property
    def live(self) -> bool:
        return self._progress is not None

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
            self._task = self._progress.add_task(self._description, total=None)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, done: int, total: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total)
            if done >= total:
                # the job usually prints its results right after its last item: finish the bar first, so
                # those lines land below it instead of under a bar that is still being redrawn
                self._progress.stop()
        elif self._plain_every and (done % self._plain_every == 0 or done == total):
            print(f"  {done}/{total} {self.unit}", file=sys.stderr, flush=True)

    def describe(self, description: str) -> None:
        """What the bar is doing now (models prepare: the step's name)."""
        if self._progress is not None:
            self._progress.update(self._task, description=description)

    def echo(self, text: str) -> None:
        """Print a line on stdout while the bar runs. The bar lives on stderr; a line written under it on
        the same terminal would be overwritten by its next redraw, so the bar steps aside and comes back."""
        if self._progress is None or not self._progress.live.is_started:
            print(text, flush=True)
            return
        live = self._progress.live
        live.transient = True             # erase the bar rather than leave a copy of it in the scrollback
        self._progress.stop()
        live.transient = False
        print(text, flush=True)
        self._progress.start()


def _draws_on_a_terminal(console) -> bool:
    """rich also calls a pipe a terminal under FORCE_COLOR, which CI runners often set for colour: a live bar
    there would fill the log with redraws. Only a real TTY, or an explicit TTY_COMPATIBLE=1, gets one."""
    if os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return console.is_terminal and bool(isatty and isatty())
    except ValueError:                    # stderr already closed
        return False


def _rich_progress(unit: str):
    try:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
    except ImportError:                   # rich is a dependency; an install without it still runs the jobs
        return None
    console = Console(stderr=True)
    if not _draws_on_a_terminal(console):
        return None
    # stdout stays the job's own: only stderr (warnings, eval's notes) is routed above the bar
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn(unit), TimeElapsedColumn(), TimeRemainingColumn(), console=console,
                    redirect_stdout=False, redirect_stderr=True)
