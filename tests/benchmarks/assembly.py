"""The assembly alone (issue 29): a month's file put together from parts already stored, at
1, 4 and 11.5 GB of parts (a 100M-game month is about 11.5 GB), in MB/s of file, with its steps
apart (the copies and edges on several connections, the per-part read-back, the serial SHA-256
pass); and at 1 GB against the assembly before it (the coordinator alone reading every segment,
writing every chunk through the client and reading all back: ``assemble_through_client`` below,
the code of ``export.assembly`` before issue 29), in turn (new, before, new, before), with the
same SHA-256 from both.

The parts are synthetic and made inside PostgreSQL: each segment is one random 256 KiB run of
stored deflate blocks (sent once, inserted as many times as needed), each part 21 segments and a
shorter tail (about 5.6 MB, a range of K = 50,000 real games is about 4.4 to 5.8 MB) so that
parts start off the chunks' edges, and the last part ends the deflate stream with an empty final
block: the file is a valid gzip member whose CRC-32 and length the trailer combines from the
parts', as for a real month. Each size gets a database of its own, dropped afterwards."""

from __future__ import annotations

import asyncio
import hashlib
import os
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from gomoku_archive.db import archive_store, range_store
from gomoku_archive.db.pool import Connection, create_pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.export.assembly import ASSEMBLY_CONNECTIONS, WrittenFile, write_file
from gomoku_archive.profile.deflate_parts import gzip_trailer
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.storage.chunks import CHUNK_SIZE, check_stored_bytes, chunk_writer
from tests.support import part_segments

from .figures import Figure, Size, bounded, compared
from .support import scratch_database

SECTION = "assembly"
MONTH = Month(2026, 8)
MB = 1_000_000
GB = 1_000 * MB
SEGMENTS_PER_PART = 21
TAIL_PAYLOAD = 100_000


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: tuple[int, ...]
    compared_at: int
    rounds: int


PLANS = {
    Size.SMOKE: Plan(sizes=(12 * MB,), compared_at=12 * MB, rounds=1),
    Size.FULL: Plan(sizes=(1 * GB, 4 * GB, 11_500 * MB), compared_at=1 * GB, rounds=2),
}
AT_LEAST_MB_S = 100.0
"""11.5 GB in under two minutes: a fifth of the ten-minute budget of a 100M-game month."""
AT_LEAST_AGAINST_BEFORE = 2.0


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    figures: list[Figure] = []
    for total in plan.sizes:
        with scratch_database(f"{SECTION}_{total // MB}mb") as dsn:
            figures += asyncio.run(_measure(dsn, total, plan, workdir))
    return figures


async def _measure(dsn: str, total: int, plan: Plan, workdir: Path) -> list[Figure]:
    pool = await create_pool(dsn, min_size=1, max_size=ASSEMBLY_CONNECTIONS + 1)
    try:
        async with pool.acquire() as conn:
            archive_id, ranges = await _synthetic_parts(conn, total)
            news: list[WrittenFile] = []
            befores: list[tuple[float, str]] = []
            for _ in range(plan.rounds if total == plan.compared_at else 1):
                news.append(await write_file(pool, conn, archive_id, MONTH, ranges))
                await _drop_chunks(conn, archive_id)
                if total == plan.compared_at:
                    befores.append(await assemble_through_client(conn, archive_id, ranges))
                    await _drop_chunks(conn, archive_id)
            one_connection = None
            if total == plan.compared_at:
                one_connection = await write_file(
                    pool, conn, archive_id, MONTH, ranges, connections=1
                )
                await _check_gzip(conn, archive_id, one_connection, workdir, total)
                await _drop_chunks(conn, archive_id)
    finally:
        await pool.close()
    best = min(news, key=lambda w: w.seconds)
    size = best.built.bytes
    label = f"{size / GB:.1f} GB" if size >= GB // 2 else f"{size / MB:.0f} MB"
    shas = {w.built.sha256 for w in news} | {sha for _, sha in befores}
    steps = (
        f"{len(ranges)} parts; copies and edges {size / MB / best.copy_seconds:,.0f} MB/s, "
        f"read-back per part {size / MB / best.check_seconds:,.0f} MB/s, "
        f"SHA-256 pass {size / MB / best.sha256_seconds:,.0f} MB/s "
        f"({best.sha256_seconds:.1f} s); {ASSEMBLY_CONNECTIONS} connections; runs "
        + ", ".join(f"{w.seconds:.1f}" for w in news)
        + " s"
    )
    figures = [
        Figure(
            SECTION,
            f"assembly of {label} of parts",
            "MB/s",
            size / MB / best.seconds,
            None,
            None,
            ">=",
            AT_LEAST_MB_S,
            note=steps,
        ),
        Figure(
            SECTION,
            f"assembly SHA-256 pass (serial) at {label}",
            "MB/s",
            size / MB / best.sha256_seconds,
            None,
            None,
            ">=",
            AT_LEAST_MB_S,
        ),
    ]
    if befores and one_connection is not None:
        before = min(seconds for seconds, _ in befores)
        figures += [
            compared(
                SECTION,
                f"assembly of {label} against the assembly before",
                "MB/s",
                size / MB / best.seconds,
                size / MB / before,
                "the coordinator alone through the client",
                at_least=AT_LEAST_AGAINST_BEFORE,
                note=f"before: runs {', '.join(f'{s:.1f}' for s, _ in befores)} s; with one "
                f"connection {one_connection.seconds:.1f} s",
            ),
            bounded(
                SECTION,
                f"assembly SHA-256s at {label}, new and before",
                "distinct",
                float(len(shas | {one_connection.built.sha256})),
                at_most=1.0,
            ),
        ]
    return figures


