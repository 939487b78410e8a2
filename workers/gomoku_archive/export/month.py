"""The month export, used by both the worker and the CLI: under the month's lock it removes
leftovers, plans the month's ranges from per-minute counts (``export.ranges``), has them
exported by any process (``export.coordinator``: every worker's range slot, or the command
itself and its local processes; one range is ``export.range_run``) until they are the rows
and the plan of one snapshot of the month (``export.consistency``), assembles the parts into
one gzip member in 256 KiB chunks (``export.assembly``) while it joins the month's Parquet
companion from the ranges' row groups beside it (``export.companion.build``), and publishes
both in one transaction, statistics included; every failure is recorded on the month. Memory
stays flat: rows arrive through a server-side cursor, a range's part is written as it is
compressed, and the statistics are counts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import asyncpg

from gomoku_archive.db import archive_store, companion_store, locks, range_store
from gomoku_archive.db.archive_store import ArchiveRow, BuiltFile, Counts
from gomoku_archive.db.pool import (
    CONNECTION_ERRORS,
    Connection,
    Pool,
    connection_usable,
    transaction,
)
from gomoku_archive.errors import (
    DatabaseConnectionLost,
    ExportLocked,
    ExportTimeout,
)
from gomoku_archive.export import month_reads
from gomoku_archive.export.assembly import assemble
from gomoku_archive.export.companion import build as companion_build
from gomoku_archive.export.companion.build import StoredCompanion
from gomoku_archive.export.coordinator import Coordinator, Progress, RangeOptions
from gomoku_archive.export.ranges import Range
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month

log = get_logger(__name__)

_SESSION_END_POLLS = 40
"""Times 50 ms: how long a connection that failed oddly gets to show that its session ended."""
_RECORD_SECONDS = 10.0
"""Bound on recording a failure: a database that hangs must not hold the error back."""

Outcome = Literal["published", "unchanged", "restored", "skipped"]


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


@dataclass(slots=True)
class TimeLimit:
    """How long an export may run; the worker sets it from the month's size. The size is known
    once the month is planned (under its lock, on the source): until then the limit is the one
    of an empty month, then it is the planned candidates' (counted from the start)."""

    seconds_for: Callable[[int], float]
    candidates: int = 0

    @property
    def seconds(self) -> float:
        return self.seconds_for(self.candidates)

    def describe(self) -> str:
        return (
            f"the export took longer than its {self.seconds:.0f} s limit "
            f"for {self.candidates} candidate games"
        )


Planned = Callable[[int, float | None], Awaitable[None]]
"""Told the month's planned candidates and its time limit (None: none), once it is planned."""


async def export_month(
    pool: Pool,
    *,
    table: str,
    month: Month,
    force: bool = False,
    progress: Progress | None = None,
    time_limit: TimeLimit | None = None,
    ranges: RangeOptions | None = None,
    on_planned: Planned | None = None,
    reason: str | None = None,
) -> ExportResult:
    """Build and publish ``month``'s archive under the month's export lock.

    Leftovers of killed or failed runs of the month are removed first. Without ``force`` a
    month that already has a published archive is then ``skipped``. Raises ``ExportLocked``
    when another process holds the lock, ``ExportTimeout`` after ``time_limit`` (set from the
    plan's candidates once the month is planned; ``on_planned`` is told them). Every failure
    of the run is recorded on the month (a ``failed`` row with the error, no chunks) when the
    database still answers, and raised: the error itself, not a complaint about the
    connection it broke. ``ranges`` says who else exports the month's ranges and reads them
    where; the bytes are the same whoever exports which range. ``reason``: why a forced rebuild
    was asked (``jobs.rebuild_reason``), kept with its build's row.
    """
    started = time.monotonic()
    loop_started = asyncio.get_running_loop().time()
    deadline = asyncio.timeout(time_limit.seconds if time_limit else None)

    def timed_out() -> bool:
        return time_limit is not None and deadline.expired()

    def why_cancelled(cancelled: asyncio.CancelledError) -> str:
        if time_limit is not None and deadline.expired():
            return f"ExportTimeout: {time_limit.describe()}"
        if cancelled.args and isinstance(cancelled.args[0], str):
            return f"export cancelled ({cancelled.args[0]})"
        return "export cancelled (shutdown)"

    async def planned(candidates: int) -> None:
        if time_limit is not None:
            time_limit.candidates = candidates
            deadline.reschedule(loop_started + time_limit.seconds)
        if on_planned is not None:
            await on_planned(candidates, time_limit.seconds if time_limit else None)

    try:
        async with deadline:
            outcome, row = await _export(
                pool,
                table,
                month,
                force,
                progress,
                ranges or RangeOptions(),
                _Hooks(why_cancelled, timed_out, planned),
                reason,
            )
    except TimeoutError as exc:
        if time_limit is not None and deadline.expired():
            raise ExportTimeout(f"{month}: {time_limit.describe()}") from exc
        raise
    result = ExportResult(month, outcome, row, time.monotonic() - started)
    if outcome != "skipped":
        log.info("export_finished", **result.summary())
    return result


