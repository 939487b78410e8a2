"""The Redis edge of the job queue, used by the worker, the ``/ops/`` dashboard and the CLI:
connecting with the project's JSON codec, the queue's name, and what counts as Redis being
away. The jobs package's other modules build on it: ``enqueue`` (jobs queued by function name,
so nobody imports the worker to enqueue), ``worker_keys`` (the keys of our own that the worker
writes for operators), ``snapshot`` (arq's keys read for operators) and ``month_statuses``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import redis.exceptions
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import default_queue_name
from redis.asyncio import ConnectionPool

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.jobs.codec import deserialize, serialize
from gomoku_archive.settings import mask_url

QUEUE_NAME = default_queue_name

REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
)
"""Redis is not there (as opposed to a command Redis refused)."""
REFUSALS: tuple[type[BaseException], ...] = (
    redis.exceptions.AuthenticationError,
    redis.exceptions.AuthorizationError,
    redis.exceptions.ResponseError,
)
"""Redis answered, and said no to us (credentials, permissions, the database number): a
setting to fix, not an outage to wait out. Authentication errors are ``ConnectionError``s in
redis-py, so they are told apart before ``REDIS_ERRORS``."""
ANY_REDIS_ERROR: tuple[type[BaseException], ...] = (*REDIS_ERRORS, redis.exceptions.RedisError)

REDIS_ANSWER_SECONDS = 3.0
"""How long the operators' paths (``/ops/``, ``jobs``, ``rebuild``) wait for Redis: a Redis
that accepts connections but does not answer (stopped, swapping, overloaded) must give a clear
"unreachable" within seconds, not hang a request or a command."""

WORKER_COMMAND_SECONDS = 5.0
"""How long one of the worker's Redis commands may wait for an answer. Without a bound a
Redis that stopped answering (paused, a dropped network path) held the worker's job loop for
ever; with it the loop notes the outage, goes on, and asks again."""
CONNECT_SECONDS = 2.0

NOW_MS_LUA = (
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
)
"""Lua prologue: ``now``, Redis' own clock in milliseconds."""


async def eval_script(client: ArqRedis, script: str, keys: list[Any], args: list[Any]) -> Any:
    # redis-py types eval for its sync and async clients at once; this client is async.
    pending = cast("Awaitable[Any]", client.eval(script, len(keys), *keys, *args))
    return await pending


def redis_settings(redis_url: str, *, retries: int = 0) -> RedisSettings:
    """arq's connection settings from ``REDIS_URL``, for clients (the worker connects with
    ``connect_worker``)."""
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
    except ANY_REDIS_ERROR as exc:
        raise RedisUnavailable(f"cannot reach Redis at {mask_url(redis_url)}: {exc}") from exc


async def connect_worker(
    redis_url: str, *, on_unreachable: Callable[[str], None], retry_seconds: float = 1.0
) -> ArqRedis:
    """The worker's client pool, once Redis answers a PING: each command bounded by
    ``WORKER_COMMAND_SECONDS`` (arq's own pool bounds only the connect). While Redis is away
    (refused, silent, still loading its data) it asks again every ``retry_seconds``, however
    long, and tells ``on_unreachable`` why after each try that failed; a Redis that answers
    and refuses the worker (a wrong password, a database number it does not have) raises
    ``RedisUnavailable`` at once, as asking again would change nothing. Cancelled, it closes
    its pool."""
    pool = ConnectionPool.from_url(
        redis_url,
        socket_connect_timeout=CONNECT_SECONDS,
        socket_timeout=WORKER_COMMAND_SECONDS,
        encoding="utf8",
    )
    client = ArqRedis(
        pool,
        job_serializer=serialize,
        job_deserializer=deserialize,
        default_queue_name=QUEUE_NAME,
    )
    try:
        while True:
            try:
                await client.ping()
                return client
            except REFUSALS as exc:
                raise RedisUnavailable(
                    f"Redis at {mask_url(redis_url)} refused the worker: {exc}"
                ) from exc
            except REDIS_ERRORS as exc:
                on_unreachable(f"{type(exc).__name__}: {exc}".rstrip(": "))
            await asyncio.sleep(retry_seconds)
    except BaseException:
        await client.aclose(close_connection_pool=True)
        raise


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
