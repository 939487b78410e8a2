"""The Redis edge of the job queue, used by the worker, the ``/ops/`` dashboard and the CLI:
arq's keys read into a ``QueueSnapshot``, exports enqueued by function name (nobody imports the
worker to enqueue), and the few keys of our own that the worker writes for operators. Also the
database half of the operators' view (``read_month_statuses``), so the dashboard and
``gomoku-archive jobs`` read exactly the same things.

Jobs and results are JSON, never pickle: the same ``serialize`` / ``deserialize`` pair is given
to the worker and to every client pool. A failed job's exception is stored as
``{"error": <type name>, "message": <text>}``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

import redis.exceptions
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import (
    default_queue_name,
    health_check_key_suffix,
    in_progress_key_prefix,
    job_key_prefix,
    result_key_prefix,
    retry_key_prefix,
)
from arq.jobs import (
    DeserializationError,
    Job,
    deserialize_job,
    deserialize_result,
    serialize_job,
)

from shared.archive.months import Month, closed_months
from shared.db import archive_store, locks
from shared.db.pool import DATABASE_ERRORS, Pool
from shared.errors import DatabaseUnavailable, RedisUnavailable
from shared.jobs.ids import (
    EXPORT_FUNCTION,
    MIRROR_FUNCTION,
    export_job_id,
    forced_export_job_id,
    forced_export_prefix,
    mirror_job_id,
)
from shared.jobs.ops_view import (
    JobOutcome,
    MonthStatus,
    QueuedJob,
    QueueSnapshot,
    RunningInfo,
    WorkerSeen,
    month_statuses,
)
from shared.settings import mask_url

QUEUE_NAME = default_queue_name
HEALTH_CHECK_KEY = QUEUE_NAME + health_check_key_suffix
PLANNER_LAST_RUN_KEY = "gomoku:planner:last_run"
RUNNING_KEY_PREFIX = "gomoku:running:"
"""``gomoku:running:<job id>``: which worker runs an export, since when, until when at most."""
WORKER_KEY_PREFIX = "gomoku:worker:"
"""``gomoku:worker:<host:pid>``: a worker's heartbeat, expiring a few beats after it stops."""

REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
)
"""Redis is not there (as opposed to a command Redis refused)."""
_ANY_REDIS_ERROR: tuple[type[BaseException], ...] = (*REDIS_ERRORS, redis.exceptions.RedisError)

REDIS_ANSWER_SECONDS = 3.0
"""How long the operators' paths (``/ops/``, ``jobs``, ``rebuild``) wait for Redis: a Redis
that accepts connections but does not answer (stopped, swapping, overloaded) must give a clear
"unreachable" within seconds, not hang a request or a command."""

JobStatusName = Literal["not_found", "queued", "deferred", "in_progress", "complete"]


_NOW_MS_LUA = (
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
)
"""Lua prologue: ``now``, Redis' own clock in milliseconds."""


async def _eval(client: ArqRedis, script: str, keys: list[Any], args: list[Any]) -> Any:
    # redis-py types eval for its sync and async clients at once; this client is async.
    pending = cast("Awaitable[Any]", client.eval(script, len(keys), *keys, *args))
    return await pending


# --- the JSON codec ---------------------------------------------------------------------------


def _jsonable(value: object) -> object:
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)[:2000]}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a job argument or result type")


def serialize(data: dict[str, Any]) -> bytes:
    """arq's ``job_serializer``: jobs and results as compact JSON."""
    return json.dumps(data, default=_jsonable, separators=(",", ":")).encode()