@dataclass(frozen=True, slots=True)
class _Hooks:
    why_cancelled: Callable[[asyncio.CancelledError], str]
    timed_out: Callable[[], bool]
    planned: Callable[[int], Awaitable[None]]


async def record_month_failure(pool: Pool, month: Month, error: str) -> None:
    """Record a failure to export ``month`` that happened outside a run (a forced rebuild that
    never got the month's lock), best effort."""
    await _record_failure(pool, None, month, None, error)


async def sweep_leftovers(pool: Pool) -> dict[str, int]:
    """Remove what killed or failed runs left in every month that nobody is exporting now (the
    planner's sweep: a published month is never planned, so leftovers of a killed forced
    rebuild would otherwise stay until the month is exported again). Returns the rows removed
    per month."""
    removed: dict[str, int] = {}
    async with pool.acquire() as conn:
        for name in await archive_store.months_with_leftovers(conn):
            month = Month.parse(name)
            if not await locks.try_lock_month(conn, month):
                continue  # being exported: that run removes them
            try:
                removed[name] = await archive_store.remove_leftovers(conn, name)
            finally:
                await locks.unlock_month(conn, month)
    if removed:
        log.info("export_leftovers_swept", months=removed)
    return removed


async def _export(
    pool: Pool,
    table: str,
    month: Month,
    force: bool,
    progress: Progress | None,
    options: RangeOptions,
    hooks: _Hooks,
    reason: str | None,
) -> tuple[Outcome, ArchiveRow | None]:
    async with pool.acquire() as lock_conn:
        if not await locks.try_lock_month(lock_conn, month):
            raise ExportLocked(f"another process is exporting {month}")
        try:
            return await _export_locked(
                pool, lock_conn, table, month, force, progress, options, hooks, reason
            )
        finally:
            # A lost session took the lock with it; there is nothing left to unlock then.
            if connection_usable(lock_conn):
                with contextlib.suppress(*CONNECTION_ERRORS):
                    await locks.unlock_month(lock_conn, month)


async def _export_locked(
    pool: Pool,
    lock_conn: Connection,
    table: str,
    month: Month,
    force: bool,
    progress: Progress | None,
    options: RangeOptions,
    hooks: _Hooks,
    reason: str | None,
) -> tuple[Outcome, ArchiveRow | None]:
    archive_id: int | None = None
    try:
        # Leftovers first, even when the month turns out to be published already: a killed
        # forced rebuild leaves its building row behind a published file, and only a run of
        # that month under its lock may remove it.
        removed = await archive_store.remove_leftovers(lock_conn, str(month))
        if removed:
            log.info("export_leftovers_removed", month=str(month), archives=removed)
        if not force:
            existing = await archive_store.published_for_month(lock_conn, str(month))
            if existing is not None:
                return "skipped", existing
        archive_id = await archive_store.start_building(lock_conn, str(month), reason=reason)
        counts, built, companion = await _build(
            pool, lock_conn, archive_id, table, month, progress, options, hooks.planned
        )
        return await _publish(lock_conn, archive_id, month, counts, built, companion)
    except asyncio.CancelledError as cancelled:
        # Shut down or out of time: the building row is invisible already; close it now rather
        # than leave it for the next run, if the database still answers. A run out of time
        # before its row existed (a loaded machine, a slow database) is recorded too: a timeout
        # is a failure of the month, a shutdown is not.
        if archive_id is not None or hooks.timed_out():
            await asyncio.shield(
                _record_failure(pool, lock_conn, month, archive_id, hooks.why_cancelled(cancelled))
            )
        raise
    except Exception as exc:
        error = await _surfaced(exc, lock_conn, month)
        await _record_failure(pool, lock_conn, month, archive_id, _error_text(error))
        if error is exc:
            raise
        raise error from exc


async def _publish(
    conn: Connection,
    archive_id: int,
    month: Month,
    counts: Counts,
    built: BuiltFile | None,
    companion: StoredCompanion | None,
) -> tuple[Outcome, ArchiveRow]:
    """The archive and its companion in one transaction. A rebuild that gives the bytes of a
    served archive (``unchanged``, ``restored``) drops its own archive row: the companion then
    goes to that archive, unless it has one (which it keeps). A companion whose bytes an
    earlier build's companion has goes, as that row, to the archive published now."""
    async with transaction(conn):
        new = None if companion is None else companion.companion_id
        if new is not None and built is not None:
            await companion_store.attach_to_file(conn, new, built.file_name)
        outcome, row = await archive_store.publish(conn, archive_id, str(month), counts, built)
        if companion is not None and new is None:
            await companion_store.give_to(conn, companion.built.file_name, row.id)
        await companion_store.follow_archives(conn, str(month))
    return outcome, row


