"""A build's ranges from the plan to the last part: the coordinator exports ranges itself
while any is left to claim, takes over ranges whose claimer stopped (their heartbeat goes stale
and they become claimable again), waits for the ranges other processes hold, and fails the build
when a range failed for good. Then it checks them against one snapshot of the month
(``export.consistency``); when that snapshot's rows or plan differ, the build's ranges become
the snapshot's plan and the ranges not kept are exported again, in a new round. Who else exports
a round's ranges is a ``RangeSpread``: arq's range jobs (the worker) or local processes
(``export.local_ranges``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import Protocol

from gomoku_archive.db import range_store
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeRow
from gomoku_archive.errors import ExportFailed, RangeRetriesExhausted, SourceKeptChanging
from gomoku_archive.export import consistency, month_reads, range_run
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.export.replan import Replan
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month

log = get_logger(__name__)

POLL_SECONDS = 0.2
"""How often a coordinator with nothing to claim looks at its ranges."""


class Progress(Protocol):
    """Told how far an export is; the CLI draws a bar with it, the worker ignores it."""

    def start(self, month: Month, candidates: int) -> None:
        """The month's candidates, as planned; told again when the consistency check plans
        the month anew."""

    def advance(self, candidates_done: int, games: int) -> None: ...


class RangeSpread(Protocol):
    """Another way for a build's ranges to be exported besides the coordinator itself: arq
    range jobs for the worker pool, local processes (``export.local_ranges``)."""

    def running(
        self, month: Month, archive_id: int, seqs: Sequence[int]
    ) -> AbstractAsyncContextManager[None]:
        """Help while the coordinator waits for the ranges ``seqs`` of a round (the whole
        plan first, then the ranges a consistency check had exported again); left when
        every range of the build is done, or the build failed."""


Planned = Callable[[int], Awaitable[None]]
"""Told the month's candidates each time the build is planned anew (time limit, records)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeOptions:
    """Who exports a build's ranges, and how big they are."""

    source_pool: Pool | None = None
    """Where the ranges read (``SOURCE_DATABASE_URL``, a read replica perhaps); None: the
    archive's own pool."""
    spreads: Sequence[RangeSpread] = ()
    """Besides the coordinator, which exports ranges itself."""
    range_candidates: int = RANGE_CANDIDATES
    """K; tests lower it to get several ranges out of a small month."""
    worker: str = ""
    """The coordinator's name on the ranges it claims; empty: ``range_run.claimer_name()``."""
    read_connections: int = month_reads.READ_CONNECTIONS
    """Source connections that read the plan's count and the consistency check at once, in
    one snapshot (``export.month_reads``)."""
    gate: asyncio.Lock | None = None
    """Held while this process exports a range (the worker's, shared with its range jobs): a
    range is CPU-bound, so two at once in one process would only make each one's source
    transaction last twice as long."""


