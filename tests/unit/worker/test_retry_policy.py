import asyncio

import asyncpg
import pytest
import redis.exceptions

from gomoku_archive.errors import (
    DatabaseUnavailable,
    ExportFailed,
    IntegrityError,
    InvalidMonth,
    RedisUnavailable,
)
from gomoku_archive.worker.retry_policy import MAX_TRIES, classify_failure, may_retry, retry_delay


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
        asyncpg.SerializationError("could not serialize access"),
        asyncpg.DeadlockDetectedError("deadlock detected"),
        DatabaseUnavailable("cannot use the database"),
        RedisUnavailable("cannot reach Redis"),
        redis.exceptions.ConnectionError("Connection reset by peer"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError(104, "Connection reset by peer"),
        TimeoutError(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_transient(exc: BaseException) -> None:
    assert classify_failure(exc) == "transient"


@pytest.mark.parametrize(
    "exc",
    [
        ExportFailed("games out of archive order"),
        IntegrityError("stored bytes differ"),
        InvalidMonth("2026-13"),
        asyncpg.UndefinedTableError('relation "games" does not exist'),
        asyncpg.CheckViolationError("candidate_games = games + excluded_games"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        ValueError("a bug"),
        KeyError("a bug"),
        asyncio.CancelledError(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_permanent(exc: BaseException) -> None:
    assert classify_failure(exc) == "permanent"


@pytest.mark.parametrize(
    ("job_try", "delay"),
    [(1, 15), (2, 30), (3, 60), (4, 120), (5, 240), (6, 480), (7, 600), (8, 600), (100, 600)],
)
def test_backoff_doubles_up_to_ten_minutes(job_try: int, delay: float) -> None:
    assert retry_delay(job_try) == delay


def test_backoff_counts_from_one() -> None:
    with pytest.raises(ValueError, match="from 1"):
        retry_delay(0)


@pytest.mark.parametrize(
    ("job_try", "expected"), [(1, True), (MAX_TRIES - 1, True), (MAX_TRIES, False)]
)
def test_tries_are_bounded(job_try: int, expected: bool) -> None:
    assert may_retry(job_try) is expected


def test_the_retries_span_about_half_an_hour() -> None:
    total = sum(retry_delay(t) for t in range(1, MAX_TRIES))
    assert 20 * 60 <= total <= 40 * 60
