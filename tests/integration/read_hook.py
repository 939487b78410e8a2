"""A change to the games table made while a range is being read, for the consistency tests: the
source read (``gomoku_archive.db.source.candidate_batches_between``) is wrapped so that, when the
range starting at a given second is read, the change commits on its own connection after the
range's snapshot was taken and before its rows are handed over. The change runs once per
database (a marker table), whichever process reads the range first, so retried ranges and other
processes read the changed table.

In this process: ``install(monkeypatch, dsn, first_second, sql)``. In a worker subprocess:
``python -m tests.integration.read_hook worker ...`` with ``READ_HOOK_DSN``,
``READ_HOOK_FIRST_SECOND`` (ISO, naive UTC) and ``READ_HOOK_SQL`` in its environment."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Any

import asyncpg
import pytest

from gomoku_archive.db import source

_REAL = source.candidate_batches_between


async def change_once(dsn: str, sql: str) -> bool:
    """Run ``sql`` unless it ran already in this database; True when it ran now."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS read_hook_fired (fired boolean PRIMARY KEY)"
            )
            fired = await conn.fetchval(
                "INSERT INTO read_hook_fired VALUES (true) ON CONFLICT DO NOTHING RETURNING fired"
            )
            if fired:
                await conn.execute(sql)
        return bool(fired)
    finally:
        await conn.close()


def hooked(dsn: str, first_second: datetime, sql: str, *, after: bool = False) -> Any:
    """The source read with the change once the range's first batch is read (``after``: once
    its last batch was handed over, before the next range's snapshot)."""

    async def candidate_batches_between(
        conn: Any, table: str, start: datetime, end: datetime, **options: Any
    ) -> AsyncGenerator[Any, None]:
        first = True
        async for batch in _REAL(conn, table, start, end, **options):
            if first and start == first_second and not after:
                await change_once(dsn, sql)  # the range's snapshot is taken: its cursor is open
            first = False
            yield batch
        if start == first_second and after:
            await change_once(dsn, sql)

    return candidate_batches_between


def install(
    monkeypatch: pytest.MonkeyPatch,
    dsn: str,
    first_second: datetime,
    sql: str,
    *,
    after: bool = False,
) -> None:
    monkeypatch.setattr(
        source, "candidate_batches_between", hooked(dsn, first_second, sql, after=after)
    )


def main() -> None:
    source.candidate_batches_between = hooked(  # type: ignore[assignment]
        os.environ["READ_HOOK_DSN"],
        datetime.fromisoformat(os.environ["READ_HOOK_FIRST_SECOND"]),
        os.environ["READ_HOOK_SQL"],
    )
    from gomoku_archive.cli.main import main as cli

    sys.argv = ["gomoku-archive", *sys.argv[1:]]
    sys.exit(cli())


if __name__ == "__main__":
    main()
