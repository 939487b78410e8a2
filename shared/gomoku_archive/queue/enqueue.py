"""Queueing jobs by function name: the planner's exports, mirrors and companions, and
operators' forced rebuilds (bounded in time, and never queued late)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix, result_key_prefix
from arq.jobs import Job, serialize_job

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.jobs.codec import serialize
from gomoku_archive.jobs.ids import (
    COMPANION_FUNCTION,
    EXPORT_FUNCTION,
    MIRROR_FUNCTION,
    companion_job_id,
    export_job_id,
    forced_export_arguments,
    forced_export_job_id,
    forced_export_prefix,
    mirror_job_id,
)
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import (
    NOW_MS_LUA,
    QUEUE_NAME,
    REDIS_ANSWER_SECONDS,
    eval_script,
)

JobStatusName = Literal["not_found", "queued", "deferred", "in_progress", "complete"]


async def job_status(client: ArqRedis, job_id: str) -> JobStatusName:
    status = await Job(job_id, client, _queue_name=QUEUE_NAME).status()
    return status.value


async def enqueue_export(client: ArqRedis, month: Month, *, replace_result: bool = False) -> bool:
    """Queue the planner's ``export:YYYY-MM`` job; False when that id is already queued or
    running. ``replace_result`` first drops the id's kept result (a finished run that left the
    month unpublished), which would otherwise block the id for as long as arq keeps it."""
    job_id = export_job_id(month)
    if replace_result:
        await client.delete(result_key_prefix + job_id)
    job = await client.enqueue_job(
        EXPORT_FUNCTION, _job_id=job_id, _queue_name=QUEUE_NAME, month=str(month), force=False
    )
    return job is not None


async def enqueue_mirror(
    client: ArqRedis, archive_id: int, *, replace_result: bool = False
) -> bool:
    """Queue ``mirror:<archive id>``; False when that id is already queued or running.
    ``replace_result`` drops a kept result first, as for ``enqueue_export``."""
    job_id = mirror_job_id(archive_id)
    if replace_result:
        await client.delete(result_key_prefix + job_id)
    job = await client.enqueue_job(
        MIRROR_FUNCTION, _job_id=job_id, _queue_name=QUEUE_NAME, archive_id=archive_id
    )
    return job is not None


async def enqueue_mirrors(client: ArqRedis, archive_ids: Iterable[int]) -> list[int]:
    """Queue ``mirror:<id>`` for each archive whose job is not waiting or running already (a
    kept result, i.e. a finished run that left no verified copy, is replaced); returns the ids
    queued now."""
    queued = []
    for archive_id in archive_ids:
        status = await job_status(client, mirror_job_id(archive_id))
        if status in ("queued", "deferred", "in_progress"):
            continue
        if await enqueue_mirror(client, archive_id, replace_result=status == "complete"):
            queued.append(archive_id)
    return queued


async def enqueue_companions(client: ArqRedis, archive_ids: Iterable[int]) -> list[int]:
    """Queue ``companion:<id>`` for each archive whose job is not waiting or running already
    (a kept result, a run that made none, is replaced); returns the ids queued now."""
    queued = []
    for archive_id in archive_ids:
        job_id = companion_job_id(archive_id)
        status = await job_status(client, job_id)
        if status in ("queued", "deferred", "in_progress"):
            continue
        if status == "complete":
            await client.delete(result_key_prefix + job_id)
        job = await client.enqueue_job(
            COMPANION_FUNCTION, _job_id=job_id, _queue_name=QUEUE_NAME, archive_id=archive_id
        )
        if job is not None:
            queued.append(archive_id)
    return queued


@dataclass(frozen=True, slots=True)
class RebuildTicket:
    job_id: str
    already_queued: bool
    """A forced rebuild of the month was waiting already (a double click): no second one."""


async def enqueue_forced_export(
    client: ArqRedis,
    month: Month,
    *,
    now: datetime,
    reason: str | None = None,
    within_seconds: float = REDIS_ANSWER_SECONDS,
) -> RebuildTicket:
    """Queue a forced rebuild of ``month`` (see ``jobs.ids`` for why it has its own id), with
    the operator's ``reason`` (already checked by ``jobs.rebuild_reason``; None: none given).

    A forced rebuild of the same month that has not started yet is reused, with the reason it
    was queued with; one that is running does not count, since the operator may have fixed the
    source data after it started.

    Bounded: ``RedisUnavailable`` when Redis does not answer within ``within_seconds``. The job
    is then never queued later either: the enqueue is a script that Redis runs only before a
    deadline on its own clock, so commands a stopped Redis finds in its socket when it resumes
    queue nothing (an operator told "not queued" must not find the rebuild running later)."""
    try:
        async with asyncio.timeout(within_seconds):
            deadline_ms = await _redis_now_ms(client) + int(within_seconds * 1000)
        # From Redis' answer on: the script's deadline falls within this wait, so whenever
        # Redis runs it in time, its answer arrives before this side gives up.
        async with asyncio.timeout(within_seconds + _ANSWER_MARGIN_SECONDS):
            prefix = forced_export_prefix(month)
            waiting = [
                job_id
                for job_id in await _queued_ids(client)
                if job_id.startswith(prefix)
                and not await client.exists(in_progress_key_prefix + job_id)
            ]
            if waiting:
                return RebuildTicket(waiting[0], already_queued=True)
            job_id = forced_export_job_id(month, now)
            arguments = forced_export_arguments(month, reason)
            added = await _enqueue_before(client, deadline_ms, job_id, EXPORT_FUNCTION, arguments)
    except TimeoutError as exc:
        raise RedisUnavailable(
            f"Redis did not answer within {within_seconds:.0f} s; nothing was queued"
        ) from exc
    if added < 0:
        raise RedisUnavailable("Redis answered too late; nothing was queued")
    return RebuildTicket(job_id, already_queued=added == 0)


_ANSWER_MARGIN_SECONDS = 1.0
_EXPIRES_EXTRA_MS = 86_400_000
"""arq's default: a queued job's definition lives a day past its scheduled time."""

_ENQUEUE_BEFORE = (
    NOW_MS_LUA
    + """
if now > tonumber(ARGV[1]) then return -1 end
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return 0 end
redis.call('PSETEX', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
return 1
"""
)
"""arq's ``enqueue_job`` (job definition, then the queue's sorted set; nothing when the id is
queued or has a kept result), run only while Redis' clock is before ARGV[1]."""


async def _redis_now_ms(client: ArqRedis) -> int:
    seconds, micros = await client.time()
    return int(seconds) * 1000 + int(micros) // 1000


async def _enqueue_before(
    client: ArqRedis, deadline_ms: int, job_id: str, function: str, kwargs: dict[str, Any]
) -> int:
    """1 queued, 0 the id was queued or kept already, -1 Redis ran it after ``deadline_ms``."""
    enqueued_ms = int(datetime.now(UTC).timestamp() * 1000)
    job = serialize_job(function, (), kwargs, None, enqueued_ms, serializer=serialize)
    keys = [job_key_prefix + job_id, result_key_prefix + job_id, QUEUE_NAME]
    args = [str(deadline_ms), str(_EXPIRES_EXTRA_MS), job, str(enqueued_ms), job_id]
    return int(await eval_script(client, _ENQUEUE_BEFORE, keys, args))


async def _queued_ids(client: ArqRedis) -> list[str]:
    return [raw.decode() for raw in await client.zrange(QUEUE_NAME, 0, -1)]
