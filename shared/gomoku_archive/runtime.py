"""What every command shares: settings from the environment, logging, running a coroutine, and
turning database errors into the project's error types with a clear sentence."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg

from gomoku_archive.db.pool import CONNECTION_ERRORS, Pool, create_pool
from gomoku_archive.errors import ArchiveError, DatabaseUnavailable, InvalidMonth
from gomoku_archive.logs import configure_logging
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings

T = TypeVar("T")


def load_settings(*, log_to_stdout: bool = False) -> Settings:
    """Settings from the environment, and logging configured from them. Commands whose stdout
    is data log to stderr."""
    settings = Settings.from_env(isatty=sys.stderr.isatty())
    configure_logging(
        fmt=settings.log_format,
        level=settings.log_level,
        stream=sys.stdout if log_to_stdout else sys.stderr,
    )
    return settings


def month_arg(text: str) -> Month:
    """argparse type for ``--month YYYY-MM``: a bad value is a usage error, not a traceback."""
    try:
        return Month.parse(text)
    except InvalidMonth as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


SERVICE_TABLES = frozenset({"archives", "archive_chunks", "schema_migrations"})
_MISSING_RELATION = re.compile(r'relation "(?:[^"]+\.)?([^".]+)" does not exist')


def missing_table_advice(error: str) -> str:
    """What to do about PostgreSQL's "relation ... does not exist": the service's own tables
    come from ``migrate``; any other table is the game server's, which this service never
    creates (GAMES_TABLE names it)."""
    match = _MISSING_RELATION.search(error)
    if match is not None and match.group(1) in SERVICE_TABLES:
        return f"{error}: run `gomoku-archive migrate` first"
    return (
        f"{error}: the games table is the game server's and this service never creates it; "
        "check GAMES_TABLE (schema.table if it is not on the search path) and that this "
        "database role can see it"
    )


def port_arg(text: str) -> int:
    """argparse type for ``--port``: a TCP port number, 0..65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0..65535, got {port}")
    return port


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def guarded() -> T:
        try:
            return await main()
        except asyncpg.UndefinedTableError as exc:
            raise ArchiveError(missing_table_advice(str(exc))) from exc
        except asyncpg.UndefinedColumnError as exc:  # an upgrade without its migration
            raise ArchiveError(f"{exc}: run `gomoku-archive migrate` first") from exc
        except asyncpg.InsufficientPrivilegeError as exc:
            raise ArchiveError(
                f"{exc}: the database role may not read that table; the export needs SELECT on "
                "the game server's table (GAMES_TABLE) and full use of the service's own tables"
            ) from exc
        except CONNECTION_ERRORS as exc:
            raise DatabaseUnavailable(f"lost the database connection: {exc}") from exc

    return asyncio.run(guarded())


@asynccontextmanager
async def database(settings: Settings, **kwargs: Any) -> AsyncIterator[Pool]:
    pool = await create_pool(settings.database_url, **kwargs)
    try:
        yield pool
    finally:
        await pool.close()


@asynccontextmanager
async def source_database(
    settings: Settings, archive_pool: Pool, *, max_size: int = 2
) -> AsyncIterator[Pool]:
    """The pool the export reads the games through: ``SOURCE_DATABASE_URL``'s, or the archive's
    own when that is where the games are."""
    if settings.source_url == settings.database_url:
        yield archive_pool
        return
    pool = await create_pool(settings.source_url, max_size=max_size)
    try:
        yield pool
    finally:
        await pool.close()


def print_json(document: object, *, indent: int | None = None) -> None:
    print(json.dumps(document, indent=indent, ensure_ascii=False))
