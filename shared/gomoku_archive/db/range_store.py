"""The SQL of a month's ranges (``archive_ranges``) and their parts (``archive_parts``): the
plan, claims and heartbeats, a range's finished part, and what the assembly and operators read.

Every write of a range names the attempt that claimed it, and only the holder of the range's
current attempt of a ``building`` archive can change it: a worker that was thought dead and
taken over, or whose build was abandoned, finds its writes refused and stops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from gomoku_archive.db.pool import Connection, transaction
from gomoku_archive.db.source import Fingerprint
from gomoku_archive.errors import IntegrityError
from gomoku_archive.profile.deflate_parts import PartSummary

RangeState = Literal["queued", "running", "done", "failed"]

_CLAIMABLE = (
    "(r.state = 'queued' OR (r.state = 'failed' AND r.retryable AND r.attempt < $3) "
    "OR (r.state = 'running' AND r.heartbeat_at < now() - make_interval(secs => $4)))"
)
_BUILDING = "EXISTS (SELECT 1 FROM archives a WHERE a.id = r.archive_id AND a.state = 'building')"


@dataclass(frozen=True, slots=True)
class RangeClaim:
    """A range this worker now holds: read ``[first_second, end_second)`` and write its part
    under ``attempt``."""

    archive_id: int
    seq: int
    attempt: int
    first_second: datetime
    end_second: datetime
    last: bool
    month: str


@dataclass(frozen=True, slots=True)
class RangeRow:
    """One range as the coordinator, the assembly and operators see it."""

    seq: int
    state: RangeState
    attempt: int
    retryable: bool
    planned: int
    candidates_done: int
    games: int
    worker: str | None
    error: str | None
    crc32: int | None
    raw_bytes: int | None
    deflate_bytes: int | None
    tally: dict[str, Any] | None
    started_at: datetime | None
    finished_at: datetime | None
    first_second: datetime
    end_second: datetime
    fingerprint: Fingerprint | None
    """What the range's snapshot held in its seconds (None until it is done)."""


@dataclass(frozen=True, slots=True)
class BuildProgress:
    """A building month's ranges, for ``/ops/``, ``jobs`` and ``/metrics``."""

    archive_id: int
    month: str
    created_at: datetime
    ranges: int
    done: int
    running: int
    queued: int
    failed: int
    planned: int
    candidates_done: int
    games_done: int


async def add_ranges(
    conn: Connection, archive_id: int, plan: Sequence[tuple[datetime, datetime, int]]
) -> None:
    """Store the build's plan: ``(first_second, end_second, planned candidates)`` in archive
    order; the last range is the one that ends the deflate stream."""
    await conn.executemany(
        "INSERT INTO archive_ranges (archive_id, seq, first_second, end_second, last, planned) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        [
            (archive_id, seq, first, end, seq == len(plan) - 1, planned)
            for seq, (first, end, planned) in enumerate(plan)
        ],
    )


_CLAIM_RETURNING = (
    "RETURNING r.archive_id, r.seq, r.attempt, r.first_second, r.end_second, r.last, "
    "(SELECT month FROM archives WHERE id = r.archive_id) AS month"
)


async def claim_range(
    conn: Connection,
    archive_id: int,
    seq: int | None,
    *,
    worker: str,
    max_attempts: int,
    stale_seconds: float,
) -> RangeClaim | None:
    """Claim range ``seq`` of the build (None: its first claimable range) when it is queued,
    failed with tries left, or running with a heartbeat older than ``stale_seconds``; None when
    there is nothing to claim (done, held by a live worker, or the build is gone)."""
    pick = "" if seq is None else "AND r.seq = $5 "
    args: list[Any] = [archive_id, worker, max_attempts, stale_seconds]
    if seq is not None:
        args.append(seq)
    row = await conn.fetchrow(
        "WITH c AS (SELECT r.archive_id, r.seq FROM archive_ranges r "
        f"WHERE r.archive_id = $1 {pick}AND {_CLAIMABLE} AND {_BUILDING} "
        "ORDER BY r.seq LIMIT 1 FOR UPDATE OF r SKIP LOCKED) "
        "UPDATE archive_ranges r SET state = 'running', attempt = r.attempt + 1, worker = $2, "
        "started_at = now(), heartbeat_at = now(), finished_at = NULL, candidates_done = 0, "
        "games = 0, error = NULL, retryable = true FROM c "
        "WHERE r.archive_id = c.archive_id AND r.seq = c.seq " + _CLAIM_RETURNING,
        *args,
    )
    if row is None:
        return None
    return RangeClaim(
        archive_id=row["archive_id"],
        seq=row["seq"],
        attempt=row["attempt"],
        first_second=row["first_second"],
        end_second=row["end_second"],
        last=row["last"],
        month=row["month"],
    )


