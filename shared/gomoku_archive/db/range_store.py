"""The SQL of a month's ranges (``archive_ranges``) and their parts (``archive_parts``): the
plan, claims and heartbeats, a range's finished part, and what the coordinator, the assembly
and operators read.

Every write of a range names the attempt that claimed it, and only the holder of the range's
current attempt of a ``building`` archive can change it: a worker that was thought dead and
taken over, or whose build was abandoned, finds its writes refused and stops.

A change that makes ranges claimable (a plan, a new plan, a failure to try again) is announced
on ``RANGES_QUEUED_CHANNEL`` in the transaction that makes it, so a listener that hears it reads
the change (``db.range_notices``). A range's end is not announced: PostgreSQL wakes every
listening session for every notification, and at 64 workers ranges end dozens of times a
second; the coordinator looks instead (``round_state``, a few times a second)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from gomoku_archive.db.locks import lock_held_sql
from gomoku_archive.db.pool import Connection, transaction
from gomoku_archive.db.source import Fingerprint
from gomoku_archive.errors import IntegrityError
from gomoku_archive.profile.deflate_parts import PartSummary

RangeState = Literal["queued", "running", "done", "failed"]

MAX_ATTEMPTS = 3
"""Tries of one range before its month's build fails (a lost connection, a killed worker)."""
STALE_SECONDS = 15.0
"""A running range whose heartbeat is this old is claimable again: its claimer is taken for
dead (SIGKILLed, OOM-killed, its machine gone) and another process takes the range over."""
RANGES_QUEUED_CHANNEL = "gomoku_ranges_queued"
"""NOTIFY channel: ranges of a build (the payload: its archive id) became claimable."""


def _claimable(max_attempts: str, stale: str) -> str:
    """The SQL condition on ``r``: queued, failed with tries left, or running with a stale
    heartbeat; the arguments are the statement's parameters for them."""
    return (
        "(r.state = 'queued' "
        f"OR (r.state = 'failed' AND r.retryable AND r.attempt < {max_attempts}) "
        f"OR (r.state = 'running' AND r.heartbeat_at < now() - make_interval(secs => {stale})))"
    )


def _claim_set(worker: str, stale: str) -> str:
    """The SET of a claim: a new attempt by ``worker``, and since when the range waited (a
    range taken over, from the instant its claimer's heartbeat went stale)."""
    return (
        f"SET state = 'running', attempt = r.attempt + 1, worker = {worker}, "
        "queued_at = CASE WHEN r.state = 'running' "
        f"THEN r.heartbeat_at + make_interval(secs => {stale}) "
        "ELSE coalesce(r.queued_at, now()) END, "
        "started_at = now(), heartbeat_at = now(), finished_at = NULL, candidates_done = 0, "
        "games = 0, error = NULL, retryable = true "
    )


_BUILDING = "EXISTS (SELECT 1 FROM archives a WHERE a.id = r.archive_id AND a.state = 'building')"
_UNDER_WAY = f"a.state = 'building' AND {lock_held_sql('a.month')}"
"""A build under way (on ``archives a``): its row is building and its coordinator holds the
month's lock, as it does from before its ranges are planned until it ends. The ranges of a
build whose coordinator died are worth nothing to anyone: the month's next run removes them."""


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
    planned: int = 0
    """The candidates its plan counted in its seconds."""
    waited_seconds: float = 0.0
    """From the instant it could be claimed to this claim."""


@dataclass(frozen=True, slots=True)
class NextRange:
    """What a range slot's claim found: a range (``claim``), or none; then ``stale_in`` says
    when the first running range of a build under way would go stale (None: none runs), the
    next instant a range could become claimable without a notification."""

    claim: RangeClaim | None
    stale_in: float | None = None


@dataclass(frozen=True, slots=True)
class FailedRange:
    seq: int
    attempt: int
    retryable: bool
    error: str | None


@dataclass(frozen=True, slots=True)
class RoundState:
    """A build's ranges in brief, for its coordinator's waits: cheap at thousands of ranges."""

    open: int
    """Ranges not done."""
    candidates_done: int
    """Candidates of done ranges."""
    games_done: int
    candidates_running: int
    """Candidates read so far by running ranges."""
    failed: tuple[FailedRange, ...]


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
    under_way: bool = True
    """Its coordinator holds the month's lock: otherwise nothing of it runs (``_UNDER_WAY``)."""
    stalled: int = 0
    """Running ranges whose heartbeat is ``STALE_SECONDS`` old: claimable by anyone."""
    wait_median: float | None = None
    """Seconds from claimable to claimed, the median over its ranges' latest claims."""
    wait_max: float | None = None
    oldest_waiting: float | None = None
    """Seconds the longest-waiting claimable range (queued, or failed to try again) has
    waited."""


