"""The month export, used by both the worker and the CLI: one snapshot of the month's candidates
→ classify → profile lines → deterministic gzip → 256 KiB chunks in PostgreSQL → bytes read back
and checked → one transaction publishes. Memory stays flat: rows arrive through a server-side
cursor and at most a few chunks are held before they are written."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Protocol

from shared.archive_names import CHUNK_SIZE, archive_file_name
from shared.archive_stream import ArchiveStream
from shared.classify import classify
from shared.db import archive_store, locks, source
from shared.db.archive_store import ArchiveRow, BuiltFile, Counts
from shared.db.pool import Connection, Pool
from shared.errors import ExportFailed, ExportLocked
from shared.game import Reason
from shared.logs import get_logger
from shared.manifest import ALL_REASONS, ALL_TERMINATIONS
from shared.months import Month
from shared.profile import game_line, order_key

log = get_logger(__name__)

_CHUNKS_PER_WRITE = 4
"""Chunks buffered before one INSERT round trip: 1 MiB of compressed bytes."""
_BLOCK_CHARS = 256 * 1024
"""Formatted text gathered before it goes to the compressor thread as one block."""
_PROGRESS_EVERY = 2000
"""Rows between two progress reports (each one costs the terminal a redraw)."""

Outcome = Literal["published", "unchanged", "restored", "skipped"]


class Progress(Protocol):
    """Told how far an export is; the CLI draws a bar with it, the worker ignores it."""

    def start(self, month: Month, candidates: int) -> None: ...

    def advance(self, candidates_done: int, games: int) -> None: ...


@dataclass(frozen=True, slots=True)
class ExportResult:
    month: Month
    outcome: Outcome
    archive: ArchiveRow | None
    duration_seconds: float

    def summary(self) -> dict[str, object]:
        """The one-line JSON summary the CLI prints and the worker logs."""
        row = self.archive
        return {
            "month": str(self.month),
            "outcome": self.outcome,
            "file": row.file_name if row else None,
            "games": row.games if row else 0,
            "candidates": row.candidate_games if row else 0,
            "excluded": row.excluded_games if row else 0,
            "bytes": row.bytes if row else 0,
            "sha256": row.sha256 if row else None,
            "seconds": round(self.duration_seconds, 3),
        }


async def export_month(
    pool: Pool,
    *,
    table: str,
    month: Month,
    force: bool = False,
    progress: Progress | None = None,
) -> ExportResult:
    """Build and publish ``month``'s archive under the month's export lock.

    Without ``force`` a month that already has a published archive is ``skipped``. Raises
    ``ExportLocked`` when another process holds the lock. Any other failure is recorded on a
    ``failed`` row (when the database is still reachable) and re-raised.
    """
    started = time.monotonic()
    async with pool.acquire() as lock_conn:
        if not await locks.try_lock_month(lock_conn, month):
            raise ExportLocked(f"another process is exporting {month}")
        try:
            if not force:
                existing = await archive_store.published_for_month(lock_conn, str(month))
                if existing is not None:
                    return ExportResult(month, "skipped", existing, time.monotonic() - started)
            removed = await archive_store.remove_leftovers(lock_conn, str(month))
            if removed:
                log.info("export_leftovers_removed", month=str(month), archives=removed)
            archive_id = await archive_store.start_building(lock_conn, str(month))
            try:
                counts, built = await _build(pool, lock_conn, archive_id, table, month, progress)
                outcome, row = await archive_store.publish(
                    lock_conn, archive_id, str(month), counts, built
                )
            except asyncio.CancelledError:
                # Shut down mid-export: the building row is invisible already; drop it now
                # rather than leave it for the next run, if the database still answers.
                await asyncio.shield(_forget(lock_conn, archive_id))
                raise
            except Exception as exc:
                await _record_failure(lock_conn, archive_id, exc)
                raise
        finally:
            if not lock_conn.is_closed():
                await locks.unlock_month(lock_conn, month)
    result = ExportResult(month, outcome, row, time.monotonic() - started)
    log.info("export_finished", **result.summary())
    return result


async def _build(
    pool: Pool,
    write_conn: Connection,
    archive_id: int,
    table: str,
    month: Month,
    progress: Progress | None,
) -> tuple[Counts, BuiltFile | None]:
    exclusions: Counter[str] = Counter()
    results: Counter[str] = Counter()
    chunks = _ChunkWriter(write_conn, archive_id)
    stream: _BackgroundStream | None = None
    lines: list[str] = []
    held = 0
    done = 0
    previous_key: tuple[object, str] | None = None

    async with pool.acquire() as read_conn, source.snapshot(read_conn):
        if progress is not None:  # the count is a second scan of the month: only for a bar
            progress.start(month, await source.count_candidates(read_conn, table, month))
        async for row in source.stream_candidates(read_conn, table, month):
            done += 1
            verdict = classify(row)
            if isinstance(verdict, Reason):
                exclusions[verdict.value] += 1
            else:
                key = order_key(verdict)
                if previous_key is not None and key <= previous_key:
                    raise ExportFailed(f"{month}: the source returned games out of archive order")
                previous_key = key
                results[verdict.termination.value] += 1
                line = game_line(verdict)
                lines.append(line)
                held += len(line)
                if held >= _BLOCK_CHARS:
                    stream = stream or _BackgroundStream()
                    await chunks.add(await stream.write("".join(lines).encode("utf-8")))
                    lines.clear()
                    held = 0
            if progress is not None and done % _PROGRESS_EVERY == 0:
                progress.advance(done, done - sum(exclusions.values()))
    if progress is not None:
        progress.advance(done, done - sum(exclusions.values()))

    excluded = sum(exclusions.values())
    counts = Counts(
        games=done - excluded,
        candidate_games=done,
        excluded_games=excluded,
        exclusions={r: exclusions[r] for r in ALL_REASONS},
        results={t: results[t] for t in ALL_TERMINATIONS},
    )
    if counts.games == 0:
        return counts, None
    stream = stream or _BackgroundStream()
    await chunks.add(await stream.finish("".join(lines).encode("utf-8")))
    await chunks.flush(final=True)
    archive = stream.archive
    await archive_store.check_stored_bytes(
        write_conn, archive_id, sha256=archive.sha256, size=archive.compressed_bytes
    )
    built = BuiltFile(
        sha256=archive.sha256,
        bytes=archive.compressed_bytes,
        uncompressed_bytes=archive.uncompressed_bytes,
        file_name=archive_file_name(month, archive.sha256),
    )
    return counts, built


class _BackgroundStream:
    """``ArchiveStream`` fed in blocks from a worker thread, one block in flight: while zlib and
    SHA-256 work on a block (both release the GIL on large buffers), the event loop reads,
    classifies and formats the next one. The bytes are the same as feeding it line by line
    (``ArchiveStream`` hands zlib fixed blocks whatever the write sizes)."""

    def __init__(self) -> None:
        self.archive = ArchiveStream()
        self._busy: asyncio.Future[bytes] | None = None

    async def write(self, block: bytes) -> bytes:
        """Start compressing ``block``; returns what the previous block compressed to."""
        out = await self._collect()
        self._busy = asyncio.get_running_loop().run_in_executor(None, self.archive.write, block)
        return out

    async def finish(self, block: bytes) -> bytes:
        """The rest of the archive: the previous block's bytes, ``block``'s, and the trailer."""
        out = await self._collect()
        return out + await asyncio.to_thread(self._write_and_finish, block)

    def _write_and_finish(self, block: bytes) -> bytes:
        return self.archive.write(block) + self.archive.finish()

    async def _collect(self) -> bytes:
        busy, self._busy = self._busy, None
        return b"" if busy is None else await busy


class _ChunkWriter:
    """Cuts the compressed bytes into 256 KiB chunks and writes them a few at a time."""

    def __init__(self, conn: Connection, archive_id: int) -> None:
        self._conn = conn
        self._archive_id = archive_id
        self._pending = bytearray()
        self._seq = 0

    async def add(self, data: bytes) -> None:
        self._pending += data
        if len(self._pending) >= _CHUNKS_PER_WRITE * CHUNK_SIZE:
            await self.flush(final=False)

    async def flush(self, *, final: bool) -> None:
        pending = self._pending
        whole = len(pending) if final else len(pending) - len(pending) % CHUNK_SIZE
        chunks = [bytes(pending[i : i + CHUNK_SIZE]) for i in range(0, whole, CHUNK_SIZE)]
        if chunks:
            await archive_store.write_chunks(self._conn, self._archive_id, self._seq, chunks)
            self._seq += len(chunks)
            del pending[:whole]


async def _forget(conn: Connection, archive_id: int) -> None:
    try:
        await archive_store.mark_failed(conn, archive_id, "export cancelled (shutdown)")
    except Exception as exc:  # the row stays 'building' (invisible); the next run removes it
        log.warning("export_cancel_cleanup_failed", archive_id=archive_id, error=str(exc))


async def _record_failure(conn: Connection, archive_id: int, exc: BaseException) -> None:
    try:
        await archive_store.mark_failed(conn, archive_id, f"{type(exc).__name__}: {exc}")
    except Exception as inner:
        log.warning("export_failure_not_recorded", archive_id=archive_id, error=str(inner))
