"""The archive tables summed up for the freshness metrics (``catalog.freshness`` decides
what the numbers mean). One small query, run by the API every few seconds in the background,
never per request. Add a field to ``ArchiveFreshnessFacts`` and a column to the query for a
new gauge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gomoku_archive.db.pool import Connection


@dataclass(frozen=True, slots=True)
class MonthFreshnessFacts:
    """One month's rows, reduced to what freshness needs."""

    month: str
    published_at: datetime | None
    """When the month's current ``published`` row was published; None when it has none."""
    last_failed_at: datetime | None
    """The newest ``failed`` row's failure time; None when no build of the month failed."""


@dataclass(frozen=True, slots=True)
class ArchiveFreshnessFacts:
    months: tuple[MonthFreshnessFacts, ...]
    """Every month with at least one archive row, oldest first."""
    last_published_at: datetime | None
    """The newest publication of any file (published or since superseded)."""


_QUERY = """
SELECT month,
       max(published_at) FILTER (WHERE state = 'published') AS published_at,
       max(published_at) FILTER (WHERE state IN ('published', 'superseded')) AS any_published_at,
       max(failed_at) FILTER (WHERE state = 'failed') AS last_failed_at
FROM archives
WHERE companion_of IS NULL
GROUP BY month
ORDER BY month
"""


async def read_archive_freshness(conn: Connection) -> ArchiveFreshnessFacts:
    rows = await conn.fetch(_QUERY)
    return ArchiveFreshnessFacts(
        months=tuple(
            MonthFreshnessFacts(
                month=row["month"],
                published_at=row["published_at"],
                last_failed_at=row["last_failed_at"],
            )
            for row in rows
        ),
        last_published_at=max(
            (row["any_published_at"] for row in rows if row["any_published_at"] is not None),
            default=None,
        ),
    )
