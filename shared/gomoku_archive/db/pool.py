"""The asyncpg pool: created once per process, jsonb decoded to Python, sessions in UTC.
Connection failures become one clear ``DatabaseUnavailable`` error."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from gomoku_archive.errors import DatabaseUnavailable
from gomoku_archive.settings import mask_url

Pool: TypeAlias = "asyncpg.Pool[asyncpg.Record]"
Connection: TypeAlias = "asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]"
"""What the SQL functions take: a dedicated connection or one borrowed from the pool."""

# Errors that mean "the database is not there or not usable", as opposed to a bug in our SQL.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    socket.gaierror,
    asyncpg.PostgresConnectionError,
    asyncpg.InvalidCatalogNameError,
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.InvalidPasswordError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.InterfaceError,
    # The server ended the session: an administrator (pg_terminate_backend), a fast shutdown, a
    # crash of another backend.
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    TimeoutError,
)
DATABASE_ERRORS: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, asyncpg.PostgresError)
"""The database is away, or refused or broke off a statement: what a reader maps to "the
database is unavailable" rather than to a bug."""


def connection_usable(conn: Connection) -> bool:
    """Whether ``conn`` can still run a statement. A pooled connection whose session ended is
    detached from its proxy by asyncpg, and then even ``is_closed()`` raises; that counts as
    unusable too."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False


@asynccontextmanager
async def transaction(conn: Connection, **options: Any) -> AsyncIterator[None]:
    """``conn.transaction(**options)`` whose failure surfaces the body's own error: when the
    body fails because the session is gone, asyncpg's ``__aexit__`` would raise an
    ``InterfaceError`` about the closed connection in its place (and a worker would then take a
    lost connection for a bug). The server drops the transaction with the session anyway."""
    tx = conn.transaction(**options)
    await tx.start()
    try:
        yield
    except BaseException:
        if connection_usable(conn):
            # Lost during the rollback: the body's error is the one that matters.
            with contextlib.suppress(*CONNECTION_ERRORS):
                await tx.rollback()
        raise
    await tx.commit()


def _encode_jsonb(value: object) -> bytes:
    # jsonb's binary wire format is a version byte (1) and the JSON text; binary lets COPY work.
    return b"\x01" + json.dumps(value, separators=(",", ":")).encode()


def _decode_jsonb(data: bytes) -> object:
    return json.loads(data[1:])


async def _init_connection(conn: Connection) -> None:
    await conn.set_type_codec(
        "jsonb", encoder=_encode_jsonb, decoder=_decode_jsonb, schema="pg_catalog", format="binary"
    )
    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


def _unavailable(dsn: str, exc: BaseException) -> DatabaseUnavailable:
    reason = str(exc).strip() or type(exc).__name__
    return DatabaseUnavailable(f"cannot use the database at {mask_url(dsn)}: {reason}")


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> Pool:
    try:
        pool: Pool = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            init=_init_connection,
            timeout=10,
            command_timeout=None,
            server_settings={"timezone": "UTC", "application_name": "gomoku-archive"},
        )
    except CONNECTION_ERRORS as exc:
        raise _unavailable(dsn, exc) from exc
    return pool


async def connect(dsn: str) -> Connection:
    """One dedicated connection (the export's lock holder, LISTEN)."""
    try:
        conn: Connection = await asyncpg.connect(
            dsn,
            timeout=10,
            server_settings={"timezone": "UTC", "application_name": "gomoku-archive"},
        )
    except CONNECTION_ERRORS as exc:
        raise _unavailable(dsn, exc) from exc
    await _init_connection(conn)
    return conn
