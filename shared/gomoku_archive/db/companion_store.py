"""Every statement on the Parquet companions (migration 0012): a range's companion part (its
row group's segments and footer), a companion's building row and its chunks' record, its state
following its archive's, and what the manifest and the planner read.

A companion is an ``archives`` row whose ``companion_of`` names its archive (so the download,
cache and mirror code serve it as a file like any other); ``follow_archives`` is the one place
its state changes after it is built, in the transaction that publishes (or restores, or keeps)
its archive."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gomoku_archive.db.archive_store import (
    ARCHIVES_CHANNEL,
    ROW_COLUMNS,
    ArchiveRow,
    archive_row,
)
from gomoku_archive.db.pool import Connection, transaction
from gomoku_archive.db.range_store import RangeClaim

_SERVED = "c.state IN ('published', 'superseded') AND c.file_name IS NOT NULL"


@dataclass(frozen=True, slots=True)
class BuiltCompanion:
    """A companion's file as written and checked, before it is published."""

    file_name: str
    sha256: str
    bytes: int
    rows: int
    row_groups: int
    schema_id: str
    created_by: str


# --- a range's part ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartFooter:
    """A range's companion part beside its segments: its row group's rows, the group's length
    (its segments' bytes) and the footer of the one-group file it was cut from."""

    range_seq: int
    attempt: int
    rows: int
    body_bytes: int
    footer: bytes


async def write_part(
    conn: Connection, claim: RangeClaim, first_seq: int, segments: Sequence[bytes]
) -> None:
    await conn.executemany(
        "INSERT INTO companion_parts (archive_id, range_seq, attempt, seq, data) "
        "VALUES ($1, $2, $3, $4, $5)",
        [
            (claim.archive_id, claim.seq, claim.attempt, first_seq + i, segment)
            for i, segment in enumerate(segments)
        ],
    )


async def write_part_footer(
    conn: Connection, claim: RangeClaim, *, rows: int, body_bytes: int, footer: bytes
) -> None:
    """Written once the part's segments are: a part has a footer only when it is whole."""
    await conn.execute(
        "INSERT INTO companion_part_footers "
        "(archive_id, range_seq, attempt, rows, body_bytes, footer) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        claim.archive_id,
        claim.seq,
        claim.attempt,
        rows,
        body_bytes,
        footer,
    )


async def part_footers(
    conn: Connection, archive_id: int, parts: Sequence[tuple[int, int]]
) -> list[PartFooter | None]:
    """The footers of the parts ``(range_seq, attempt)``, in the order asked; None for a part
    without one."""
    rows = await conn.fetch(
        "SELECT s.range_seq, s.attempt, f.rows, f.body_bytes, f.footer "
        "FROM unnest($2::int[], $3::int[]) WITH ORDINALITY AS s(range_seq, attempt, ord) "
        "LEFT JOIN companion_part_footers f ON f.archive_id = $1 "
        "AND f.range_seq = s.range_seq AND f.attempt = s.attempt ORDER BY s.ord",
        archive_id,
        [seq for seq, _ in parts],
        [attempt for _, attempt in parts],
    )
    return [None if r["rows"] is None else PartFooter(**dict(r)) for r in rows]


async def drop_parts(conn: Connection, archive_id: int) -> None:
    """Every companion part of a build (its file written, or the build given up)."""
    async with transaction(conn):
        await conn.execute("DELETE FROM companion_part_footers WHERE archive_id = $1", archive_id)
        await conn.execute("DELETE FROM companion_parts WHERE archive_id = $1", archive_id)


# --- the companion's row ------------------------------------------------------------------------


async def start_building(conn: Connection, archive_id: int, month: str) -> int:
    """A building companion row of ``archive_id`` (invisible until ``follow_archives``)."""
    companion_id: int = await conn.fetchval(
        "INSERT INTO archives (month, state, companion_of) VALUES ($1, 'building', $2) "
        "RETURNING id",
        month,
        archive_id,
    )
    return companion_id


async def record_built(conn: Connection, companion_id: int, built: BuiltCompanion) -> bool:
    """The companion's file, written and read back: still building until its archive is
    published with it. False (nothing recorded) when a row holds these very bytes already: the
    same games' companion, of an earlier build (see ``give_to``)."""
    status = await conn.execute(
        "UPDATE archives SET file_name = $2, sha256 = $3, bytes = $4, games = $5, "
        "candidate_games = $5, row_groups = $6, schema_id = $7, created_by = $8 "
        "WHERE id = $1 AND state = 'building' "
        "AND NOT EXISTS (SELECT 1 FROM archives o WHERE o.file_name = $2)",
        companion_id,
        built.file_name,
        built.sha256,
        built.bytes,
        built.rows,
        built.row_groups,
        built.schema_id,
        built.created_by,
    )
    return _count(status) == 1


