"""A month's build is one state of the games table: each range records the fingerprint of the
rows its own short snapshot read (summed as its cursor reads them); once every range is done,
the month's ranges are fingerprinted again in a single snapshot
(``month_reads.fingerprint_ranges``: runs of ranges read at once on several connections that
share one exported snapshot). A range whose two fingerprints differ read rows that are not
that snapshot's (a game moved between ranges, a row came or went while the ranges were read):
it is exported again, and the check repeated, ``MAX_CHECKS`` times at most. When they all
agree, every range holds exactly the rows of the check's snapshot, so the file has no game
twice, loses none, and its counts are ones the table had.

The ranges keep their short source transactions (a replica's hot standby cancels or holds back
long ones); the check is one more read of about a second and a half per million
candidates (on one connection), in a snapshot of its own held for that read's length."""

from __future__ import annotations

from collections.abc import Sequence

from gomoku_archive.db.pool import Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.export import month_reads
from gomoku_archive.profile.months import Month

MAX_CHECKS = 3
"""Checks of one build; when the last still finds changed ranges, the build fails (transient:
``SourceKeptChanging``) rather than read a table that does not keep still."""


async def changed_ranges(
    source_pool: Pool,
    table: str,
    month: Month,
    ranges: Sequence[RangeRow],
    *,
    connections: int = month_reads.READ_CONNECTIONS,
) -> list[int]:
    """The ranges (their ``seq``) whose rows differ from one snapshot of the whole month."""
    async with source_pool.acquire() as conn:
        now = await month_reads.fingerprint_ranges(
            conn, source_pool, table, month, ranges, connections=connections
        )
    return [r.seq for r, seen in zip(ranges, now, strict=True) if r.fingerprint != seen]