_HELD = (
    "archive_id = $1 AND seq = $2 AND attempt = $3 AND state = 'running' "
    "AND EXISTS (SELECT 1 FROM archives a WHERE a.id = $1 AND a.state = 'building')"
)


async def heartbeat(conn: Connection, claim: RangeClaim, candidates_done: int) -> bool:
    """Tell that the range is still worked on; False when it is no longer this claim's."""
    status = await conn.execute(
        f"UPDATE archive_ranges SET heartbeat_at = now(), candidates_done = $4 WHERE {_HELD}",
        claim.archive_id,
        claim.seq,
        claim.attempt,
        candidates_done,
    )
    return status.endswith(" 1")


async def write_part(
    conn: Connection, claim: RangeClaim, first_seq: int, pieces: Sequence[bytes]
) -> None:
    await conn.executemany(
        "INSERT INTO archive_parts (archive_id, range_seq, attempt, seq, data) "
        "VALUES ($1, $2, $3, $4, $5)",
        [
            (claim.archive_id, claim.seq, claim.attempt, first_seq + i, piece)
            for i, piece in enumerate(pieces)
        ],
    )


async def finish_range(
    conn: Connection,
    claim: RangeClaim,
    part: PartSummary,
    *,
    candidates: int,
    games: int,
    tally: dict[str, Any],
    fingerprint: Fingerprint,
) -> bool:
    """Record the range as done with its part, and drop any other attempt's pieces; False
    (and this attempt's pieces dropped) when the range is no longer this claim's."""
    async with transaction(conn):
        status = await conn.execute(
            "UPDATE archive_ranges SET state = 'done', finished_at = now(), heartbeat_at = now(), "
            "crc32 = $4, raw_bytes = $5, deflate_bytes = $6, candidates_done = $7, games = $8, "
            f"tally = $9, source_rows = $10, source_sum = $11 WHERE {_HELD}",
            claim.archive_id,
            claim.seq,
            claim.attempt,
            part.crc32,
            part.raw_bytes,
            part.deflate_bytes,
            candidates,
            games,
            tally,
            fingerprint.rows,
            fingerprint.hash_sum,
        )
        ours = status.endswith(" 1")
        await conn.execute(
            "DELETE FROM archive_parts WHERE archive_id = $1 AND range_seq = $2 "
            + ("AND attempt <> $3" if ours else "AND attempt = $3"),
            claim.archive_id,
            claim.seq,
            claim.attempt,
        )
    return ours


async def fail_range(conn: Connection, claim: RangeClaim, error: str, *, retryable: bool) -> None:
    """Record this attempt's failure (another attempt may take the range over) and drop its
    pieces."""
    async with transaction(conn):
        await conn.execute(
            "UPDATE archive_ranges SET state = 'failed', finished_at = now(), error = $4, "
            f"retryable = $5 WHERE {_HELD}",
            claim.archive_id,
            claim.seq,
            claim.attempt,
            error[:2000],
            retryable,
        )
        await conn.execute(
            "DELETE FROM archive_parts WHERE archive_id = $1 AND range_seq = $2 AND attempt = $3",
            claim.archive_id,
            claim.seq,
            claim.attempt,
        )


async def ranges_of(conn: Connection, archive_id: int) -> list[RangeRow]:
    rows = await conn.fetch(
        "SELECT seq, state, attempt, retryable, planned, candidates_done, games, worker, error, "
        "crc32, raw_bytes, deflate_bytes, tally, started_at, finished_at, first_second, "
        "end_second, source_rows, source_sum "
        "FROM archive_ranges WHERE archive_id = $1 ORDER BY seq",
        archive_id,
    )
    return [_range_row(dict(row)) for row in rows]


def _range_row(values: dict[str, Any]) -> RangeRow:
    rows, hash_sum = values.pop("source_rows"), values.pop("source_sum")
    fingerprint = None if rows is None else Fingerprint(rows, int(hash_sum))
    return RangeRow(**values, fingerprint=fingerprint)


