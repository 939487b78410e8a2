"""The two reads of a whole month, the plan's count and the consistency check (which counts the
month again in its snapshot, for the plan of the state the file will hold), cut into slices
that several connections of the source pool read at once, all in ONE snapshot: the first
connection exports its transaction's snapshot (``pg_export_snapshot``, on a hot standby too)
and the others import it (``SET TRANSACTION SNAPSHOT``), so the slices together see one state
of the table, as a single statement did. On a database server with cores to spare, these two
serial steps of a build then take about 1/N of the time on N connections.

The first connection reads slices too, and takes every slice left when the pool has no other
connection to give (another build holds them, say): the read never waits on the pool, and the
exporting transaction lasts as long as the slowest slice being read, about the whole read's
1/N."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from gomoku_archive.db import source
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.source import MonthCount, RangesSeen
from gomoku_archive.export.lanes import in_lanes
from gomoku_archive.export.ranges import Range, plan_ranges
from gomoku_archive.profile.months import Month

READ_CONNECTIONS = 4
"""Connections that read a month's count and its consistency check at once (the first one
included); 1 reads each in one statement, as before."""
SLICES_PER_CONNECTION = 2
"""Slices per connection: rows are not spread evenly over a month, so a few more slices than
connections keep every connection busy to the end."""

T = TypeVar("T")


class CheckedRange(Protocol):
    """What the check needs of a range (``range_store.RangeRow`` has it)."""

    @property
    def first_second(self) -> datetime: ...

    @property
    def planned(self) -> int: ...


R = TypeVar("R", bound=CheckedRange)


def minute_slices(start: datetime, end: datetime, count: int) -> list[tuple[datetime, datetime]]:
    """``[start, end)`` (whole minutes) cut into at most ``count`` consecutive spans of whole
    minutes, as equal as minutes allow; together they are exactly ``[start, end)``."""
    minutes = int((end - start) / timedelta(minutes=1))
    count = max(1, min(count, minutes))
    edges = [start + timedelta(minutes=minutes * i // count) for i in range(count)] + [end]
    return list(itertools.pairwise(edges))


def range_groups(ranges: Sequence[R], count: int) -> list[Sequence[R]]:
    """Consecutive ranges in at most ``count`` runs of nearly equal planned candidates; the
    runs together are ``ranges``, in order."""
    count = max(1, min(count, len(ranges)))
    total = sum(max(1, r.planned) for r in ranges)
    groups: list[Sequence[R]] = []
    current: list[R] = []
    taken = 0
    for r in ranges:
        current.append(r)
        taken += max(1, r.planned)
        if len(groups) < count - 1 and taken * count >= total * (len(groups) + 1):
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


async def count_month(
    first: Connection, pool: Pool, table: str, month: Month, *, connections: int
) -> MonthCount:
    """The plan's count of the month (``source.count_between``), slice by slice on up to
    ``connections`` connections in one snapshot."""
    start, end = source.month_bounds(month)
    slices = minute_slices(start, end, _slices(connections))

    def counting(lo: datetime, hi: datetime) -> Callable[[Connection], Awaitable[MonthCount]]:
        return lambda conn: source.count_between(conn, table, lo, hi)

    counted = await read_in_one_snapshot(
        first, pool, [counting(lo, hi) for lo, hi in slices], connections=connections
    )
    return MonthCount.joined(counted)


async def check_ranges(
    first: Connection,
    pool: Pool,
    table: str,
    month: Month,
    ranges: Sequence[CheckedRange],
    *,
    connections: int,
) -> RangesSeen:
    """Every range's fingerprint and the month's count (``source.check_ranges``) in one
    snapshot, runs of consecutive ranges on up to ``connections`` connections."""
    month_start, month_end = source.month_bounds(month)
    groups = range_groups(ranges, _slices(connections))
    # A run reads from its first range's first second (the first run from the month's start,
    # as one statement over the month did) to the next run's.
    edges = [month_start, *(g[0].first_second for g in groups[1:]), month_end]

    def checking(
        group: Sequence[CheckedRange], lo: datetime, hi: datetime
    ) -> Callable[[Connection], Awaitable[RangesSeen]]:
        starts = [r.first_second for r in group]
        return lambda conn: source.check_ranges(conn, table, lo, hi, starts)

    reads = [
        checking(g, lo, hi) for g, (lo, hi) in zip(groups, itertools.pairwise(edges), strict=True)
    ]
    return RangesSeen.joined(
        await read_in_one_snapshot(first, pool, reads, connections=connections)
    )


def plan_month(count: MonthCount, month: Month, *, target: int) -> list[Range]:
    """The month's ranges from its count: the one function both a build's first plan and its
    consistency check plan with, so that the same rows always give the same ranges."""
    return plan_ranges(count.publishable, *source.month_bounds(month), target=target)


async def read_in_one_snapshot(
    first: Connection,
    pool: Pool,
    reads: Sequence[Callable[[Connection], Awaitable[T]]],
    *,
    connections: int,
) -> list[T]:
    """Every read's result, in order: ``first`` opens a ``source.counting`` transaction and
    reads; up to ``connections - 1`` more connections of ``pool`` read in that transaction's
    snapshot (``lanes.in_lanes``). A read that fails fails the whole (the others are
    cancelled)."""
    async with source.counting(first):
        opening = None
        if min(connections, len(reads)) > 1:
            snapshot_id = await source.export_snapshot(first)

            def opening(conn: Connection) -> AbstractAsyncContextManager[None]:
                return source.counting(conn, snapshot_id=snapshot_id)

        return await in_lanes(first, pool, reads, lanes=connections, opening=opening)


def _slices(connections: int) -> int:
    return 1 if connections <= 1 else connections * SLICES_PER_CONNECTION
