"""Is the archive up to date? The numbers behind the API's freshness gauges (and the Helm
chart's alerts), computed from the archive tables' summary (``db.archive_freshness``) and the clock.

Pure: the API reads the summary in the background and hands it here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gomoku_archive.profile.months import Month, closed_months


class MonthFacts(Protocol):
    """``gomoku_archive.db.archive_freshness.MonthFreshnessFacts``."""

    @property
    def month(self) -> str: ...
    @property
    def published_at(self) -> datetime | None: ...
    @property
    def last_failed_at(self) -> datetime | None: ...


class StatsFacts(Protocol):
    """``gomoku_archive.db.archive_freshness.ArchiveFreshnessFacts``."""

    @property
    def months(self) -> Sequence[MonthFacts]: ...
    @property
    def last_published_at(self) -> datetime | None: ...


@dataclass(frozen=True, slots=True)
class Freshness:
    unpublished_closed_months: int
    """Closed months from ``EXPORT_FIRST_MONTH`` on without a published archive."""
    oldest_unpublished_age_seconds: float
    """Seconds since the oldest of them closed (the first instant of the next month); 0 when
    every closed month is published."""
    last_published_at: datetime | None
    """The newest publication of any file; None before the first."""
    failed_months: int
    """Months whose latest export failed: a failed build newer than the month's published file
    (or with none), the rule ``/ops/`` uses for a month's "last failure"."""


def latest_export_failed(month: MonthFacts) -> bool:
    if month.last_failed_at is None:
        return False
    return month.published_at is None or month.last_failed_at > month.published_at


def compute_freshness(stats: StatsFacts, *, first: Month, now: datetime) -> Freshness:
    published = {m.month for m in stats.months if m.published_at is not None}
    unpublished = [m for m in closed_months(first, now) if str(m) not in published]
    oldest_age = (now - unpublished[0].end).total_seconds() if unpublished else 0.0
    return Freshness(
        unpublished_closed_months=len(unpublished),
        oldest_unpublished_age_seconds=max(oldest_age, 0.0),
        last_published_at=stats.last_published_at,
        failed_months=sum(latest_export_failed(m) for m in stats.months),
    )
