"""``gomoku-archive worker --check``: exit 0 when this host's worker wrote its heartbeat recently
(see ``jobs.liveness`` for why the check is per host), 1 with one line when it did not,
3 when Redis does not answer within a few seconds. A probe must never hang, so the whole check,
connecting included, is bounded by ``CHECK_SECONDS``."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.jobs.liveness import worker_liveness
from gomoku_archive.jobs.queue_view import WorkerSeen
from gomoku_archive.queue.connection import queue_client
from gomoku_archive.queue.snapshot import read_snapshot_within
from gomoku_archive.runtime import load_settings, run
from gomoku_archive.settings import mask_url

CHECK_SECONDS = 4.0


def check_worker(*, max_age_seconds: float) -> int:
    settings = load_settings()
    host = socket.gethostname()

    async def heartbeats() -> Sequence[WorkerSeen]:
        try:
            async with asyncio.timeout(CHECK_SECONDS), queue_client(settings.redis_url) as client:
                return (await read_snapshot_within(client, CHECK_SECONDS)).workers
        except TimeoutError as exc:
            raise RedisUnavailable(
                f"Redis at {mask_url(settings.redis_url)} did not answer within {CHECK_SECONDS:g} s"
            ) from exc

    verdict = worker_liveness(
        run(heartbeats),
        host=host,
        now=datetime.now(UTC),
        max_age=timedelta(seconds=max_age_seconds),
    )
    if verdict.alive:
        print(verdict.message)
        return 0
    print(f"gomoku-archive: worker check failed: {verdict.message}", file=sys.stderr)
    return 1
