"""A worker started while Redis is away waits for it, however long, and starts when it answers.

Giving up after a few tries (as the worker once did, exit 3 after 16.8 s) made a pod
rescheduled during a Redis outage crash-loop, and Kubernetes' growing back-off then delayed
its start for minutes after Redis came back. While it waits the worker beats its heartbeat
file at every try, so the liveness probe (``worker --check``) passes, says that a line every
``WAIT_LINE_SECONDS`` what it waits for, and stops at once, cleanly, on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable

from arq.connections import ArqRedis

from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import connect_worker
from gomoku_archive.settings import mask_url
from gomoku_archive.worker.job_loop import LoopHeartbeat

log = get_logger(__name__)

WAIT_LINE_SECONDS = 10.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StartWait:
    """Told of every try that Redis did not answer: beats the heartbeat, and logs
    ``worker_waiting_for_redis`` at the first and then once every ``line_seconds``."""

    def __init__(
        self,
        heartbeat: LoopHeartbeat,
        redis_url: str,
        *,
        line_seconds: float = WAIT_LINE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._heartbeat = heartbeat
        self._redis = mask_url(redis_url)
        self._line_seconds = line_seconds
        self._clock = clock
        self._started = clock()
        self._next_line = self._started
        self.tries = 0

    def __call__(self, error: str) -> None:
        self.tries += 1
        self._heartbeat.waited(redis_error=error)
        now = self._clock()
        if now < self._next_line:
            return
        self._next_line = now + self._line_seconds
        log.warning(
            "worker_waiting_for_redis",
            worker=self._heartbeat.worker,
            redis=self._redis,
            error=error,
            waited_s=round(now - self._started, 1),
            tries=self.tries,
            consequence="the worker starts when Redis answers; no job runs until then",
        )


async def wait_for_redis(
    redis_url: str, heartbeat: LoopHeartbeat, *, handle_signals: bool
) -> ArqRedis | None:
    """The worker's Redis client once Redis answers (``queue.connection.connect_worker``);
    None when SIGTERM or SIGINT came first (with ``handle_signals``: arq's own handlers are
    not installed yet, and the default action would kill the process with no word)."""
    waiting = asyncio.ensure_future(
        connect_worker(redis_url, on_unreachable=StartWait(heartbeat, redis_url))
    )
    loop = asyncio.get_running_loop()
    stop_signals = STOP_SIGNALS if handle_signals else ()
    for number in stop_signals:
        loop.add_signal_handler(number, waiting.cancel)
    try:
        return await waiting
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # our caller's cancellation: pass it on
            raise
        return None
    finally:
        for number in stop_signals:
            loop.remove_signal_handler(number)
