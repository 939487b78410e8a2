"""``gomoku-archive worker --check``: exit 0 when this host's worker wrote its heartbeat recently
(see ``shared.jobs.liveness`` for why the check is per host), 1 with one line when it did not,
3 when Redis does not answer within a few seconds. A probe must never hang, so the whole check,
connecting included, is bounded by ``CHECK_SECONDS``."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from shared.cli.runtime import load_settings, run
from shared.errors import RedisUnavailable
from shared.jobs.liveness import worker_liveness
from shared.jobs.ops_view import WorkerSeen
from shared.jobs.queue import queue_client, read_snapshot_within
from shared.settings import mask_url

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
                f"Redis at {mask_url(settings.redis_url)} did not answer within "
                f"{CHECK_SECONDS:g} s"
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