async def _build(
    pool: Pool,
    lock_conn: Connection,
    archive_id: int,
    table: str,
    month: Month,
    progress: Progress | None,
    options: RangeOptions,
    planned: Callable[[int], Awaitable[None]],
) -> tuple[Counts, BuiltFile | None, StoredCompanion | None]:
    source_pool = options.source_pool or pool
    planning = time.monotonic()
    plan, candidates = await _plan(source_pool, table, month, options)
    await planned(candidates)
    await range_store.add_ranges(
        lock_conn, archive_id, [(r.start, r.end, r.candidates) for r in plan]
    )
    log.info(
        "export_planned",
        month=str(month),
        archive_id=archive_id,
        ranges=len(plan),
        candidates=candidates,
        publishable=sum(r.candidates for r in plan),
        range_candidates=options.range_candidates,
        seconds=round(time.monotonic() - planning, 3),
    )
    if progress is not None:
        progress.start(month, candidates)
    coordinator = Coordinator(
        pool, source_pool, lock_conn, archive_id, table, month, progress, options, planned
    )
    ranges = await coordinator.run()
    # The companion is joined from the ranges' row groups while the archive is assembled: two
    # serial steps side by side, each a copy inside PostgreSQL and a SHA-256 pass.
    companion = asyncio.create_task(companion_build.from_ranges(pool, archive_id, month, ranges))
    try:
        counts, built = await assemble(pool, lock_conn, archive_id, month, ranges)
    except BaseException:
        companion.cancel()
        await asyncio.gather(companion, return_exceptions=True)
        raise
    return counts, built, await _companion(companion, month)


async def _companion(
    task: asyncio.Task[StoredCompanion | None], month: Month
) -> StoredCompanion | None:
    """The companion, or None: a month without games has none, and a companion that failed
    does not hold its archive back (the planner's ``build_companion`` makes it from the
    published archive later; the bytes are the same)."""
    try:
        return await task
    except Exception as exc:
        log.error("export_companion_failed", month=str(month), error=_error_text(exc))
        return None


async def _plan(
    source_pool: Pool, table: str, month: Month, options: RangeOptions
) -> tuple[list[Range], int]:
    """The month's ranges, from its publishable candidates counted per minute on the source,
    and its candidates (one snapshot, read in slices at once: ``month_reads``; the count also
    sets the time limit)."""
    async with source_pool.acquire() as conn, _reading(conn, month):
        counted = await month_reads.count_month(
            conn, source_pool, table, month, connections=options.read_connections
        )
    return (
        month_reads.plan_month(counted, month, target=options.range_candidates),
        counted.candidates,
    )


_LOST_SESSION_SYMPTOMS: tuple[type[Exception], ...] = (
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
)
"""What asyncpg raises on a connection whose session the server ended while it was idle: "the
connection has been released back to the pool" (the pool detached it), or, while asyncpg is
still reading the server's goodbye, "another operation is in progress"."""


@contextlib.asynccontextmanager
async def _reading(conn: Connection, month: Month) -> AsyncIterator[None]:
    """Names a lost reader session for what it is (see ``_surfaced``)."""
    try:
        yield
    except _LOST_SESSION_SYMPTOMS as exc:
        error = await _surfaced(exc, conn, month)
        if error is exc:
            raise
        raise error from exc


async def _surfaced(exc: Exception, conn: Connection, month: Month) -> Exception:
    """The error to report for ``exc``: a lost session instead of one of its symptoms, which
    read like bugs and carry no reason."""
    if isinstance(exc, _LOST_SESSION_SYMPTOMS) and await _session_ended(conn):
        return DatabaseConnectionLost(
            f"lost the database connection while exporting {month}: the server ended the session"
        )
    return exc


async def _session_ended(conn: Connection) -> bool:
    """Whether ``conn``'s session is gone. asyncpg may still be reading the server's last
    message when the next call fails, so the connection gets a moment to close."""
    for _ in range(_SESSION_END_POLLS):
        if not connection_usable(conn):
            return True
        await asyncio.sleep(0.05)
    return not connection_usable(conn)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _record_failure(
    pool: Pool,
    conn: Connection | None,
    month: Month,
    archive_id: int | None,
    error: str,
) -> None:
    """Record the run's failure: its building row becomes ``failed`` with ``error`` and loses
    its chunks, or, when the run had no row yet, a new ``failed`` row is added. On the lock's
    connection while it lives, else on a fresh one: the row is this run's own, so closing it
    needs no lock (and a row another run has removed meanwhile is simply not there). Best
    effort: when the database does not answer, the ``building`` row stays, invisible, and the
    next run of the month removes it."""
    try:
        async with asyncio.timeout(_RECORD_SECONDS):
            if conn is not None and connection_usable(conn):
                try:
                    await _write_failure(conn, month, archive_id, error)
                    return
                except Exception:  # noqa: S110
                    # Lost just now, or left mid-protocol by the failed operation (asyncpg's
                    # InternalClientError "another operation is in progress"): a fresh session.
                    pass
            async with pool.acquire() as fresh:
                await _write_failure(fresh, month, archive_id, error)
    except Exception as inner:  # the database is what failed; the caller's error still tells
        log.warning(
            "export_failure_not_recorded",
            month=str(month),
            archive_id=archive_id,
            error=error,
            reason=_error_text(inner),
        )


async def _write_failure(
    conn: Connection, month: Month, archive_id: int | None, error: str
) -> None:
    if archive_id is None:
        await archive_store.record_failure(conn, str(month), error)
    else:
        await archive_store.mark_failed(conn, archive_id, error)
