"""The freshness numbers: unpublished closed months, the oldest one's age, the last publication
and months whose latest export failed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.catalog.freshness import Freshness, compute_freshness, latest_export_failed
from gomoku_archive.profile.months import Month

FIRST = Month(2026, 8)
T = datetime(2026, 11, 1, tzinfo=UTC)
"""2026-10 closes at T: August, September and October are closed from then on."""


@dataclass(frozen=True)
class M:
    month: str
    published_at: datetime | None = None
    last_failed_at: datetime | None = None


@dataclass(frozen=True)
class Stats:
    months: tuple[M, ...]
    last_published_at: datetime | None = None


def at(days: float = 0, hours: float = 0) -> datetime:
    return T + timedelta(days=days, hours=hours)


SEPT_CLOSED = datetime(2026, 10, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("months", "now", "unpublished", "oldest_age"),
    [
        # Nothing at all: every closed month counts, the oldest (August) closed on 1 September.
        ((), at(hours=1), 3, (at(hours=1) - datetime(2026, 9, 1, tzinfo=UTC)).total_seconds()),
        # Everything closed is published; the open month never counts.
        (
            (M("2026-08", at(-60)), M("2026-09", at(-30)), M("2026-10", at(hours=1))),
            at(hours=2),
            0,
            0.0,
        ),
        # October closed an hour ago and is not published yet.
        ((M("2026-08", at(-60)), M("2026-09", at(-30))), at(hours=1), 1, 3600.0),
        # Just before October closes it is still open: nothing missing.
        ((M("2026-08", at(-60)), M("2026-09", at(-30))), at(hours=-0.001), 0, 0.0),
        # A hole in the middle: September is the oldest missing one.
        (
            (M("2026-08", at(-60)), M("2026-10", at(hours=3))),
            at(hours=4),
            1,
            (at(hours=4) - SEPT_CLOSED).total_seconds(),
        ),
        # A failed month is still unpublished.
        (
            (M("2026-08", at(-60)), M("2026-09", None, at(-20)), M("2026-10", at(1))),
            at(2),
            1,
            (at(2) - SEPT_CLOSED).total_seconds(),
        ),
        # Months before EXPORT_FIRST_MONTH are neither needed nor counted.
        (
            (M("2026-07", None), M("2026-08", at(-60)), M("2026-09", at(-30)), M("2026-10", at(0))),
            at(1),
            0,
            0.0,
        ),
    ],
)
def test_unpublished_closed_months(
    months: tuple[M, ...], now: datetime, unpublished: int, oldest_age: float
) -> None:
    result = compute_freshness(Stats(months), first=FIRST, now=now)
    assert result.unpublished_closed_months == unpublished
    assert result.oldest_unpublished_age_seconds == pytest.approx(oldest_age)


@pytest.mark.parametrize(
    ("month", "failed"),
    [
        (M("2026-08"), False),
        (M("2026-08", published_at=at(0)), False),
        (M("2026-08", last_failed_at=at(0)), True),
        # A failure after the publication (a forced rebuild that failed) is the latest word.
        (M("2026-08", published_at=at(0), last_failed_at=at(1)), True),
        # A failure the publication came after is history.
        (M("2026-08", published_at=at(1), last_failed_at=at(0)), False),
    ],
)
def test_latest_export_failed(month: M, failed: bool) -> None:
    assert latest_export_failed(month) is failed


def test_failed_months_count_every_month_whose_latest_export_failed() -> None:
    stats = Stats(
        (
            M("2026-07", None, at(-90)),  # before the first month: still a failing export
            M("2026-08", at(-60), at(-70)),
            M("2026-09", None, at(-20)),
            M("2026-10", at(0), at(1)),
        ),
        last_published_at=at(0),
    )
    assert compute_freshness(stats, first=FIRST, now=at(2)) == Freshness(
        unpublished_closed_months=1,
        oldest_unpublished_age_seconds=(at(2) - SEPT_CLOSED).total_seconds(),
        last_published_at=at(0),
        failed_months=3,
    )


def test_a_first_month_in_the_future_needs_nothing() -> None:
    result = compute_freshness(Stats(()), first=Month(2027, 1), now=at(0))
    assert (result.unpublished_closed_months, result.oldest_unpublished_age_seconds) == (0, 0.0)
    assert result.last_published_at is None
