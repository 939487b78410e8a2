"""UTC month arithmetic: parsing "YYYY-MM", month bounds, and which months are closed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from gomoku_archive.errors import InvalidMonth

_MONTH_RE = re.compile(r"([0-9]{4})-([0-9]{2})")  # ASCII digits: \d takes any script's


@dataclass(frozen=True, order=True, slots=True)
class Month:
    year: int
    month: int

    def __post_init__(self) -> None:
        if not (1 <= self.month <= 12) or not (1 <= self.year <= 9998):
            raise InvalidMonth(f"not a month: {self.year:04d}-{self.month:02d}")

    @classmethod
    def parse(cls, text: str) -> Month:
        """Parse "YYYY-MM" exactly (no day, no surrounding spaces)."""
        m = _MONTH_RE.fullmatch(text)
        if m is None:
            raise InvalidMonth(f"month must look like 2026-08, got {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    @classmethod
    def containing(cls, instant: datetime) -> Month:
        utc = instant.astimezone(UTC)
        return cls(utc.year, utc.month)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        """The first instant of the month, 00:00:00 UTC on its first day (inclusive)."""
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The first instant of the next month (exclusive)."""
        return self.next().start

    def next(self) -> Month:
        return Month(self.year + self.month // 12, self.month % 12 + 1)

    def previous(self) -> Month:
        return Month(self.year - (self.month == 1), (self.month - 2) % 12 + 1)

    def is_closed(self, now: datetime) -> bool:
        """A month is closed once its next month's first instant has passed."""
        return now >= self.end


def closed_months(first: Month, now: datetime) -> list[Month]:
    """Every closed month from ``first`` up to the last one closed at ``now``, oldest first."""
    months: list[Month] = []
    month = first
    while month.is_closed(now):
        months.append(month)
        month = month.next()
    return months
