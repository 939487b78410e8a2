"""Benchmark data, two ways. ``seed_played_month``: every game played by the demo player (real
freestyle play, plus the demo's out-of-scope and broken rows), generated in one process per
core, about 0.45 ms of CPU a game: what the export's CPU per game is measured on, since its
work (and deflate's) depends on the games being different. ``seed_month``, seeded fast: a
template of such games is inserted once, then copied in SQL with fresh ids and finish times
spread over the month, so a 1,000,000-game month seeds in a minute or two; for what does not
depend on the games' variety (memory, ranges, the worker pool)."""

from __future__ import annotations

import json
import os
import uuid
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.demo.games import generate_month
from gomoku_archive.profile.months import Month

TEMPLATE_GAMES = 2000
"""Valid games played by the demo player for the template (the rest are copies of them)."""
PLAYED_BATCH = 5000
"""Valid games a generating process plays at a time (each batch is a month of its own seed)."""


def _row(game: Any) -> tuple[Any, ...]:
    values = {c: getattr(game, c) for c in source.INSERT_COLUMNS}
    values["moves"] = json.dumps(values["moves"])  # a plain connection takes jsonb as text
    return tuple(values[c] for c in source.INSERT_COLUMNS)


async def seed_month(dsn: str, month: Month, games: int, *, table: str = "games") -> int:
    """Fill ``table`` (created from the reference schema if missing) with about ``games`` valid
    games finishing in ``month``; returns the number of candidate rows. ANALYZEs the table, as
    the game server's autovacuum would."""
    template_games = min(games, TEMPLATE_GAMES)
    copies = max(games // template_games, 1)
    template = [_row(g) for g in generate_month(month, template_games, seed=1)]
    columns = ", ".join(source.INSERT_COLUMNS)
    copied = ", ".join(
        {
            "id": "gen_random_uuid()",
            "started_at": "started_at + shift",
            "finished_at": "finished_at + shift",
        }.get(c, c)
        for c in source.INSERT_COLUMNS
    )
    quoted = source.quote_table(table)
    conn = await asyncpg.connect(dsn)
    try:
        await source.create_reference_table(conn, table)
        staging = f"bench_template_{uuid.uuid4().hex[:8]}"
        await conn.execute(f"CREATE TEMP TABLE {staging} (LIKE {quoted})")
        await conn.copy_records_to_table(staging, records=template, columns=source.INSERT_COLUMNS)
        # Copy c moves each finish time by a prime number of seconds per copy, wrapped inside
        # the month, so copies interleave rather than sit on the same second.
        await conn.execute(
            f"INSERT INTO {quoted} ({columns}) SELECT {copied} FROM ("
            f"  SELECT t.*, CASE WHEN finished_at IS NULL THEN interval '0' ELSE make_interval("
            f"    secs => mod(extract(epoch FROM finished_at - $1)::bigint + c * 7919, $3) "
            f"            - extract(epoch FROM finished_at - $1)::bigint) END AS shift"
            f"  FROM {staging} t CROSS JOIN generate_series(0, $2 - 1) AS c"
            f") copies",
            month.start,
            copies,
            int((month.end - month.start).total_seconds()),
        )
        await conn.execute(f"ANALYZE {quoted}")
        return await _count_candidates(conn, quoted, month)
    finally:
        await conn.close()


def _played_rows(month: Month, games: int, seed: int) -> list[tuple[Any, ...]]:
    return [_row(g) for g in generate_month(month, games, seed=seed)]


async def seed_played_month(
    dsn: str, month: Month, games: int, *, table: str = "games", seed: int = 29
) -> int:
    """Fill ``table`` (created from the reference schema if missing) with about ``games`` valid
    games finishing in ``month``, every one played by the demo player (no copies), with the
    demo's out-of-scope and broken rows; returns the number of candidate rows. The games come
    in batches of ``PLAYED_BATCH``, each ``generate_month`` with a seed of its own, played in
    one process per core; ANALYZEs the table, as the game server's autovacuum would."""
    batches = [
        (month, min(PLAYED_BATCH, games - start), seed * 100_000 + n)
        for n, start in enumerate(range(0, games, PLAYED_BATCH))
    ]
    quoted = source.quote_table(table)
    conn = await asyncpg.connect(dsn)
    try:
        await source.create_reference_table(conn, table)
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for rows in pool.map(_played_rows, *zip(*batches, strict=True)):
                await conn.copy_records_to_table(table, records=rows, columns=source.INSERT_COLUMNS)
        await conn.execute(f"ANALYZE {quoted}")
        return await _count_candidates(conn, quoted, month)
    finally:
        await conn.close()


async def _count_candidates(conn: asyncpg.Connection[Any], quoted: str, month: Month) -> int:
    count: int = await conn.fetchval(
        f"SELECT count(*) FROM {quoted} WHERE {source.IN_SCOPE} "
        f"AND {source.FINISH_SECOND} >= $1 AND {source.FINISH_SECOND} < $2",
        month.start.replace(tzinfo=None),
        month.end.replace(tzinfo=None),
    )
    return count
