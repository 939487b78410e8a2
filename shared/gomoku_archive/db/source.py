"""Reads from the game server's table (SELECT only; a read-only role is enough).

The table name comes from the GAMES_TABLE setting, validated as an identifier by Settings and
quoted here, which is the only reason this module builds SQL text."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from importlib import resources
from typing import Any

from gomoku_archive.db.pool import Connection, transaction
from gomoku_archive.profile.classify import Candidate, CandidateColumns
from gomoku_archive.profile.months import Month

IN_SCOPE = "mode = 'RANKED' AND rated AND ruleset = 'FREESTYLE'"
"""The candidates: every row of the month the export reads and counts (published or excluded)."""
PUBLISHABLE = (
    f"{IN_SCOPE} AND status = 'FINISHED' AND result IN ('BLACK_WIN', 'WHITE_WIN', 'DRAW') "
    "AND termination IN ('FIVE', 'RESIGNATION', 'TIMEOUT', 'BOARD_FULL', 'AGREEMENT') "
    "AND board_size = 15"
)
"""The candidates that may be published as far as SQL can tell (classify's status, result,
termination and board checks): what a month's ranges are planned from, so that a change to a
row excluded by these columns (an aborted game, say) never moves a range's edge and so never
changes the file's bytes. The replay still excludes some of these rows (illegal moves, a start
after the finish): such a row can still move an edge (docs/profile.md)."""
# Truncating to whole seconds keeps month membership (month edges are whole seconds) and gives
# the archive's order key, XET; the reference index is on exactly this expression.
FINISH_SECOND = "date_trunc('second', finished_at AT TIME ZONE 'UTC')"

_PACKAGE = __name__.rpartition(".")[0]
"""This module's package, where the SQL files lie."""


def quote_table(name: str) -> str:
    """``games`` → ``"games"``, ``src.games`` → ``"src"."games"``."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def _candidates_where(table: str) -> str:
    return (
        f"FROM {quote_table(table)} WHERE {IN_SCOPE} "
        f"AND {FINISH_SECOND} >= $1 AND {FINISH_SECOND} < $2"
    )


# started_at as the driver can decode it. PostgreSQL's timestamptz takes 'infinity',
# '-infinity' and instants from 4714 BC to 294276 AD; Python's datetime only years 1 to 9999 UTC,
# and asyncpg raises OverflowError on the others (and returns a naive datetime for the
# infinities) while the cursor decodes the row: one such row used to stop its month's export
# for good. Every other value reads as NULL, and classify excludes a row without a usable start
# as incomplete (a NULL carries the flag: the reference DDL's column is NOT NULL). Bounds with an
# explicit offset, so the session's time zone cannot move them.
DECODABLE_STARTED_AT = (
    "CASE WHEN started_at >= '0001-01-01 00:00:00+00' AND started_at < '10000-01-01 00:00:00+00' "
    "THEN started_at END"
)
_COLUMN_EXPRESSIONS = {
    "moves": "moves::text",  # jsonb's text: the classifier reads it without a JSON decoder
    "started_at": DECODABLE_STARTED_AT,
}
# Candidate's fields in order (it is built positionally); every query of candidates is built
# from this list, so each one gets the guards.
_CANDIDATE_COLUMNS = ", ".join(
    f"{_COLUMN_EXPRESSIONS[f.name]} AS {f.name}" if f.name in _COLUMN_EXPRESSIONS else f.name
    for f in fields(Candidate)
)


def month_bounds(month: Month) -> tuple[datetime, datetime]:
    # Naive UTC, to compare with the `AT TIME ZONE 'UTC'` expression.
    return month.start.replace(tzinfo=None), month.end.replace(tzinfo=None)


ROW_VERSION_HASH = "hashtextextended(id::text, xmin::text::bigint)"
"""A 64-bit hash of a row's id and version (xmin: the transaction that wrote this version), so
the sum over a set of rows changes when a row comes, goes or is updated (a moved finish)."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a set of candidates was: how many, and the sum of their ``ROW_VERSION_HASH``."""

    rows: int
    hash_sum: int


