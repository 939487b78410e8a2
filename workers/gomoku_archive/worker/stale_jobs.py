"""Spotting export and range jobs whose worker died.

A running export always holds its month's PostgreSQL advisory lock, and PostgreSQL drops that
lock when the worker's session ends. So an export that arq still marks in progress while nobody
holds its month's lock, and stays so for a while, belongs to a dead worker. Without help arq
would leave such a job alone until its in-progress key expires: the export ceiling, hours.

A range job serves one build, and a build is under way only while its row is ``building`` and
its coordinator (the month's export) holds the month's lock. A range job that arq marks in
progress for a build that is not under way (its workers killed with it, say a pool that
crashed) would otherwise show as running for those same hours; released, it runs again and
ends as ``skipped`` at once (``worker.export_jobs.export_range``).

Releasing a job that was in fact alive (say it waited longer than ``after_seconds`` for a
database connection before taking the lock) costs a duplicate run that the lock turns into a
skip, never a second publication.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from gomoku_archive.jobs.ids import parse_job_id


def owner_alive(
    job_id: str, locked_months: Collection[str], live_builds: Collection[int]
) -> bool | None:
    """Whether what a running job works for is alive: an export's month lock is held; a range
    job's build is still ``building`` (``live_builds``) and its month's lock is held. None for
    jobs the watchdog leaves to arq (the planner, mirror jobs, ids not ours)."""
    ref = parse_job_id(job_id)
    if ref.kind == "export":
        return str(ref.month) in locked_months
    if ref.kind == "range":
        return ref.archive_id in live_builds and str(ref.month) in locked_months
    return None


@dataclass
class StaleJobTracker:
    """Remembers since when each running export's or range job's current run has been seen
    without its owner alive (``owner_alive``). A run is told apart from the job's next run by
    its token (see ``gomoku_archive.queue.worker_keys.running_exports``): a new run starts a
    new wait."""

    after_seconds: float
    token_tolerance: int = 100
    _unlocked_since: dict[str, tuple[int, float]] = field(default_factory=dict)

    def observe(
        self,
        running: Mapping[str, int],
        locked_months: Collection[str],
        now: float,
        *,
        live_builds: Collection[int] = (),
    ) -> list[tuple[str, int]]:
        """Feed one observation (job id → run token; the months whose lock is held; the builds
        still ``building``; ``now`` from a monotonic clock); returns the (job id, run token)
        pairs to release."""
        stale = []
        seen = {}
        for job_id, token in running.items():
            if owner_alive(job_id, locked_months, live_builds) is not False:
                continue
            known_token, since = self._unlocked_since.get(job_id, (token, now))
            if abs(known_token - token) > self.token_tolerance:
                since = now  # another run of the same job: watch it afresh
            if now - since >= self.after_seconds:
                stale.append((job_id, token))
            else:
                seen[job_id] = (token, since)
        self._unlocked_since = seen
        return sorted(stale)
