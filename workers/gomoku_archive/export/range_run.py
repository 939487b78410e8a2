"""One range of a month, exported by whichever process claimed it (a worker's range slot, the
``export`` command's coordinator, or one of its local processes): read the range's rows
in one short transaction on the source, classify and format them with the month's step
(``Tally.take``), compress them as a raw deflate part of their own (``PartCompressor``), and
store the part and its tally under the claim's attempt; the same lines become the range's
companion part (its row group of the month's Parquet file, ``export.companion.parts``), stored
beside it.

While it works the claimer refreshes the range's heartbeat; a range whose heartbeat stops (a
worker SIGKILLed, a machine gone) for ``range_store.STALE_SECONDS`` is claimed again by another
process, which writes its part
under a new attempt. The same rows give the same part, whoever computes it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from gomoku_archive.db import range_store, source
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeClaim
from gomoku_archive.errors import ExportFailed
from gomoku_archive.export.companion.parts import RangePart
from gomoku_archive.export.tally import Tally
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.deflate_parts import PartCompressor
from gomoku_archive.storage.chunks import SegmentWriter

log = get_logger(__name__)

HEARTBEAT_SECONDS = 2.0
"""How often a claimer refreshes its range's heartbeat and progress."""
_BLOCK_CHARS = 256 * 1024
"""Formatted text gathered before it goes to the compressor thread as one block."""
_BATCH_ROWS = 2000
"""Rows a fetch from the source's cursor brings, taken as one batch; between two batches the
progress is told and the clock looked at for the heartbeat."""

Outcome = Literal["done", "failed", "lost"]
ProgressCallback = Callable[[int, int], None]
"""Told ``(candidates, games)`` of the range so far."""