# --- the parts ----------------------------------------------------------------------------


def _stored_blocks(payload: bytes, *, final: bool = False) -> bytes:
    """``payload`` as stored deflate blocks (at most 65,535 bytes each), byte-aligned."""
    out = bytearray()
    for i in range(0, len(payload), 65_535):
        block = payload[i : i + 65_535]
        out += b"\0" + struct.pack("<HH", len(block), len(block) ^ 0xFFFF) + block
    if final:
        out += b"\1" + struct.pack("<HH", 0, 0xFFFF)
    return bytes(out)


def _segment() -> tuple[bytes, bytes]:
    """A segment of exactly CHUNK_SIZE bytes of stored blocks, and its payload."""
    blocks = 5
    payload = os.urandom(CHUNK_SIZE - 5 * blocks)
    sizes = [len(payload) // blocks] * (blocks - 1)
    sizes.append(len(payload) - sum(sizes))
    out, at = bytearray(), 0
    for n in sizes:
        out += _stored_blocks(payload[at : at + n])
        at += n
    assert len(out) == CHUNK_SIZE
    return bytes(out), payload


async def _synthetic_parts(conn: Connection, total: int) -> tuple[int, list[RangeRow]]:
    """An archive being built whose done ranges hold parts of about ``total`` bytes in all."""
    segment, payload = _segment()
    tail_payload = os.urandom(TAIL_PAYLOAD)
    tail, last_tail = _stored_blocks(tail_payload), _stored_blocks(tail_payload, final=True)
    part_bytes = SEGMENTS_PER_PART * CHUNK_SIZE + len(tail)
    parts = max(2, round(total / part_bytes))
    crc = 0
    for _ in range(SEGMENTS_PER_PART):
        crc = zlib.crc32(payload, crc)
    crc = zlib.crc32(tail_payload, crc)
    raw = SEGMENTS_PER_PART * len(payload) + TAIL_PAYLOAD
    archive_id = await archive_store.start_building(conn, str(MONTH))
    await conn.execute(
        "INSERT INTO archive_ranges (archive_id, seq, first_second, end_second, last, planned, "
        "state, attempt, crc32, raw_bytes, deflate_bytes, tally) "
        "SELECT $1, g, '2026-08-01'::timestamp + make_interval(secs => g::int), "
        "'2026-08-01'::timestamp + make_interval(secs => g::int + 1), g = $2 - 1, 0, 'done', 1, "
        "$3, $4, CASE WHEN g = $2 - 1 THEN $6::bigint ELSE $5::bigint END, '{}'::jsonb "
        "FROM generate_series(0, $2 - 1) AS g",
        archive_id,
        parts,
        crc,
        raw,
        part_bytes,
        part_bytes + len(last_tail) - len(tail),
    )
    for first in range(0, parts, 20):
        await conn.execute(
            "INSERT INTO archive_parts (archive_id, range_seq, attempt, seq, data) "
            "SELECT $1, r, 1, s, CASE WHEN s < $4 THEN $5::bytea WHEN r = $6 - 1 THEN $7 "
            "ELSE $8 END FROM generate_series($2, $3 - 1) AS r, generate_series(0, $4) AS s",
            archive_id,
            first,
            min(first + 20, parts),
            SEGMENTS_PER_PART,
            segment,
            parts,
            last_tail,
            tail,
        )
    await conn.execute("VACUUM ANALYZE archive_parts")
    return archive_id, await range_store.ranges_of(conn, archive_id)


async def _drop_chunks(conn: Connection, archive_id: int) -> None:
    await conn.execute("DELETE FROM archive_chunks WHERE archive_id = $1", archive_id)
    await conn.execute("VACUUM archive_chunks")


async def _check_gzip(
    conn: Connection, archive_id: int, written: WrittenFile, workdir: Path, total: int
) -> None:
    """The stored file is one valid gzip member (decompressed in full up to 1 GB)."""
    if total > GB:
        return
    inflate = zlib.decompressobj(31)
    raw = 0
    digest = hashlib.sha256()
    async for _, data in archive_store.stored_chunks(conn, archive_id):
        digest.update(data)
        raw += len(inflate.decompress(data))
    assert inflate.eof and not inflate.unused_data, "not one complete gzip member"
    assert raw == written.built.uncompressed_bytes
    assert digest.hexdigest() == written.built.sha256


# --- the assembly before issue 29, for the comparison ---------------------------------------


async def assemble_through_client(
    conn: Connection, archive_id: int, ranges: list[RangeRow]
) -> tuple[float, str]:
    """The coordinator alone: every segment read, every chunk written and hashed, all read back
    (``export.assembly`` before issue 29). Returns its seconds and the file's SHA-256."""
    started = time.monotonic()
    chunks = chunk_writer(conn, archive_id)
    digest = hashlib.sha256()
    size = 0

    async def emit(data: bytes) -> None:
        nonlocal size
        digest.update(data)
        size += len(data)
        await chunks.add(data)

    await emit(GZIP_HEADER)
    for row in ranges:
        seq = 0
        while segments := await part_segments(conn, archive_id, row.seq, row.attempt, seq, 4):
            for segment in segments:
                await emit(segment)
            seq += len(segments)
    await emit(gzip_trailer([(r.crc32 or 0, r.raw_bytes or 0) for r in ranges]))
    await chunks.flush(final=True)
    await check_stored_bytes(conn, archive_id, sha256=digest.hexdigest(), size=size)
    return time.monotonic() - started, digest.hexdigest()