async def drop_building(conn: Connection, companion_id: int) -> None:
    """A companion that could not be built: its row and chunks go."""
    await conn.execute("DELETE FROM archives WHERE id = $1 AND state = 'building'", companion_id)


async def attach_to_file(conn: Connection, companion_id: int, file_name: str) -> None:
    """Give a build's companion to the served archive whose bytes the build made again (a
    rebuild that comes out ``unchanged`` or ``restored`` drops its own archive row, which
    would take the companion along): only when that archive has no companion yet."""
    await conn.execute(
        "UPDATE archives c SET companion_of = a.id FROM archives a "
        "WHERE c.id = $1 AND c.state = 'building' AND a.file_name = $2 "
        "AND a.companion_of IS NULL AND a.state IN ('published', 'superseded') "
        "AND NOT EXISTS (SELECT 1 FROM archives o WHERE o.companion_of = a.id "
        "AND o.state IN ('published', 'superseded'))",
        companion_id,
        file_name,
    )


async def give_to(conn: Connection, file_name: str, archive_id: int) -> None:
    """The served companion ``file_name`` (the same games' file, made by an earlier build)
    becomes the companion of ``archive_id``, unless that archive has one: a month rebuilt with
    other archive bytes but the same games (another K) keeps its companion's file."""
    await conn.execute(
        "UPDATE archives c SET companion_of = $2 WHERE c.file_name = $1 "
        "AND c.companion_of IS NOT NULL AND c.companion_of <> $2 "
        "AND c.state IN ('published', 'superseded') "
        "AND NOT EXISTS (SELECT 1 FROM archives o WHERE o.companion_of = $2 "
        "AND o.state IN ('published', 'superseded'))",
        file_name,
        archive_id,
    )


async def follow_archives(conn: Connection, month: str) -> bool:
    """Every companion of ``month`` takes its archive's state: superseded with it, published
    again with it, and a built one published once its archive is. Returns whether the month's
    published companion changed (and then notifies, as a publish does). Call it in the
    transaction that changes the archives' states."""
    superseded = await conn.execute(
        "UPDATE archives c SET state = 'superseded', superseded_at = now() FROM archives a "
        "WHERE c.companion_of = a.id AND c.month = $1 AND c.state = 'published' "
        "AND a.state <> 'published'",
        month,
    )
    restored = await conn.execute(
        "UPDATE archives c SET state = 'published', superseded_at = NULL, published_at = now() "
        "FROM archives a WHERE c.companion_of = a.id AND c.month = $1 "
        "AND c.state = 'superseded' AND a.state = 'published'",
        month,
    )
    published = await conn.execute(
        "UPDATE archives c SET state = 'published', finished_at = now(), published_at = now(), "
        "first_published_at = now(), built_at = now() FROM archives a "
        "WHERE c.companion_of = a.id AND c.month = $1 AND c.state = 'building' "
        "AND c.file_name IS NOT NULL AND a.state = 'published'",
        month,
    )
    changed = any(_count(status) for status in (superseded, restored, published))
    if changed:
        await conn.execute("SELECT pg_notify($1, $2)", ARCHIVES_CHANNEL, month)
    return changed


def _count(status: str) -> int:
    return int(status.split()[-1])


# --- what the manifest and the planner read ---------------------------------------------------


_WITHOUT_COMPANION = (
    "a.state = 'published' AND a.companion_of IS NULL AND a.file_name IS NOT NULL "
    f"AND NOT EXISTS (SELECT 1 FROM archives c WHERE c.companion_of = a.id AND {_SERVED})"
)


async def archives_without_companion(conn: Connection) -> list[int]:
    """Published archives with a file and no served companion, oldest month first (what
    ``build_companion`` jobs are planned for)."""
    rows = await conn.fetch(
        f"SELECT a.id FROM archives a WHERE {_WITHOUT_COMPANION} ORDER BY a.month, a.id"
    )
    return [r["id"] for r in rows]


async def archive_without_companion(conn: Connection, archive_id: int) -> ArchiveRow | None:
    """The archive, if it is published with a file and has no served companion."""
    columns = ", ".join(f"a.{c.strip()}" for c in ROW_COLUMNS.split(","))
    row = await conn.fetchrow(
        f"SELECT {columns} FROM archives a WHERE a.id = $1 AND {_WITHOUT_COMPANION}", archive_id
    )
    return None if row is None else archive_row(row)


async def served_companion_id(conn: Connection, archive_id: int) -> int | None:
    """The id of the archive's served companion, if it has one."""
    found: int | None = await conn.fetchval(
        f"SELECT c.id FROM archives c WHERE c.companion_of = $1 AND {_SERVED}", archive_id
    )
    return found
