"""arq's keys read into one ``QueueSnapshot`` for operators: queued and running jobs, recent
results, the health-check record, the planner's last run and the live workers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from arq.connections import ArqRedis
from arq.constants import (
    health_check_key_suffix,
    in_progress_key_prefix,
    job_key_prefix,
    result_key_prefix,
    retry_key_prefix,
)
from arq.jobs import DeserializationError, deserialize_job, deserialize_result

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.jobs.codec import deserialize
from gomoku_archive.jobs.queue_view import (
    JobOutcome,
    QueuedJob,
    QueueSnapshot,
    RunningInfo,
    WorkerSeen,
)
from gomoku_archive.queue.connection import ANY_REDIS_ERROR, QUEUE_NAME
from gomoku_archive.queue.worker_keys import (
    PLANNER_LAST_RUN_KEY,
    RUNNING_KEY_PREFIX,
    WORKER_KEY_PREFIX,
)

HEALTH_CHECK_KEY = QUEUE_NAME + health_check_key_suffix


def _from_ms(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _utc(value: datetime) -> datetime:
    # arq turns its millisecond stamps into local-time datetimes; operators read UTC.
    return value.astimezone(UTC)


def _load_json(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def read_snapshot(client: ArqRedis, *, results_limit: int = 50) -> QueueSnapshot:
    """Queued and running jobs, recent results, the health-check record, the planner's last run
    and the live workers, as one snapshot (a job may move on while it is read; the snapshot
    leaves out what vanished in between rather than failing)."""
    taken_at = datetime.now(UTC)
    entries: list[tuple[bytes, float]] = await client.zrange(QUEUE_NAME, 0, -1, withscores=True)
    ids = [raw.decode() for raw, _ in entries]
    queued: list[QueuedJob] = []
    running: dict[str, RunningInfo] = {}
    if ids:
        async with client.pipeline(transaction=False) as pipe:
            pipe.mget([job_key_prefix + i for i in ids])
            pipe.mget([retry_key_prefix + i for i in ids])
            pipe.mget([in_progress_key_prefix + i for i in ids])
            pipe.mget([RUNNING_KEY_PREFIX + i for i in ids])
            definitions, tries, progress, records = await pipe.execute()
        for (job_id, score), raw, attempts, in_progress, record in zip(
            entries, definitions, tries, progress, records, strict=True
        ):
            if raw is None:  # finished (or expired) between the two reads
                continue
            try:
                definition = deserialize_job(raw, deserializer=deserialize)
            except DeserializationError:
                continue
            queued.append(
                QueuedJob(
                    job_id=job_id.decode(),
                    function=definition.function,
                    kwargs=definition.kwargs,
                    enqueued_at=_utc(definition.enqueue_time),
                    scheduled_at=_from_ms(score),
                    attempts=int(attempts or 0),
                    running=in_progress is not None,
                )
            )
            info = _running_info(_load_json(record))
            if in_progress is not None and info is not None:
                running[info.job_id] = info

    results = await _read_results(client, results_limit)
    async with client.pipeline(transaction=False) as pipe:
        pipe.get(HEALTH_CHECK_KEY)
        pipe.get(PLANNER_LAST_RUN_KEY)
        health, planner = await pipe.execute()
    return QueueSnapshot(
        taken_at=taken_at,
        queued=sorted(queued, key=lambda j: (j.scheduled_at, j.job_id)),
        running=running,
        results=results,
        health_check=health.decode() if health else None,
        planner_last_run=_load_json(planner),
        workers=await _read_workers(client),
    )


def _running_info(doc: dict[str, Any] | None) -> RunningInfo | None:
    if doc is None:
        return None
    try:
        return RunningInfo(
            job_id=str(doc["job_id"]),
            worker=str(doc["worker"]),
            started_at=datetime.fromisoformat(doc["started_at"]),
            deadline=datetime.fromisoformat(doc["deadline"]),
            candidates=int(doc["candidates"]),
            attempt=int(doc["attempt"]),
            phase=str(doc.get("phase", "exporting")),
            run=str(doc.get("run", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


async def _scan_values(client: ArqRedis, pattern: str) -> Iterable[tuple[str, bytes]]:
    keys = [key async for key in client.scan_iter(match=pattern, count=500)]
    if not keys:
        return []
    values = await client.mget(keys)
    return [(k.decode(), v) for k, v in zip(keys, values, strict=True) if v is not None]


async def _read_results(client: ArqRedis, limit: int) -> list[JobOutcome]:
    outcomes = []
    for key, raw in await _scan_values(client, result_key_prefix + "*"):
        try:
            r = deserialize_result(raw, deserializer=deserialize)
        except DeserializationError:
            continue
        outcomes.append(
            JobOutcome(
                job_id=key[len(result_key_prefix) :],
                function=r.function,
                success=r.success,
                attempt=r.job_try,
                enqueued_at=_utc(r.enqueue_time),
                started_at=_utc(r.start_time),
                finished_at=_utc(r.finish_time),
                result=r.result,
            )
        )
    outcomes.sort(key=lambda o: o.finished_at, reverse=True)
    return outcomes[:limit]


async def _read_workers(client: ArqRedis) -> list[WorkerSeen]:
    seen = []
    for _, raw in await _scan_values(client, WORKER_KEY_PREFIX + "*"):
        doc = _load_json(raw)
        if doc is None:
            continue
        try:
            seen.append(
                WorkerSeen(
                    worker=str(doc["worker"]),
                    started_at=datetime.fromisoformat(doc["started_at"]),
                    last_seen=datetime.fromisoformat(doc["last_seen"]),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(seen, key=lambda w: w.worker)


async def read_snapshot_within(client: ArqRedis, seconds: float) -> QueueSnapshot:
    """``read_snapshot`` bounded in time: a Redis that accepts connections but does not answer
    must not hang a dashboard. Raises ``RedisUnavailable``."""
    try:
        async with asyncio.timeout(seconds):
            return await read_snapshot(client)
    except ANY_REDIS_ERROR as exc:
        reason = str(exc) or "timed out"
        raise RedisUnavailable(f"cannot read the job queue from Redis: {reason}") from exc