def claimer_name() -> str:
    """How a process names itself on the ranges it claims: ``host:pid`` (a worker's name)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class RangeLost(Exception):
    """The range is no longer this claim's: taken over after a missed heartbeat, or its build
    ended (published, failed or abandoned)."""


@dataclass(frozen=True, slots=True)
class RangeOutcome:
    claim: RangeClaim
    outcome: Outcome
    candidates: int
    games: int
    deflate_bytes: int
    seconds: float
    error: str | None = None

    def summary(self) -> dict[str, object]:
        c = self.claim
        return {
            "month": c.month,
            "archive_id": c.archive_id,
            "range": c.seq,
            "attempt": c.attempt,
            "waited_s": round(c.waited_seconds, 3),
            "planned": c.planned,
            "outcome": self.outcome,
            "candidates": self.candidates,
            "games": self.games,
            "bytes": self.deflate_bytes,
            "seconds": round(self.seconds, 3),
            "error": self.error,
        }


async def run_range(
    archive_pool: Pool,
    source_pool: Pool,
    claim: RangeClaim,
    *,
    table: str,
    on_progress: ProgressCallback | None = None,
    conn: Connection | None = None,
) -> RangeOutcome:
    """Export the claimed range and record its part (``done``), or record why it could not be
    done (``failed``: another attempt may follow), or give it up quietly (``lost``). Only a
    cancellation is raised; the failure is then recorded, retryable, when the database
    answers. ``conn``: where the part, heartbeats and claim go (the coordinator's own idle lock
    connection, so that a build needs two connections, not three); else one from the pool."""
    started = time.monotonic()
    tally = Tally(claim.month)
    compressor = PartCompressor(last=claim.last)
    try:
        await _export_range(
            archive_pool, source_pool, claim, table, tally, compressor, on_progress, conn
        )
    except RangeLost:
        outcome = RangeOutcome(claim, "lost", tally.candidates, tally.games, 0, _since(started))
    except asyncio.CancelledError:
        await asyncio.shield(_fail(archive_pool, claim, "cancelled (shutdown)", retryable=True))
        raise
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        # A month out of archive order, a row the code cannot take: the same on every try.
        retryable = not isinstance(exc, ExportFailed)
        await _fail(archive_pool, claim, error, retryable=retryable)
        outcome = RangeOutcome(
            claim, "failed", tally.candidates, tally.games, 0, _since(started), error
        )
    else:
        outcome = RangeOutcome(
            claim,
            "done",
            tally.candidates,
            tally.games,
            compressor.deflate_bytes,
            _since(started),
        )
    level = "info" if outcome.outcome == "done" else "warning"
    getattr(log, level)("export_range", **outcome.summary())
    return outcome


async def _export_range(
    archive_pool: Pool,
    source_pool: Pool,
    claim: RangeClaim,
    table: str,
    tally: Tally,
    compressor: PartCompressor,
    on_progress: ProgressCallback | None,
    given: Connection | None,
) -> None:
    stream = BackgroundCompressor(compressor)
    take_rows = tally.take_rows
    texts: list[str] = []
    held = 0
    async with contextlib.AsyncExitStack() as stack:
        conn: Connection = (
            given if given is not None else await stack.enter_async_context(archive_pool.acquire())
        )
        part = SegmentWriter(functools.partial(range_store.write_part, conn, claim))
        rows_part = RangePart()
        next_beat = time.monotonic() + HEARTBEAT_SECONDS
        # What the range's snapshot held, for the build's consistency check: summed from the
        # very rows read.
        fingerprint = source.FingerprintSum()
        async with (
            source_pool.acquire() as read_conn,
            source.snapshot(read_conn),
            contextlib.aclosing(
                source.candidate_batches_between(
                    read_conn,
                    table,
                    claim.first_second,
                    claim.end_second,
                    size=_BATCH_ROWS,
                    fingerprint=fingerprint,
                )
            ) as batches,
        ):
            async for rows in batches:
                lines = take_rows(rows)
                rows_part.write(lines)
                text = "".join(lines)
                texts.append(text)
                held += len(text)
                if held >= _BLOCK_CHARS:
                    await part.add(await stream.write("".join(texts).encode("utf-8")))
                    texts.clear()
                    held = 0
                if on_progress is not None:
                    on_progress(tally.candidates, tally.games)
                if time.monotonic() >= next_beat:
                    if not await range_store.heartbeat(conn, claim, tally.candidates):
                        raise RangeLost
                    next_beat = time.monotonic() + HEARTBEAT_SECONDS
        # The source transaction ends with the read: compressing the tail needs no snapshot.
        await part.add(await stream.finish("".join(texts).encode("utf-8")))
        await part.flush(final=True)
        await rows_part.store(conn, claim, games=tally.games)
        if on_progress is not None:
            on_progress(tally.candidates, tally.games)
        done = await range_store.finish_range(
            conn,
            claim,
            compressor.summary(),
            candidates=tally.candidates,
            games=tally.games,
            tally=tally.to_json(),
            fingerprint=fingerprint.fingerprint(),
        )
        if not done:
            raise RangeLost


async def _fail(pool: Pool, claim: RangeClaim, error: str, *, retryable: bool) -> None:
    """Best effort: when the database does not answer, the range's heartbeat stops and another
    process takes it over."""
    try:
        async with asyncio.timeout(10), pool.acquire() as conn:
            await range_store.fail_range(conn, claim, error, retryable=retryable)
    except Exception as exc:  # the database is what failed; the stale heartbeat tells the rest
        log.warning("export_range_failure_not_recorded", error=error, reason=str(exc))


def _since(started: float) -> float:
    return time.monotonic() - started


class BackgroundCompressor:
    """A compressor fed in blocks from a worker thread, one block in flight: while zlib works
    on a block (it releases the GIL on large buffers), the event loop reads, classifies and
    formats the next one. The bytes are the same as feeding it line by line (the compressor
    hands zlib fixed blocks whatever the write sizes)."""

    def __init__(self, compressor: PartCompressor) -> None:
        self.compressor = compressor
        self._busy: asyncio.Future[bytes] | None = None

    async def write(self, block: bytes) -> bytes:
        """Start compressing ``block``; returns what the previous block compressed to."""
        out = await self._collect()
        self._busy = asyncio.get_running_loop().run_in_executor(None, self.compressor.write, block)
        return out

    async def finish(self, block: bytes) -> bytes:
        """The rest: the previous block's bytes, ``block``'s, and the end of the part."""
        out = await self._collect()
        return out + await asyncio.to_thread(self._write_and_finish, block)

    def _write_and_finish(self, block: bytes) -> bytes:
        return self.compressor.write(block) + self.compressor.finish()

    async def _collect(self) -> bytes:
        busy, self._busy = self._busy, None
        if busy is None:
            return b""
        out: bytes = await busy
        return out