def deserialize(raw: bytes) -> dict[str, Any]:
    """arq's ``job_deserializer``."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("a job must be a JSON object")
    return data


# --- connecting -------------------------------------------------------------------------------


def redis_settings(redis_url: str, *, retries: int = 0) -> RedisSettings:
    """arq's connection settings from ``REDIS_URL``. Clients fail fast (no retries); the worker
    asks for a few, so a Redis restart does not kill it at start-up."""
    settings = RedisSettings.from_dsn(redis_url)
    settings.conn_retries = retries
    settings.conn_timeout = 2
    return settings


async def connect(
    redis_url: str, *, retries: int = 0, within_seconds: float | None = None
) -> ArqRedis:
    """A client pool with the worker's JSON codec; ``RedisUnavailable`` when Redis does not
    answer (within ``within_seconds``, when given)."""
    try:
        # arq bounds the TCP connect only; its PING waits forever on a Redis that accepted the
        # connection and does not answer.
        async with asyncio.timeout(within_seconds):
            return await create_pool(
                redis_settings(redis_url, retries=retries),
                job_serializer=serialize,
                job_deserializer=deserialize,
                default_queue_name=QUEUE_NAME,
            )
    except TimeoutError as exc:
        raise RedisUnavailable(
            f"cannot reach Redis at {mask_url(redis_url)}: no answer within {within_seconds:.0f} s"
        ) from exc
    except _ANY_REDIS_ERROR as exc:
        raise RedisUnavailable(f"cannot reach Redis at {mask_url(redis_url)}: {exc}") from exc


@asynccontextmanager
async def queue_client(redis_url: str) -> AsyncIterator[ArqRedis]:
    """``connect`` for one command, bounded by ``REDIS_ANSWER_SECONDS``; closes the pool, and
    maps Redis failures on the way to ``RedisUnavailable``."""
    client = await connect(redis_url, within_seconds=REDIS_ANSWER_SECONDS)
    try:
        yield client
    except REDIS_ERRORS as exc:
        raise RedisUnavailable(f"lost the Redis connection: {exc}") from exc
    finally:
        await client.aclose(close_connection_pool=True)


# --- enqueueing -------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class RebuildTicket:
    job_id: str
    already_queued: bool
    """A forced rebuild of the month was waiting already (a double click): no second one."""


async def enqueue_forced_export(
    client: ArqRedis, month: Month, *, now: datetime, within_seconds: float = REDIS_ANSWER_SECONDS
) -> RebuildTicket:
    """Queue a forced rebuild of ``month`` (see ``shared.jobs.ids`` for why it has its own id).

    A forced rebuild of the same month that has not started yet is reused; one that is running
    does not count, since the operator may have fixed the source data after it started.

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
            added = await _enqueue_before(
                client, deadline_ms, job_id, EXPORT_FUNCTION, {"month": str(month), "force": True}
            )
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
    _NOW_MS_LUA
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
    return int(await _eval(client, _ENQUEUE_BEFORE, keys, args))


# --- keys the worker writes for operators -----------------------------------------------------


async def record_planner_run(client: ArqRedis, run: Mapping[str, Any]) -> None:
    await client.set(PLANNER_LAST_RUN_KEY, json.dumps(dict(run)))


async def mark_running(client: ArqRedis, info: RunningInfo) -> None:
    ttl = max(info.deadline - info.started_at, timedelta(seconds=1)) + timedelta(minutes=1)
    document = {
        "job_id": info.job_id,
        "worker": info.worker,
        "started_at": info.started_at.isoformat(),
        "deadline": info.deadline.isoformat(),
        "candidates": info.candidates,
        "attempt": info.attempt,
    }
    await client.set(RUNNING_KEY_PREFIX + info.job_id, json.dumps(document), px=ttl)


async def clear_running(client: ArqRedis, job_id: str) -> None:
    await client.delete(RUNNING_KEY_PREFIX + job_id)


async def announce_worker(
    client: ArqRedis, worker: str, *, started_at: datetime, ttl: float
) -> None:
    document = {
        "worker": worker,
        "started_at": started_at.isoformat(),
        "last_seen": datetime.now(UTC).isoformat(),
    }
    await client.set(WORKER_KEY_PREFIX + worker, json.dumps(document), px=int(ttl * 1000))


