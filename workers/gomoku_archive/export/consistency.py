"""A month's build is one state of the games table, cut as a clean export of that state would
cut it: each range records the fingerprint of the rows its own short snapshot read (summed as
its cursor reads them); once every range is done, the month is read again in a single snapshot
(``month_reads.check_ranges``: runs of ranges read at once on several connections that share
one exported snapshot), which gives every range's fingerprint and the month's per-minute count
of publishable candidates. The build is accepted when the ranges are exactly the plan of that
count (``month_reads.plan_month``, the same K) and each range's two fingerprints agree
(``replan``). Otherwise the build's ranges become that plan: a done range with the same edges
and rows is kept, every other range is exported again, and the check repeated, ``MAX_CHECKS``
times at most.

When accepted, every range holds exactly the rows of the check's snapshot, so the file has no
game twice, loses none, its counts are ones the table had, and its range edges (where the
deflate stream restarts) are those that snapshot's own plan gives: its bytes are those of a
clean export of that state, and a rebuild of the same rows is ``unchanged``.

The ranges keep their short source transactions (a replica's hot standby cancels or holds back
long ones); the check is one more read of about a second and a half per million candidates
(on one connection), in a snapshot of its own held for that read's length."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gomoku_archive.db.pool import Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.export import month_reads
from gomoku_archive.export.replan import Replan, replan
from gomoku_archive.profile.months import Month

MAX_CHECKS = 3
"""Checks of one build; when the last still finds changed ranges or another plan, the build
fails (transient: ``SourceKeptChanging``) rather than read a table that does not keep still."""


@dataclass(frozen=True, slots=True)
class Checked:
    """One check of a build's done ranges."""

    replan: Replan | None
    """None: the ranges are the month's file; else the ranges the build has next."""
    candidates: int
    """The month's candidates in the check's snapshot."""
    publishable: int


async def check(
    source_pool: Pool,
    table: str,
    month: Month,
    ranges: Sequence[RangeRow],
    *,
    target: int,
    connections: int = month_reads.READ_CONNECTIONS,
) -> Checked:
    """Check the build's done ``ranges`` (in order) against one snapshot of the whole month,
    its plan made with ``target`` (K) candidates a range."""
    async with source_pool.acquire() as conn:
        seen = await month_reads.check_ranges(
            conn, source_pool, table, month, ranges, connections=connections
        )
    plan = month_reads.plan_month(seen.count, month, target=target)
    return Checked(
        replan(ranges, seen.fingerprints, plan),
        seen.count.candidates,
        sum(r.candidates for r in plan),
    )
