"""The worker's job loop, kept running through a Redis outage, and its heartbeat file: the
evidence ``gomoku-archive worker --check`` (the liveness probe) reads; ``jobs.liveness`` says
why the probe looks at the loop and not at Redis.

The file is ``<temporary directory>/gomoku-archive-worker-<uid>/<pid>.json`` (``$TMPDIR``, else
``/tmp``: the chart's emptyDir), rewritten atomically at most every ``BEAT_SECONDS`` and at once
when Redis goes away or comes back; a worker that stops removes it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from arq.worker import Worker

from gomoku_archive.jobs.liveness import LoopBeat
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.connection import REDIS_ERRORS

log = get_logger(__name__)

BEAT_SECONDS = 2.0
DIRECTORY_NAME = f"gomoku-archive-worker-{os.getuid()}"
"""Per user: on a machine several users share, one's folder never blocks another's worker."""


def beat_directory() -> Path:
    """Where this machine's workers write their heartbeat files."""
    return Path(tempfile.gettempdir()) / DIRECTORY_NAME


def read_beats(directory: Path) -> list[LoopBeat]:
    """Every heartbeat in ``directory`` (a missing folder holds none; a file being replaced
    or not ours is passed over)."""
    beats = []
    with contextlib.suppress(FileNotFoundError):
        for path in directory.glob("*.json"):
            try:
                beat = LoopBeat.from_json(path.read_text(encoding="utf-8"))
            except OSError:
                continue
            if beat is not None:
                beats.append(beat)
    return beats


class LoopHeartbeat:
    """One worker process's heartbeat file, and its view of Redis as the loop saw it."""

    def __init__(
        self, worker: str, *, clock: Callable[[], datetime], directory: Path | None = None
    ) -> None:
        self.worker = worker
        self._clock = clock
        self.directory = directory or beat_directory()
        self.path = self.directory / f"{os.getpid()}.json"
        self._written_at: datetime | None = None
        self._redis_down_since: datetime | None = None
        self._redis_error: str | None = None

    def turned(self, *, redis_error: str | None) -> None:
        """The loop turned; ``redis_error`` says why Redis did not answer it (None: it did)."""
        now = self._clock()
        changed = (redis_error is None) != (self._redis_down_since is None)
        if redis_error is not None and self._redis_down_since is None:
            self._redis_down_since = now
            log.warning(
                "worker_redis_unreachable",
                worker=self.worker,
                error=redis_error,
                consequence="no job starts until it answers; running jobs go on",
            )
        elif redis_error is None and self._redis_down_since is not None:
            down = (now - self._redis_down_since).total_seconds()
            log.info("worker_redis_back", worker=self.worker, down_s=round(down, 1))
            self._redis_down_since = None
        self._redis_error = redis_error
        self._beat(now, changed=changed)

    def waited(self, *, redis_error: str) -> None:
        """The worker, starting, asked Redis and had no answer (``worker.redis_wait`` logs its
        own lines): the probe sees a live process, and why no job runs. The loop's first turn
        that Redis answers logs ``worker_redis_back``, counted from the first try."""
        now = self._clock()
        changed = self._redis_down_since is None
        if changed:
            self._redis_down_since = now
        self._redis_error = redis_error
        self._beat(now, changed=changed)

    def _beat(self, now: datetime, *, changed: bool) -> None:
        due = self._written_at is None or now - self._written_at >= timedelta(seconds=BEAT_SECONDS)
        if changed or due:
            self._write(now)

    def _write(self, now: datetime) -> None:
        beat = LoopBeat(self.worker, now, self._redis_down_since, self._redis_error)
        try:
            self.directory.mkdir(mode=0o700, exist_ok=True)
            partial = self.path.with_suffix(".partial")
            partial.write_text(beat.to_json(), encoding="utf-8")
            partial.replace(self.path)  # atomic: the probe never reads half a file
        except OSError as exc:  # a full or read-only /tmp: say so, and the probe will too
            log.warning("worker_heartbeat_not_written", path=str(self.path), error=str(exc))
            return
        self._written_at = now

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class JobTasks(dict[str, "asyncio.Task[Any]"]):
    """arq's running tasks by job id. Two runs of one job in one process (a run released while
    it still ran, and the job's next run) share an id: each removes the entry as it ends, and
    arq's plain dict raised ``KeyError`` for the second, recording its success as a failure."""

    def __delitem__(self, job_id: str) -> None:
        self.pop(job_id, None)


class ArchiveWorker(Worker):
    """arq's worker whose job loop outlives a Redis outage: a turn that cannot reach Redis is
    noted (logged once per outage) and the loop goes on asking; each turn, answered or not,
    beats the heartbeat file."""

    def __init__(self, *, heartbeat: LoopHeartbeat, **options: Any) -> None:
        super().__init__(**options)
        self.heartbeat = heartbeat
        self.job_tasks = JobTasks()

    async def _poll_iteration(self) -> None:
        # arq's turn: pick queued jobs, reap finished ones, write its health record. A Redis
        # error escaped it and ended the worker, cancelling exports that need no Redis.
        try:
            await super()._poll_iteration()
        except REDIS_ERRORS as exc:
            self.heartbeat.turned(redis_error=f"{type(exc).__name__}: {exc}".rstrip(": "))
        else:
            self.heartbeat.turned(redis_error=None)

    async def close(self) -> None:
        """arq's close, which asks Redis to forget the worker's health record first; with Redis
        away that fails, and the worker's own resources are closed all the same."""
        try:
            await super().close()
        except REDIS_ERRORS as exc:
            log.warning("worker_stopped_without_redis", error=f"{type(exc).__name__}: {exc}")
            if self.on_shutdown is not None:
                await self.on_shutdown(self.ctx)
            if self._pool is not None:
                await self._pool.aclose(close_connection_pool=True)
                self._pool = None
        finally:
            self.heartbeat.remove()