async def retire_worker(client: ArqRedis, worker: str) -> None:
    await client.delete(WORKER_KEY_PREFIX + worker)


_RUN_TOKENS = (
    _NOW_MS_LUA
    + """
local out = {}
for i, key in ipairs(KEYS) do
  local pttl = redis.call('PTTL', key)
  if pttl >= 0 then out[i] = now + pttl else out[i] = -1 end
end
return out
"""
)
"""Each in-progress key's expiry instant in Redis' own milliseconds: one value for as long as
that run's key lives, and a later one when a worker takes the job again (arq sets the key with
its full timeout at every start). Redis 6.2 has no PEXPIRETIME, hence TIME + PTTL."""

_RELEASE = (
    _NOW_MS_LUA
    + """
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then return 0 end
if math.abs(now + pttl - tonumber(ARGV[1])) > tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"""
)
"""Delete a run's in-progress key only if it is still the run that was seen stale: atomic in
Redis, so of several watchdogs that saw the same dead run exactly one releases it, and none
can delete the key of the worker that took the job next."""

RUN_TOKEN_TOLERANCE_MS = 100
"""Two readings of one run's token differ by a millisecond or two (TIME and PTTL rounding); a
new run's token is later by at least the time the old one was watched (seconds)."""


async def running_exports(client: ArqRedis) -> dict[str, int]:
    """Export jobs a worker has marked in progress (arq's in-progress keys), each with the
    token of its current run (see ``_RUN_TOKENS``)."""
    keys = [key async for key in client.scan_iter(match=in_progress_key_prefix + "export:*")]
    if not keys:
        return {}
    tokens = await _eval(client, _RUN_TOKENS, keys, [])
    return {
        key.decode()[len(in_progress_key_prefix) :]: int(token)
        for key, token in zip(keys, tokens, strict=True)
        if int(token) >= 0
    }


async def release_stale_job(client: ArqRedis, job_id: str, run_token: int) -> bool:
    """Free a job whose worker died (its in-progress key would otherwise block it until arq's
    in-progress timeout, hours for an export): the job stays queued and any worker takes it.
    Only the run whose token is ``run_token`` is released, atomically; False when another
    watchdog released it first or a worker has taken the job since."""
    keys = [in_progress_key_prefix + job_id, RUNNING_KEY_PREFIX + job_id]
    released = await _eval(client, _RELEASE, keys, [str(run_token), str(RUN_TOKEN_TOLERANCE_MS)])
    return bool(released)


# --- reading everything -----------------------------------------------------------------------


async def _queued_ids(client: ArqRedis) -> list[str]:
    return [raw.decode() for raw in await client.zrange(QUEUE_NAME, 0, -1)]


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
    except _ANY_REDIS_ERROR as exc:
        reason = str(exc) or "timed out"
        raise RedisUnavailable(f"cannot read the job queue from Redis: {reason}") from exc


# --- the database half of the operators' view ----------------------------------------------


async def read_month_statuses(
    pool: Pool,
    *,
    first: Month,
    now: datetime,
    queue: QueueSnapshot | None,
    within_seconds: float = 5.0,
) -> list[MonthStatus]:
    """Every month's state for operators: archive rows and held export locks from PostgreSQL,
    combined with ``queue`` (None when Redis could not be read). Raises
    ``DatabaseUnavailable``."""
    try:
        async with asyncio.timeout(within_seconds), pool.acquire() as conn:
            rows = await archive_store.all_archives(conn)
            months = {str(m) for m in closed_months(first, now)} | {r.month for r in rows}
            locked = {m for m in months if await locks.month_lock_held(conn, Month.parse(m))}
    except DATABASE_ERRORS as exc:
        reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
        raise DatabaseUnavailable(f"cannot read the archive tables: {reason}") from exc
    return month_statuses(first=first, now=now, archives=rows, queue=queue, locked_months=locked)