@dataclass(slots=True)
class FingerprintSum:
    """A fingerprint summed as a range's rows are read (``candidate_batches_between``)."""

    rows: int = 0
    hash_sum: int = 0

    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.rows, self.hash_sum)


def candidates_query(table: str, *, fingerprinted: bool = False) -> str:
    """The export's query of a month's candidates ($1, $2: the month's naive UTC bounds);
    ``fingerprinted``: each row also ends with its ``ROW_VERSION_HASH``."""
    hashed = f", {ROW_VERSION_HASH} AS row_version" if fingerprinted else ""
    return (
        f"SELECT {_CANDIDATE_COLUMNS}{hashed} {_candidates_where(table)} "
        f"ORDER BY {FINISH_SECOND}, id"
    )


@asynccontextmanager
async def snapshot(conn: Connection) -> AsyncIterator[None]:
    """The export's view of the source table: one REPEATABLE READ, READ ONLY transaction, so
    every row of the month comes from one consistent snapshot.

    It also tells the planner to read the month in the index's order instead of sorting it. The
    planner's row estimate for a range of ``date_trunc(...)`` is often far too low (hundreds for
    a month of a hundred thousand), and then a bitmap scan plus an external sort looks cheaper:
    gigabytes of temp files before the first row, for a big month. The export's role may only
    SELECT, so it cannot ANALYZE the table or add statistics; these two planner settings are
    its own (``SET LOCAL``: this transaction only), and with them the ordered index scan is the
    plan whatever the estimates."""
    async with transaction(conn, isolation="repeatable_read", readonly=True):
        await conn.execute("SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off")
        yield


def count_month_query(table: str) -> str:
    """The plan's count ($1, $2: naive UTC bounds of whole minutes, the month's or a slice's)."""
    return (
        f"SELECT date_trunc('minute', {FINISH_SECOND}) AS minute, count(*) AS n, "
        f"count(*) FILTER (WHERE {PUBLISHABLE}) AS publishable "
        f"{_candidates_where(table)} GROUP BY 1"
    )


@dataclass(frozen=True, slots=True)
class MonthCount:
    """A month (or a slice of it, in whole minutes) counted for its plan: the publishable
    candidates per minute of their finish second (naive UTC minute -> count; minutes without
    any are absent), and all candidates."""

    publishable: dict[datetime, int]
    candidates: int

    @staticmethod
    def joined(slices: Sequence[MonthCount]) -> MonthCount:
        """The count of the slices together. Slices cut at a second inside a minute (runs of
        ranges, whose edges may be) each hold part of that minute: its counts are added."""
        publishable: dict[datetime, int] = {}
        for part in slices:
            for minute, n in part.publishable.items():
                publishable[minute] = publishable.get(minute, 0) + n
        return MonthCount(publishable, sum(part.candidates for part in slices))


async def count_between(conn: Connection, table: str, start: datetime, end: datetime) -> MonthCount:
    """The candidates finishing in ``[start, end)`` (naive UTC, whole minutes), and the
    publishable ones (``PUBLISHABLE``) per minute: what the export plans its ranges from. The
    caller holds a ``counting`` transaction."""
    rows = await conn.fetch(count_month_query(table), start, end)
    return MonthCount(
        publishable={row["minute"]: row["publishable"] for row in rows if row["publishable"]},
        candidates=sum(row["n"] for row in rows),
    )


_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+(-[0-9]+)?")
"""What ``pg_export_snapshot()`` returns (``00000003-0000001B-1``)."""