@dataclass(frozen=True, slots=True)
class RunningRange:
    """A range some worker holds, for operators: who, since when, how long it waited."""

    archive_id: int
    seq: int
    worker: str | None
    attempt: int
    planned: int
    candidates_done: int
    started_at: datetime
    heartbeat_at: datetime
    waited_seconds: float | None
    stale: bool


async def add_ranges(
    conn: Connection, archive_id: int, plan: Sequence[tuple[datetime, datetime, int]]
) -> None:
    """Store the build's plan: ``(first_second, end_second, planned candidates)`` in archive
    order; the last range is the one that ends the deflate stream. Every range slot hears of
    them as the transaction commits."""
    async with transaction(conn):
        await conn.executemany(
            "INSERT INTO archive_ranges (archive_id, seq, first_second, end_second, last, planned) "
            "VALUES ($1, $2, $3, $4, $5, $6)",
            [
                (archive_id, seq, first, end, seq == len(plan) - 1, planned)
                for seq, (first, end, planned) in enumerate(plan)
            ],
        )
        await _notify(conn, RANGES_QUEUED_CHANNEL, archive_id)


async def _notify(conn: Connection, channel: str, archive_id: int) -> None:
    await conn.execute("SELECT pg_notify($1, $2)", channel, str(archive_id))


_CLAIM_RETURNING = (
    "RETURNING r.archive_id, r.seq, r.attempt, r.first_second, r.end_second, r.last, r.planned, "
    "extract(epoch FROM r.started_at - r.queued_at)::float8 AS waited, "
    "(SELECT month FROM archives WHERE id = r.archive_id) AS month"
)


def _claim(row: Any) -> RangeClaim:
    return RangeClaim(
        archive_id=row["archive_id"],
        seq=row["seq"],
        attempt=row["attempt"],
        first_second=row["first_second"],
        end_second=row["end_second"],
        last=row["last"],
        month=row["month"],
        planned=row["planned"],
        waited_seconds=max(float(row["waited"] or 0.0), 0.0),
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
        f"WHERE r.archive_id = $1 {pick}AND r.state <> 'done' AND {_claimable('$3', '$4')} "
        f"AND {_BUILDING} ORDER BY r.seq LIMIT 1 FOR UPDATE OF r SKIP LOCKED) "
        f"UPDATE archive_ranges r {_claim_set('$2', '$4')}FROM c "
        "WHERE r.archive_id = c.archive_id AND r.seq = c.seq " + _CLAIM_RETURNING,
        *args,
    )
    return None if row is None else _claim(row)


async def claim_next_range(
    conn: Connection, *, worker: str, max_attempts: int, stale_seconds: float
) -> NextRange:
    """Claim the first claimable range, in archive order (oldest build first, then its
    ranges in order), of any build under way: queued, failed with tries left, or running with
    a heartbeat older than ``stale_seconds`` (its claimer is taken for dead). Ranges that
    other claimers are taking at this instant are skipped, not waited for (``SKIP LOCKED``),
    so any number of workers claim at once and each gets a range of its own."""
    row = await conn.fetchrow(
        "WITH live AS MATERIALIZED (SELECT a.id FROM archives a WHERE "
        f"{_UNDER_WAY}), "
        "c AS (SELECT r.archive_id, r.seq FROM archive_ranges r "
        "WHERE r.archive_id IN (SELECT id FROM live) AND r.state <> 'done' "
        f"AND {_claimable('$2', '$3')} "
        "ORDER BY r.archive_id, r.seq LIMIT 1 FOR UPDATE OF r SKIP LOCKED), "
        f"claimed AS (UPDATE archive_ranges r {_claim_set('$1', '$3')}FROM c "
        "WHERE r.archive_id = c.archive_id AND r.seq = c.seq " + _CLAIM_RETURNING + ") "
        "SELECT claimed.*, (SELECT extract(epoch FROM min(s.heartbeat_at) "
        "+ make_interval(secs => $3) - now())::float8 FROM archive_ranges s "
        "WHERE s.archive_id IN (SELECT id FROM live) AND s.state = 'running') AS stale_in "
        "FROM (VALUES (1)) AS one (x) LEFT JOIN claimed ON true",
        worker,
        max_attempts,
        stale_seconds,
    )
    assert row is not None  # one row, claimed or not
    if row["archive_id"] is None:
        stale_in = row["stale_in"]
        return NextRange(None, None if stale_in is None else max(float(stale_in), 0.0))
    return NextRange(_claim(row))


