"""Local processes that export a month's ranges beside its coordinator (``EXPORT_PROCESSES``):
the ``export`` command's way to use more cores, and a worker's for the months it coordinates.
They claim ranges exactly as arq's range jobs do, so the bytes are the same whoever runs what.

The processes belong to one build: spawned for it (a fresh interpreter: nothing of the event
loop, its threads or sockets), ignoring Ctrl-C (the coordinator decides), ending when no range
is left to claim, killed when the build fails or is cancelled, and ending by themselves if the
coordinator's process disappears."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess

from gomoku_archive.db import range_store
from gomoku_archive.db.pool import create_pool
from gomoku_archive.export import range_run
from gomoku_archive.profile.months import Month

_PARENT_POLL_SECONDS = 1.0
_JOIN_SECONDS = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalProcesses:
    """How many processes a build uses on this machine, its coordinator included."""

    dsn: str = field(repr=False)
    """The archive database (claims, parts)."""
    source_dsn: str = field(repr=False)
    """The game server's database (the ranges' reads)."""
    table: str
    processes: int = 2

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise ValueError("processes must be at least 1")

    @contextlib.asynccontextmanager
    async def running(
        self, month: Month, archive_id: int, seqs: Sequence[int]
    ) -> AsyncIterator[None]:
        """Helpers for the build ``archive_id`` (at most one per range of ``seqs`` besides the
        coordinator's own), stopped on the way out."""
        count = min(self.processes - 1, len(seqs) - 1)
        context = multiprocessing.get_context("spawn")
        helpers: list[BaseProcess] = []
        for n in range(count):
            process = context.Process(
                target=_helper_main,
                args=(self.dsn, self.source_dsn, self.table, archive_id, os.getpid()),
                name=f"gomoku-archive-range-{n + 1}",
                daemon=True,
            )
            process.start()
            helpers.append(process)
        try:
            yield
        finally:
            await asyncio.to_thread(_stop, helpers)


def _stop(helpers: list[BaseProcess]) -> None:
    """Helpers end by themselves once nothing is left to claim; after a failure or a
    cancellation they are terminated (their claims go stale and are taken over)."""
    for process in helpers:
        process.join(0.0 if process.exitcode is not None else _JOIN_SECONDS / 10)
    for process in helpers:
        if process.is_alive():
            process.terminate()
    for process in helpers:
        process.join(_JOIN_SECONDS)
        if process.is_alive():
            process.kill()
            process.join(_JOIN_SECONDS)


def _helper_main(dsn: str, source_dsn: str, table: str, archive_id: int, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the coordinator, which ends us
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    try:
        asyncio.run(_claim_until_none(dsn, source_dsn, table, archive_id))
    except Exception as exc:  # one line, not a traceback: the others take its ranges over
        print(
            f"gomoku-archive: a range process stopped ({type(exc).__name__}: {exc}); "
            "the build's other processes take its ranges over",
            file=sys.stderr,
        )
        sys.exit(1)


def _watch_parent(parent: int) -> None:
    # A SIGKILLed coordinator cannot end its helpers; they notice they were orphaned.
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


async def _claim_until_none(dsn: str, source_dsn: str, table: str, archive_id: int) -> None:
    worker = range_run.claimer_name()
    pool = await create_pool(dsn, min_size=1, max_size=2)
    source_pool = pool if source_dsn == dsn else await create_pool(source_dsn, max_size=1)
    try:
        while True:
            async with pool.acquire() as conn:
                claim = await range_store.claim_range(
                    conn,
                    archive_id,
                    None,
                    worker=worker,
                    max_attempts=range_run.MAX_ATTEMPTS,
                    stale_seconds=range_run.STALE_SECONDS,
                )
            if claim is None:
                return
            await range_run.run_range(pool, source_pool, claim, table=table)
    finally:
        if source_pool is not pool:
            await source_pool.close()
        await pool.close()