@asynccontextmanager
async def counting(conn: Connection, *, snapshot_id: str | None = None) -> AsyncIterator[None]:
    """A read-only transaction for the statements that count or fingerprint a month (the plan,
    the consistency check), with a plan that writes no temp file: without a sort, a bitmap scan
    of the export's index and a hash aggregate in memory (a month's groups are at most its
    minutes, or its ranges). Reading the index in order instead costs about 2.5 times the
    time (3.85 s against 1.57 s per million candidates, measured). With ``snapshot_id`` (one
    that another session's open transaction exported, ``export_snapshot``) the transaction
    sees exactly what that one sees."""
    async with transaction(conn, isolation="repeatable_read", readonly=True):
        if snapshot_id is not None:
            if not _SNAPSHOT_ID.fullmatch(snapshot_id):
                raise ValueError(f"not a snapshot id: {snapshot_id!r}")
            # Before the transaction's first query; a statement that takes no parameters.
            await conn.execute(f"SET TRANSACTION SNAPSHOT '{snapshot_id}'")
        await conn.execute("SET LOCAL enable_sort = off; SET LOCAL work_mem = '32MB'")
        yield


async def export_snapshot(conn: Connection) -> str:
    """The id of ``conn``'s transaction snapshot, for other sessions to read in it while that
    transaction stays open (``counting(snapshot_id=...)``). Works on a hot standby too
    (PostgreSQL 10 and later)."""
    snapshot_id: str = await conn.fetchval("SELECT pg_export_snapshot()")
    return snapshot_id


def check_ranges_query(table: str) -> str:
    """The consistency check's statement ($1, $2: the month's bounds, or a run of its ranges';
    $3: the ranges' first seconds): per range and minute, the candidates, the publishable ones
    and the sum of their ``ROW_VERSION_HASH``, in one scan and one hash aggregate. The plan's
    count read beside the fingerprints costs about a third more than the fingerprints alone
    (backend CPU 1.31-1.44 s against 0.99-1.04 s on a 1,032,000-candidate month, the ranges
    benchmark's ``check_count_cpu``); a second statement for the count took 2.08 s, GROUPING
    SETS 1.45 s."""
    return (
        f"SELECT width_bucket({FINISH_SECOND}, $3::timestamp[]) AS bucket, "
        f"date_trunc('minute', {FINISH_SECOND}) AS minute, count(*) AS n, "
        f"count(*) FILTER (WHERE {PUBLISHABLE}) AS publishable, sum({ROW_VERSION_HASH}) AS s "
        f"{_candidates_where(table)} GROUP BY 1, 2"
    )


@dataclass(frozen=True, slots=True)
class RangesSeen:
    """What one snapshot holds in consecutive ranges: each range's fingerprint, in order, and
    the count a plan is made from (``MonthCount``) of the same rows."""

    fingerprints: list[Fingerprint]
    count: MonthCount

    @staticmethod
    def joined(runs: Sequence[RangesSeen]) -> RangesSeen:
        """Runs of consecutive ranges, in order, as one."""
        return RangesSeen(
            [f for run in runs for f in run.fingerprints],
            MonthCount.joined([run.count for run in runs]),
        )


async def check_ranges(
    conn: Connection, table: str, start: datetime, end: datetime, starts: Sequence[datetime]
) -> RangesSeen:
    """The fingerprints of consecutive ranges that cover ``[start, end)`` (naive UTC; the
    month, or a run of its ranges) and the count of the same rows, in one statement (one
    snapshot): ``starts`` are the first seconds of the ranges, in order; a range's rows are
    found by ``width_bucket`` over them. The caller holds a ``counting`` transaction."""
    rows = await conn.fetch(check_ranges_query(table), start, end, list(starts))
    counts: dict[int, list[int]] = {}
    publishable: dict[datetime, int] = {}
    for row in rows:
        found = counts.setdefault(row["bucket"], [0, 0])
        found[0] += row["n"]
        found[1] += int(row["s"])
        if row["publishable"]:
            minute = row["minute"]
            publishable[minute] = publishable.get(minute, 0) + row["publishable"]
    return RangesSeen(
        [Fingerprint(*counts.get(i + 1, (0, 0))) for i in range(len(starts))],
        MonthCount(publishable, sum(row["n"] for row in rows)),
    )


