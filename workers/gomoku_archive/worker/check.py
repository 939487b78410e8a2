"""``gomoku-archive worker --check``: exit 0 when a worker on this machine turned its job loop
lately (its heartbeat file, ``worker.job_loop``), 1 with one line when none did. It asks
neither Redis nor PostgreSQL: a liveness probe that failed with them had every worker restarted
during someone else's outage (``jobs.liveness``). Reading a few small files, it never hangs."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

from gomoku_archive.jobs.liveness import loop_liveness
from gomoku_archive.worker.job_loop import beat_directory, read_beats


def check_worker(*, max_age_seconds: float) -> int:
    directory = beat_directory()
    verdict = loop_liveness(
        read_beats(directory),
        now=datetime.now(UTC),
        max_age=timedelta(seconds=max_age_seconds),
        where=str(directory),
    )
    if verdict.alive:
        print(verdict.message)
        return 0
    print(f"gomoku-archive: worker check failed: {verdict.message}", file=sys.stderr)
    return 1