class Coordinator:
    """Exports ranges itself while any is left to claim, takes over ranges whose worker
    stopped (their heartbeat goes stale and they become claimable), and waits for the others;
    fails the build when a range failed for good."""

    def __init__(
        self,
        pool: Pool,
        source_pool: Pool,
        lock_conn: Connection,
        archive_id: int,
        table: str,
        month: Month,
        progress: Progress | None,
        options: RangeOptions,
        planned: Planned | None = None,
    ) -> None:
        self._pool = pool
        self._source_pool = source_pool
        self._conn = lock_conn
        self._archive_id = archive_id
        self._table = table
        self._month = month
        self._progress = progress
        self._worker = options.worker or range_run.claimer_name()
        self._gate = options.gate or asyncio.Lock()
        self._read_connections = options.read_connections
        self._target = options.range_candidates
        self._spreads = options.spreads
        self._planned = planned
        self._done_candidates = 0
        self._done_games = 0

    async def run(self) -> list[RangeRow]:
        """Every range done, and the ranges exactly the plan and the rows of one snapshot of
        the source (``export.consistency``): when they are not, the build's ranges become that
        snapshot's plan, and the ranges not kept are exported again."""
        todo = [r.seq for r in await range_store.ranges_of(self._conn, self._archive_id)]
        for check in range(1, consistency.MAX_CHECKS + 1):
            ranges = await self._round(todo)
            started = time.monotonic()
            checked = await consistency.check(
                self._source_pool,
                self._table,
                self._month,
                ranges,
                target=self._target,
                connections=self._read_connections,
            )
            found = checked.replan
            log.info(
                "export_consistency_checked",
                month=str(self._month),
                archive_id=self._archive_id,
                check=check,
                ranges=len(ranges),
                changed=len(found.changed) if found else 0,
                plan_moved=found.moved if found else False,
                seconds=round(time.monotonic() - started, 3),
            )
            if found is None:
                return ranges
            log.warning(
                "export_source_changed",
                month=str(self._month),
                archive_id=self._archive_id,
                check=check,
                ranges=list(found.changed),
                plan_moved=found.moved,
            )
            if check < consistency.MAX_CHECKS:
                todo = await self._replan(found, checked)
        raise SourceKeptChanging(
            f"{self._month}: the games kept changing while the month was read "
            f"({consistency.MAX_CHECKS} checks found ranges that differ from one snapshot of "
            "the table, or from its plan); nothing was published, a later try will read a "
            "quieter table"
        )

    async def _round(self, todo: Sequence[int]) -> list[RangeRow]:
        """Every range done: the coordinator and, when there is more than one range ``todo``,
        the spreads."""
        async with AsyncExitStack() as spreads:
            if len(todo) > 1:
                for spread in self._spreads:
                    await spreads.enter_async_context(
                        spread.running(self._month, self._archive_id, todo)
                    )
            return await self._all_done()

    async def _replan(self, found: Replan, checked: consistency.Checked) -> list[int]:
        """The build's ranges become the check's plan; the seqs of those to export."""
        todo = await range_store.replace_ranges(
            self._conn,
            self._archive_id,
            [(r.start, r.end, r.candidates) for r in found.plan],
            found.kept,
        )
        log.info(
            "export_replanned",
            month=str(self._month),
            archive_id=self._archive_id,
            ranges=len(found.plan),
            kept=len(found.plan) - found.to_export,
            to_export=len(todo),
            candidates=checked.candidates,
            publishable=checked.publishable,
        )
        if self._planned is not None:
            await self._planned(checked.candidates)
        if self._progress is not None:
            self._progress.start(self._month, checked.candidates)
        return todo

    async def _all_done(self) -> list[RangeRow]:
        while True:
            if await self._export_one():
                await self._look()
                continue
            ranges = await self._look()
            if all(r.state == "done" for r in ranges):
                return ranges
            await asyncio.sleep(POLL_SECONDS)

    async def _export_one(self) -> bool:
        """Claim a range and export it; False when there was none to claim."""
        async with self._gate:
            claim = await range_store.claim_range(
                self._conn,
                self._archive_id,
                None,
                worker=self._worker,
                max_attempts=range_run.MAX_ATTEMPTS,
                stale_seconds=range_run.STALE_SECONDS,
            )
            if claim is None:
                return False
            await range_run.run_range(
                self._pool,
                self._source_pool,
                claim,
                table=self._table,
                on_progress=self._advance if self._progress else None,
                conn=self._conn,
            )
            return True

    async def _look(self) -> list[RangeRow]:
        ranges = await range_store.ranges_of(self._conn, self._archive_id)
        for r in ranges:
            if r.state != "failed":
                continue
            if not r.retryable:
                raise ExportFailed(f"{self._month}: range {r.seq} failed: {r.error}")
            if r.attempt >= range_run.MAX_ATTEMPTS:
                raise RangeRetriesExhausted(
                    f"{self._month}: range {r.seq} failed {r.attempt} times: {r.error}"
                )
        if self._progress is not None:
            self._done_candidates = sum(r.candidates_done for r in ranges if r.state == "done")
            self._done_games = sum(r.games for r in ranges if r.state == "done")
            running = sum(r.candidates_done for r in ranges if r.state == "running")
            self._progress.advance(self._done_candidates + running, self._done_games)
        return ranges

    def _advance(self, candidates: int, games: int) -> None:
        assert self._progress is not None
        self._progress.advance(self._done_candidates + candidates, self._done_games + games)
