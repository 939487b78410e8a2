"""Which export failures are worth another try soon, and how soon.

Transient: the database or Redis went away, or PostgreSQL aborted a transaction that would
succeed if run again (serialization failure, deadlock). Those are retried with exponential
backoff, ``MAX_TRIES`` runs in all. Anything else is permanent: recorded on the month at once;
the next planner run (within six hours) tries the month again.
"""

from __future__ import annotations

from typing import Literal

import asyncpg
import redis.exceptions

from gomoku_archive.errors import (
    DatabaseUnavailable,
    RangeRetriesExhausted,
    RedisUnavailable,
    SourceKeptChanging,
)

MAX_TRIES = 8
"""Runs of one export job, the first included (arq's ``max_tries`` for ``export_month``)."""

FIRST_DELAY_SECONDS = 15.0
MAX_DELAY_SECONDS = 600.0
# 15 s, 30 s, 1 min, 2 min, 4 min, 8 min, 10 min: about 26 minutes from the first failure to the
# last try, long enough to ride out a database failover or restart.

FailureKind = Literal["transient", "permanent"]

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # includes "connection was closed in the middle of operation"
    asyncpg.CannotConnectNowError,  # the server is starting up or shutting down
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
    asyncpg.SerializationError,
    asyncpg.DeadlockDetectedError,
    DatabaseUnavailable,
    RangeRetriesExhausted,  # a range's tries all lost their connection: so may the next build's
    SourceKeptChanging,  # the month's rows changed under every check: a quieter moment will do
    RedisUnavailable,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,  # refused, reset, unreachable, and connect timeouts (TimeoutError is an OSError)
)


def classify_failure(exc: BaseException) -> FailureKind:
    """Transient when running the same job again later may well succeed."""
    return "transient" if isinstance(exc, TRANSIENT_ERRORS) else "permanent"


def retry_delay(job_try: int) -> float:
    """Seconds to wait after the ``job_try``-th run failed (1-based)."""
    if job_try < 1:
        raise ValueError(f"job tries count from 1, got {job_try}")
    return min(FIRST_DELAY_SECONDS * 2.0 ** min(job_try - 1, 16), MAX_DELAY_SECONDS)


def may_retry(job_try: int, max_tries: int = MAX_TRIES) -> bool:
    """Whether a run numbered ``job_try`` that failed transiently gets another run."""
    return job_try < max_tries


MIRROR_MAX_TRIES = 6
"""Runs of one mirror job: 5 s, 10 s, 20 s, 40 s and 80 s apart, about 2.5 minutes in all. A
store that stays away longer is tried again by the next planner run; one that refuses
(credentials, bucket) is not retried at all."""
MIRROR_FIRST_DELAY_SECONDS = 5.0


def mirror_retry_delay(job_try: int) -> float:
    """Seconds to wait after the ``job_try``-th mirror run failed transiently (1-based)."""
    if job_try < 1:
        raise ValueError(f"job tries count from 1, got {job_try}")
    return MIRROR_FIRST_DELAY_SECONDS * 2.0 ** min(job_try - 1, 16)
