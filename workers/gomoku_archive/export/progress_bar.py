"""The export's progress bar on a terminal (``gomoku-archive export``): candidates done of the
month's total, games per second and the time left, drawn with rich."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from gomoku_archive.profile.months import Month

REDRAWS_PER_SECOND = 4


class ExportProgressBar:
    """The export's progress on a terminal: candidates done of total, and games/s."""

    def __init__(self, *, enabled: bool, console: Console | None = None) -> None:
        self._enabled = enabled
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} games/s"),
            TimeRemainingColumn(),
            transient=True,
            # No refresh thread waking to take the GIL from the export: ``advance`` redraws,
            # at most ``REDRAWS_PER_SECOND`` times a second, which is plenty to watch.
            auto_refresh=False,
            console=console,
        )
        self._task: TaskID | None = None
        self._t0 = time.monotonic()
        self._drawn = 0.0

    def __enter__(self) -> ExportProgressBar:
        if self._enabled:
            self._progress.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._enabled:
            self._progress.stop()

    def start(self, month: Month, candidates: int) -> None:
        """The month's candidates; again when the consistency check plans it anew: the same
        bar then counts to the new total, its rate from the first start."""
        if self._task is not None:
            self._progress.update(self._task, total=candidates)
        else:
            self._t0 = time.monotonic()
            self._task = self._progress.add_task(f"export {month}", total=candidates, rate="0")
        self._progress.refresh()

    def advance(self, candidates_done: int, games: int) -> None:
        if self._task is None:
            return
        now = time.monotonic()
        rate = games / max(now - self._t0, 1e-9)
        self._progress.update(self._task, completed=candidates_done, rate=f"{rate:,.0f}")
        if now - self._drawn >= 1 / REDRAWS_PER_SECOND:
            self._drawn = now
            self._progress.refresh()
