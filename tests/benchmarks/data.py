"""Benchmark data, seeded fast: a template of realistic demo games (real freestyle play, plus
the demo's out-of-scope and broken rows) is inserted once, then copied in SQL with fresh ids
and finish times spread over the month, so a 1,000,000-game month seeds in a minute or two."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.demo.games import generate_month
from gomoku_archive.profile.months import Month

TEMPLATE_GAMES = 2000
"""Valid games played by the demo player for the template (the rest are copies of them)."""


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
        count: int = await conn.fetchval(
            f"SELECT count(*) FROM {quoted} WHERE {source.IN_SCOPE} "
            f"AND {source.FINISH_SECOND} >= $1 AND {source.FINISH_SECOND} < $2",
            month.start.replace(tzinfo=None),
            month.end.replace(tzinfo=None),
        )
    finally:
        await conn.close()
    return count
