"""The SQL of the assembly that scales out: a build's parts (segments of ``segment_size`` bytes)
copied into a file's chunks (``archive_chunks``) inside PostgreSQL, so that their bytes never
cross a client; the slices the chunks across a part's edge are put together from; and the
read-back check of a part's span of the file against its segments. Two files are made so: the
archive from its ranges' deflate parts (``archive_parts``), and its Parquet companion from the
same ranges' row groups (``companion_parts``), each into its own row's chunks (``Parts``).

Positions inside a part are given in segments and bytes (``segment``, ``split``) by the caller, so
no statement multiplies past PostgreSQL's ``integer``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gomoku_archive.db.pool import Connection

PartsTable = Literal["archive_parts", "companion_parts"]
_TABLES: tuple[PartsTable, ...] = ("archive_parts", "companion_parts")


@dataclass(frozen=True, slots=True)
class Parts:
    """Build ``archive_id``'s parts in ``table``, copied into the chunks of row ``file_id``
    (the archive itself, or its companion)."""

    table: PartsTable
    archive_id: int
    file_id: int

    def __post_init__(self) -> None:
        if self.table not in _TABLES:  # it is written into the statements
            raise ValueError(f"not a table of parts: {self.table!r}")


def archive_parts(archive_id: int) -> Parts:
    """The archive's deflate parts, into its own chunks."""
    return Parts("archive_parts", archive_id, archive_id)


_PART = "archive_id = $1 AND range_seq = $2 AND attempt = $3"


@dataclass(frozen=True, slots=True)
class PartSegments:
    """What a part's segments hold: their number, their bytes, the highest ``seq``, and how many
    are not ``segment_size`` long."""

    segments: int
    bytes: int
    last_seq: int
    short: int


async def part_segments_summary(
    conn: Connection, parts: Parts, range_seq: int, attempt: int, segment_size: int
) -> PartSegments:
    row = await conn.fetchrow(
        "SELECT count(*) AS segments, coalesce(sum(length(data)), 0)::bigint AS bytes, "
        "coalesce(max(seq), -1) AS last_seq, "
        f"count(*) FILTER (WHERE length(data) <> $4) AS short FROM {parts.table} WHERE {_PART}",
        parts.archive_id,
        range_seq,
        attempt,
        segment_size,
    )
    assert row is not None
    return PartSegments(**dict(row))


async def copy_part_chunks(
    conn: Connection,
    parts: Parts,
    range_seq: int,
    attempt: int,
    *,
    first_chunk: int,
    count: int,
    first_segment: int,
    split: int,
) -> int:
    """Write chunks ``first_chunk ..`` (``count`` of them) of the file from the part: chunk
    ``first_chunk + i`` is segment ``first_segment + i`` from byte ``split`` (0-based) on, then the
    first ``split`` bytes of the next segment. Returns the number of chunks written."""
    table = parts.table
    status = await conn.execute(
        "INSERT INTO archive_chunks (archive_id, seq, data) "
        "SELECT $8, $4 + (a.seq - $5), CASE WHEN $6 = 0 THEN a.data "
        "ELSE substring(a.data FROM $6 + 1) || substring(b.data FOR $6) END "
        f"FROM {table} a LEFT JOIN {table} b ON b.archive_id = a.archive_id "
        "AND b.range_seq = a.range_seq AND b.attempt = a.attempt AND b.seq = a.seq + 1 "
        "WHERE a.archive_id = $1 AND a.range_seq = $2 AND a.attempt = $3 "
        "AND a.seq >= $5 AND a.seq < $5 + $7",
        parts.archive_id,
        range_seq,
        attempt,
        first_chunk,
        first_segment,
        split,
        count,
        parts.file_id,
    )
    return int(status.rsplit(" ", 1)[1])


async def part_slices(
    conn: Connection, parts: Parts, slices: Sequence[tuple[int, int, int, int, int]]
) -> list[bytes | None]:
    """The bytes of each ``(range_seq, attempt, segment, start, length)`` (``start`` 0-based), in
    the order asked; None for a segment that is not there. Only those bytes leave the server."""
    rows = await conn.fetch(
        "SELECT s.ord, substring(p.data FROM s.start + 1 FOR s.len) AS data "
        "FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::int[]) "
        "WITH ORDINALITY AS s(range_seq, attempt, seq, start, len, ord) "
        f"LEFT JOIN {parts.table} p ON p.archive_id = $1 AND p.range_seq = s.range_seq "
        "AND p.attempt = s.attempt AND p.seq = s.seq ORDER BY s.ord",
        parts.archive_id,
        [s[0] for s in slices],
        [s[1] for s in slices],
        [s[2] for s in slices],
        [s[3] for s in slices],
        [s[4] for s in slices],
    )
    return [r["data"] for r in rows]


async def part_span_mismatches(
    conn: Connection,
    parts: Parts,
    range_seq: int,
    attempt: int,
    *,
    first_chunk: int,
    split: int,
    chunk_size: int,
) -> int:
    """Read the part's span of the file back from the stored chunks and count the segments it
    differs from: segment ``k`` starts in chunk ``first_chunk + k`` at byte ``split`` (0-based)
    and runs on into the next chunk when it does not fit. A missing chunk is a difference."""
    value = await conn.fetchval(
        f"SELECT count(*) FROM {parts.table} p "
        "LEFT JOIN archive_chunks x ON x.archive_id = $7 AND x.seq = $4 + p.seq "
        "LEFT JOIN archive_chunks y ON y.archive_id = $7 AND y.seq = $4 + p.seq + 1 "
        "WHERE p.archive_id = $1 AND p.range_seq = $2 AND p.attempt = $3 "
        "AND p.data IS DISTINCT FROM (substring(x.data FROM $5 + 1 FOR length(p.data)) "
        "|| CASE WHEN length(p.data) > $6 - $5 "
        "THEN substring(y.data FOR length(p.data) - ($6 - $5)) ELSE ''::bytea END)",
        parts.archive_id,
        range_seq,
        attempt,
        first_chunk,
        split,
        chunk_size,
        parts.file_id,
    )
    return int(value)
