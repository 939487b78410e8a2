"""The assembly that scales out (issue 29), on parts of awkward lengths stored as a range stores
them: the chunks copied inside PostgreSQL and those put together across edges make exactly
header + parts + trailer; a part that does not hold what its range recorded, a chunk that does
not hold its part's bytes, and a stored file whose ending is not the trailer are all refused."""

from __future__ import annotations

import hashlib
import os
import zlib
from typing import Any

import pytest

from gomoku_archive.db import archive_store, part_copy, range_store
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import IntegrityError
from gomoku_archive.export import joined_file
from gomoku_archive.export.assembly import write_file
from gomoku_archive.profile.deflate_parts import gzip_trailer
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.storage.chunks import CHUNK_SIZE, digest_stored_bytes

AUG = Month(2026, 8)
LENGTHS = [300_001, 5, 0, 2 * CHUNK_SIZE, CHUNK_SIZE - 10, 3 * CHUNK_SIZE + 7]
"""Parts shorter than a chunk, empty, exact multiples, and long ones starting anywhere."""


async def stored_parts(conn: Connection, lengths: list[int]) -> tuple[int, list[bytes]]:
    """A building archive with done ranges whose parts are random bytes of ``lengths``."""
    archive_id = await archive_store.start_building(conn, str(AUG))
    parts = [os.urandom(n) for n in lengths]
    for seq, data in enumerate(parts):
        await conn.execute(
            "INSERT INTO archive_ranges (archive_id, seq, first_second, end_second, last, "
            "planned, state, attempt, crc32, raw_bytes, deflate_bytes, tally) VALUES ($1, $2, "
            "'2026-08-01'::timestamp + make_interval(secs => $2::int), "
            "'2026-08-01'::timestamp + make_interval(secs => $2::int + 1), $3, 1, 'done', 2, "
            "$4, $5, $5, '{}'::jsonb)",
            archive_id,
            seq,
            seq == len(parts) - 1,
            zlib.crc32(data),
            len(data),
        )
        segments = [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
        await conn.executemany(
            "INSERT INTO archive_parts (archive_id, range_seq, attempt, seq, data) "
            "VALUES ($1, $2, 2, $3, $4)",
            [(archive_id, seq, i, segment) for i, segment in enumerate(segments)],
        )
    return archive_id, parts


async def stored_file(conn: Connection, archive_id: int) -> bytes:
    rows = await conn.fetch(
        "SELECT data FROM archive_chunks WHERE archive_id = $1 ORDER BY seq", archive_id
    )
    return b"".join(r["data"] for r in rows)


def expected(ranges: list[RangeRow], parts: list[bytes]) -> bytes:
    trailer = gzip_trailer([(r.crc32 or 0, r.raw_bytes or 0) for r in ranges])
    return GZIP_HEADER + b"".join(parts) + trailer


@pytest.mark.parametrize("connections", [1, 3])
async def test_the_chunks_hold_header_parts_and_trailer(pool: Pool, connections: int) -> None:
    async with pool.acquire() as conn:
        archive_id, parts = await stored_parts(conn, LENGTHS)
        ranges = await range_store.ranges_of(conn, archive_id)
        written = await write_file(pool, conn, archive_id, AUG, ranges, connections=connections)
        data = await stored_file(conn, archive_id)
        sizes = await conn.fetch(
            "SELECT length(data) AS n FROM archive_chunks WHERE archive_id = $1 ORDER BY seq",
            archive_id,
        )
    assert data == expected(ranges, parts)
    assert written.built.sha256 == hashlib.sha256(data).hexdigest()
    assert written.built.bytes == len(data)
    assert all(r["n"] == CHUNK_SIZE for r in sizes[:-1])


async def test_a_part_short_of_its_recorded_length_is_refused(pool: Pool) -> None:
    async with pool.acquire() as conn:
        archive_id, _ = await stored_parts(conn, LENGTHS)
        await conn.execute(
            "DELETE FROM archive_parts WHERE archive_id = $1 AND range_seq = 3 AND seq = 1",
            archive_id,
        )
        ranges = await range_store.ranges_of(conn, archive_id)
        with pytest.raises(IntegrityError, match="range 3's part holds 262144 bytes"):
            await write_file(pool, conn, archive_id, AUG, ranges)


async def test_a_chunk_that_differs_from_its_part_is_found_by_the_read_back(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = part_copy.copy_part_chunks

    async def copy_then_spoil(conn: Connection, *args: Any, **kwargs: Any) -> int:
        written = await copy(conn, *args, **kwargs)
        await conn.execute(
            "UPDATE archive_chunks SET data = set_byte(data, 99, (get_byte(data, 99) + 1) % 256) "
            "WHERE archive_id = $1 AND seq = $2",
            args[0].file_id,
            kwargs["first_chunk"],
        )
        return written

    monkeypatch.setattr(joined_file.part_copy, "copy_part_chunks", copy_then_spoil)
    async with pool.acquire() as conn:
        archive_id, _ = await stored_parts(conn, [5 * CHUNK_SIZE])
        ranges = await range_store.ranges_of(conn, archive_id)
        with pytest.raises(IntegrityError, match="segments of range 0's part differ"):
            await write_file(pool, conn, archive_id, AUG, ranges)


async def test_the_sha256_pass_checks_the_trailer_and_the_layout(pool: Pool) -> None:
    async with pool.acquire() as conn:
        archive_id, _ = await stored_parts(conn, [CHUNK_SIZE + 3])
        ranges = await range_store.ranges_of(conn, archive_id)
        written = await write_file(pool, conn, archive_id, AUG, ranges)
        data = await stored_file(conn, archive_id)
        size, head, tail = written.built.bytes, data[:10], data[-8:]
        assert await digest_stored_bytes(conn, archive_id, size=size, head=head, tail=tail) == (
            written.built.sha256
        )
        with pytest.raises(IntegrityError, match="does not end as written"):
            await digest_stored_bytes(conn, archive_id, size=size, head=head, tail=b"x" * 8)
        with pytest.raises(IntegrityError, match="does not start as written"):
            await digest_stored_bytes(conn, archive_id, size=size, head=b"y" * 10, tail=tail)
        await conn.execute(
            "DELETE FROM archive_chunks WHERE archive_id = $1 AND seq = 0", archive_id
        )
        with pytest.raises(IntegrityError, match="chunk 0 is missing"):
            await digest_stored_bytes(conn, archive_id, size=size, head=head, tail=tail)