async def candidate_batches_between(
    conn: Connection,
    table: str,
    start: datetime,
    end: datetime,
    *,
    size: int = 2000,
    fingerprint: FingerprintSum | None = None,
) -> AsyncGenerator[Sequence[CandidateColumns], None]:
    """Every candidate finishing in the seconds ``[start, end)`` (naive UTC), one range of a
    month, in archive order (finish second, then id), through a server-side cursor, in batches
    of ``size`` rows (the last one shorter; each row the columns of a ``Candidate`` in its
    field order). The next batch is asked for before one is handed over, so the server reads it
    while the caller works on this one. The caller holds a ``snapshot`` on ``conn`` and closes
    the generator (``contextlib.aclosing``) before the snapshot ends when it stops early, so
    that no fetch is left running on the connection. With ``fingerprint`` every row read is
    added to it (its ``ROW_VERSION_HASH`` read with it, in the same scan), so that it is the
    fingerprint of exactly the rows handed over."""
    query = candidates_query(table, fingerprinted=fingerprint is not None)
    cursor = await conn.cursor(query, start, end)
    rows = await cursor.fetch(size)
    while rows:
        following = asyncio.ensure_future(cursor.fetch(size))
        try:
            await asyncio.sleep(0)  # let the fetch send its request before the caller's work
            if fingerprint is None:
                yield rows
            else:
                fingerprint.rows += len(rows)
                fingerprint.hash_sum += sum(row[-1] for row in rows)
                yield [row[:-1] for row in rows]
        except BaseException:  # the caller stopped (its error, or aclose): no fetch left running
            following.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await following
            raise
        rows = await following


def reference_schema(table: str) -> str:
    """The reference DDL of the game server's table (and the export's index), for tests/demo."""
    text = resources.files(_PACKAGE).joinpath("reference/games.sql").read_text("utf-8")
    index = quote_table(table.split(".")[-1] + "_export_order")
    return text.replace("{table}", quote_table(table)).replace("{index}", index)


INSERT_COLUMNS = (
    "id",
    "mode",
    "rated",
    "ruleset",
    "board_size",
    "status",
    "started_at",
    "finished_at",
    "result",
    "termination",
    "moves",
    "time_control_seconds",
    "black_rating",
    "white_rating",
    "black_player_id",
    "white_player_id",
)


async def create_reference_table(conn: Connection, table: str) -> None:
    """Create the game server's table and index from the reference schema, if missing (the demo
    and the tests play the game server's part; the service itself never does this)."""
    await conn.execute(reference_schema(table))


async def insert_games(conn: Connection, table: str, rows: Sequence[tuple[Any, ...]]) -> int:
    """Insert rows (tuples in ``INSERT_COLUMNS`` order) into the source table through COPY into
    a temporary table; rows whose id exists already are skipped, so seeding is idempotent.
    Returns the number of new rows."""
    async with conn.transaction():
        await conn.execute(
            f"CREATE TEMP TABLE incoming_games (LIKE {quote_table(table)}) ON COMMIT DROP"
        )
        await conn.copy_records_to_table("incoming_games", records=rows, columns=INSERT_COLUMNS)
        status = await conn.execute(
            f"INSERT INTO {quote_table(table)} SELECT * FROM incoming_games "
            "ON CONFLICT (id) DO NOTHING"
        )
    return int(status.split()[-1])


async def months_with_candidates(conn: Connection, table: str) -> set[str]:
    """The months (``YYYY-MM``) in which at least one candidate finished: what the demo has
    seeded already, so that a second run seeds only the months that are new since."""
    rows = await conn.fetch(
        f"SELECT DISTINCT to_char({FINISH_SECOND}, 'YYYY-MM') AS month "
        f"FROM {quote_table(table)} WHERE {IN_SCOPE} AND finished_at IS NOT NULL"
    )
    return {str(row["month"]) for row in rows}
