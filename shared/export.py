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
"""Chunks buffered before one INSERT round trip: 1 MiB, the export's whole byte buffer."""

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
    stream: ArchiveStream | None = None
    pending = bytearray()
    seq = 0
    done = 0
    previous_key: tuple[object, str] | None = None

    async def flush(final: bool) -> None:
        nonlocal seq
        whole = len(pending) if final else len(pending) - len(pending) % CHUNK_SIZE
        chunks = [bytes(pending[i : i + CHUNK_SIZE]) for i in range(0, whole, CHUNK_SIZE)]
        if chunks:
            await archive_store.write_chunks(write_conn, archive_id, seq, chunks)
            seq += len(chunks)
            del pending[:whole]

    async with (
        pool.acquire() as read_conn,
        read_conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        candidates = await source.count_candidates(read_conn, table, month)
        if progress is not None:
            progress.start(month, candidates)
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
                if stream is None:
                    stream = ArchiveStream()
                pending += stream.write(game_line(verdict).encode("utf-8"))
                if len(pending) >= _CHUNKS_PER_WRITE * CHUNK_SIZE:
                    await flush(final=False)
            if progress is not None and done % 500 == 0:
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
    if stream is None:
        return counts, None
    pending += stream.finish()
    await flush(final=True)
    await archive_store.check_stored_bytes(
        write_conn, archive_id, sha256=stream.sha256, size=stream.compressed_bytes
    )
    built = BuiltFile(
        sha256=stream.sha256,
        bytes=stream.compressed_bytes,
        uncompressed_bytes=stream.uncompressed_bytes,
        file_name=archive_file_name(month, stream.sha256),
    )
    return counts, built


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
