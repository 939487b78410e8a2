"""``gomoku-archive export``'s progress bar on a terminal: drawn by the export's own calls, a
few times a second at most, with no refresh thread of its own to take the GIL from the export."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from gomoku_archive.export.progress_bar import ExportProgressBar
from gomoku_archive.profile.months import Month


def test_the_bar_draws_progress_without_a_thread_and_at_most_a_few_times_a_second() -> None:
    out = io.StringIO()
    before = threading.active_count()
    with ExportProgressBar(
        enabled=True, console=Console(file=out, force_terminal=True, width=100)
    ) as bar:
        assert threading.active_count() == before, "no refresh thread"
        bar.start(Month(2026, 8), 100_000)
        drawn = out.getvalue()
        assert "export 2026-08" in drawn and "0/100000" in drawn
        for done in range(2_000, 100_001, 2_000):  # 50 reports in well under a quarter second
            bar.advance(done, done - 10)
        redraws = out.getvalue()[len(drawn) :].count("export 2026-08")
        assert redraws <= 1


def test_a_disabled_bar_writes_nothing() -> None:
    out = io.StringIO()
    with ExportProgressBar(enabled=False, console=Console(file=out, force_terminal=True)) as bar:
        bar.start(Month(2026, 8), 10)
        bar.advance(10, 9)
    assert out.getvalue() == ""


def test_a_new_plan_gives_the_same_bar_its_new_total() -> None:
    """The consistency check planned the month anew: one bar, counting to the new total."""
    out = io.StringIO()
    with ExportProgressBar(
        enabled=True, console=Console(file=out, force_terminal=True, width=100)
    ) as bar:
        bar.start(Month(2026, 8), 100)
        bar.start(Month(2026, 8), 101)
        last = out.getvalue().rsplit("export 2026-08", 1)[-1]
    assert "0/101" in last
    assert len(bar._progress.tasks) == 1