async def replace_ranges(
    conn: Connection,
    archive_id: int,
    plan: Sequence[tuple[datetime, datetime, int]],
    kept: Sequence[int | None],
) -> list[int]:
    """Make ``plan`` (``(first_second, end_second, planned candidates)`` in archive order) the
    building archive's ranges, in one transaction: range ``i`` is numbered after the build's
    last range so far (a range job id is never used twice, and seq order stays archive order);
    ``kept[i]``, when not None, is the ``seq`` of a done range with the same edges that moves
    there with its part; every other range of the plan is new and queued, and the build's
    ranges that are not kept are deleted with their parts. Returns the new ranges' ``seq``
    (empty when the archive is no longer building: nothing changes then)."""
    if len(kept) != len(plan):
        raise ValueError("one entry of kept per range of the plan")
    async with transaction(conn):
        base: int | None = await conn.fetchval(
            f"SELECT max(r.seq) + 1 FROM archive_ranges r WHERE r.archive_id = $1 AND {_BUILDING}",
            archive_id,
        )
        if base is None:
            return []
        last = base + len(plan) - 1
        moves = [(old, base + i, plan[i][2]) for i, old in enumerate(kept) if old is not None]
        # A kept range's part follows it (ON UPDATE CASCADE, migration 0010).
        status = await conn.execute(
            "UPDATE archive_ranges r SET seq = m.new_seq, planned = m.planned, "
            "last = (m.new_seq = $2) FROM unnest($3::int[], $4::int[], $5::int[]) "
            "AS m(old_seq, new_seq, planned) "
            "WHERE r.archive_id = $1 AND r.seq = m.old_seq AND r.state = 'done'",
            archive_id,
            last,
            [old for old, _, _ in moves],
            [new for _, new, _ in moves],
            [planned for _, _, planned in moves],
        )
        if int(status.split()[-1]) != len(moves):
            raise IntegrityError(f"archive {archive_id}: a range to keep is not a done range")
        await conn.execute(
            "DELETE FROM archive_ranges WHERE archive_id = $1 AND seq < $2", archive_id, base
        )
        fresh = [
            (archive_id, base + i, first, end, base + i == last, planned)
            for i, ((first, end, planned), old) in enumerate(zip(plan, kept, strict=True))
            if old is None
        ]
        await conn.executemany(
            "INSERT INTO archive_ranges (archive_id, seq, first_second, end_second, last, planned) "
            "VALUES ($1, $2, $3, $4, $5, $6)",
            fresh,
        )
    return [row[1] for row in fresh]


async def part_pieces(
    conn: Connection, archive_id: int, range_seq: int, attempt: int, first_seq: int, count: int
) -> list[bytes]:
    """Pieces ``first_seq ..`` (at most ``count``) of a range's part, in order."""
    rows = await conn.fetch(
        "SELECT data FROM archive_parts WHERE archive_id = $1 AND range_seq = $2 "
        "AND attempt = $3 AND seq >= $4 ORDER BY seq LIMIT $5",
        archive_id,
        range_seq,
        attempt,
        first_seq,
        count,
    )
    return [r["data"] for r in rows]


async def drop_parts(conn: Connection, archive_id: int) -> None:
    """The parts once the archive's chunks hold their bytes (the ranges stay, for operators)."""
    await conn.execute("DELETE FROM archive_parts WHERE archive_id = $1", archive_id)


async def building_progress(conn: Connection) -> list[BuildProgress]:
    """Every building archive that has ranges, oldest first."""
    rows = await conn.fetch(
        "SELECT a.id AS archive_id, a.month, a.created_at, count(*) AS ranges, "
        "count(*) FILTER (WHERE r.state = 'done') AS done, "
        "count(*) FILTER (WHERE r.state = 'running') AS running, "
        "count(*) FILTER (WHERE r.state = 'queued') AS queued, "
        "count(*) FILTER (WHERE r.state = 'failed') AS failed, "
        "sum(r.planned)::bigint AS planned, sum(r.candidates_done)::bigint AS candidates_done, "
        "sum(r.games) FILTER (WHERE r.state = 'done')::bigint AS games_done "
        "FROM archives a JOIN archive_ranges r ON r.archive_id = a.id "
        "WHERE a.state = 'building' GROUP BY a.id ORDER BY a.created_at, a.id"
    )
    return [BuildProgress(**(dict(row) | {"games_done": row["games_done"] or 0})) for row in rows]