async def round_state(conn: Connection, archive_id: int) -> RoundState:
    """The build's ranges in brief: how many are open, the done ones' counts, the running
    ones' progress, and the failed ones."""
    row = await conn.fetchrow(
        "SELECT count(*) FILTER (WHERE state <> 'done') AS open, "
        "coalesce(sum(candidates_done) FILTER (WHERE state = 'done'), 0)::bigint AS done, "
        "coalesce(sum(games) FILTER (WHERE state = 'done'), 0)::bigint AS games, "
        "coalesce(sum(candidates_done) FILTER (WHERE state = 'running'), 0)::bigint AS running, "
        "coalesce(array_agg(seq ORDER BY seq) FILTER (WHERE state = 'failed'), '{}') AS failed "
        "FROM archive_ranges WHERE archive_id = $1",
        archive_id,
    )
    assert row is not None  # an aggregate: one row
    failed: tuple[FailedRange, ...] = ()
    if row["failed"]:
        rows = await conn.fetch(
            "SELECT seq, attempt, retryable, error FROM archive_ranges "
            "WHERE archive_id = $1 AND state = 'failed' ORDER BY seq",
            archive_id,
        )
        failed = tuple(FailedRange(**dict(r)) for r in rows)
    return RoundState(
        open=row["open"],
        candidates_done=row["done"],
        games_done=row["games"],
        candidates_running=row["running"],
        failed=failed,
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
    conn: Connection, claim: RangeClaim, first_seq: int, segments: Sequence[bytes]
) -> None:
    await conn.executemany(
        "INSERT INTO archive_parts (archive_id, range_seq, attempt, seq, data) "
        "VALUES ($1, $2, $3, $4, $5)",
        [
            (claim.archive_id, claim.seq, claim.attempt, first_seq + i, segment)
            for i, segment in enumerate(segments)
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
    """Record the range as done with its part, and drop any other attempt's segments; False
    (and this attempt's segments dropped) when the range is no longer this claim's."""
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
    """Record this attempt's failure (another attempt may take the range over: claimable from
    now on) and drop its segments."""
    async with transaction(conn):
        status = await conn.execute(
            "UPDATE archive_ranges SET state = 'failed', finished_at = now(), queued_at = now(), "
            f"error = $4, retryable = $5 WHERE {_HELD}",
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
        if status.endswith(" 1") and retryable:
            await _notify(conn, RANGES_QUEUED_CHANNEL, claim.archive_id)


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
    last range so far (a range's number is never used twice, and seq order stays archive order);
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
        if fresh:
            await _notify(conn, RANGES_QUEUED_CHANNEL, archive_id)
    return [row[1] for row in fresh]


async def drop_parts(conn: Connection, archive_id: int) -> None:
    """The parts once the archive's chunks hold their bytes (the ranges stay, for operators)."""
    await conn.execute("DELETE FROM archive_parts WHERE archive_id = $1", archive_id)


_WAITED = "extract(epoch FROM r.started_at - r.queued_at)::float8"
_STALE = "r.state = 'running' AND r.heartbeat_at < now() - make_interval(secs => $1)"


async def building_progress(
    conn: Connection, *, stale_seconds: float = STALE_SECONDS
) -> list[BuildProgress]:
    """Every building archive that has ranges, oldest first, with its ranges' waits."""
    rows = await conn.fetch(
        "SELECT a.id AS archive_id, a.month, a.created_at, count(*) AS ranges, "
        "count(*) FILTER (WHERE r.state = 'done') AS done, "
        "count(*) FILTER (WHERE r.state = 'running') AS running, "
        "count(*) FILTER (WHERE r.state = 'queued') AS queued, "
        "count(*) FILTER (WHERE r.state = 'failed') AS failed, "
        f"count(*) FILTER (WHERE {_STALE}) AS stalled, "
        "sum(r.planned)::bigint AS planned, sum(r.candidates_done)::bigint AS candidates_done, "
        "sum(r.games) FILTER (WHERE r.state = 'done')::bigint AS games_done, "
        f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {_WAITED}) AS wait_median, "
        f"max({_WAITED}) AS wait_max, "
        "extract(epoch FROM now() - min(r.queued_at) FILTER (WHERE r.state IN "
        "('queued', 'failed')))::float8 AS oldest_waiting, "
        f"{lock_held_sql('a.month')} AS under_way "
        "FROM archives a JOIN archive_ranges r ON r.archive_id = a.id "
        "WHERE a.state = 'building' GROUP BY a.id ORDER BY a.created_at, a.id",
        stale_seconds,
    )
    return [BuildProgress(**(dict(row) | {"games_done": row["games_done"] or 0})) for row in rows]


async def running_ranges(
    conn: Connection, *, stale_seconds: float = STALE_SECONDS
) -> list[RunningRange]:
    """Every running range of a building archive, in archive order: its worker, since when,
    how long it waited, and whether its heartbeat went stale."""
    rows = await conn.fetch(
        "SELECT r.archive_id, r.seq, r.worker, r.attempt, r.planned, r.candidates_done, "
        f"r.started_at, r.heartbeat_at, {_WAITED} AS waited_seconds, ({_STALE}) AS stale "
        "FROM archive_ranges r JOIN archives a ON a.id = r.archive_id "
        "WHERE a.state = 'building' AND r.state = 'running' ORDER BY r.archive_id, r.seq",
        stale_seconds,
    )
    return [RunningRange(**dict(row)) for row in rows]
