"""Which months need an export: pure decisions, tested with tables."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from shared.archive.months import Month, closed_months


def export_refusal(month: Month, *, first: Month, now: datetime) -> str | None:
    """Why ``month`` must not be exported (by the CLI, a job or a forced rebuild), or None:
    only closed months from the first published one on."""
    if month < first:
        return f"{month} is before the first published month {first}"
    if not month.is_closed(now):
        return f"{month} is not closed yet; it closes at {month.end:%Y-%m-%dT%H:%M:%SZ}"
    return None


def missing_months(first: Month, now: datetime, published: Collection[str]) -> list[Month]:
    """Closed months from ``first`` on that have no published archive, oldest first."""
    return [m for m in closed_months(first, now) if str(m) not in published]
