"""Spotting export jobs whose worker died.

A running export always holds its month's PostgreSQL advisory lock, and PostgreSQL drops that
lock when the worker's session ends. So an export that arq still marks in progress while nobody
holds its month's lock, and stays so for a while, belongs to a dead worker. Without help arq
would leave such a job alone until its in-progress key expires: the export ceiling, hours.

Releasing a job that was in fact alive (say it waited longer than ``after_seconds`` for a
database connection before taking the lock) costs a duplicate run that the lock turns into a
skip, never a second publication.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from shared.job_ids import export_month_of


@dataclass
class StaleJobTracker:
    """Remembers since when each running export has been seen without its month's lock."""

    after_seconds: float
    _unlocked_since: dict[str, float] = field(default_factory=dict)

    def observe(
        self, running_ids: Collection[str], locked_months: Collection[str], now: float
    ) -> list[str]:
        """Feed one observation (``now`` from a monotonic clock); returns the ids to release."""
        stale = []
        seen = {}
        for job_id in running_ids:
            month = export_month_of(job_id)
            if month is None or str(month) in locked_months:
                continue
            since = self._unlocked_since.get(job_id, now)
            if now - since >= self.after_seconds:
                stale.append(job_id)
            else:
                seen[job_id] = since
        self._unlocked_since = seen
        return sorted(stale)
