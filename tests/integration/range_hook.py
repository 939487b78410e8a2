"""A worker whose ranges take longer than their rows, for the pool's tests and its benchmark:
``range_run.run_range`` wrapped so that a claimed range first waits, beating its heartbeat
every ``range_run.HEARTBEAT_SECONDS`` as a range being read does, then does its real work (so
its part, tally and fingerprint are the real ones, and the file's bytes those of any other run).

In a worker subprocess: ``python -m tests.integration.range_hook worker ...`` with, in its
environment, either or both of

- ``RANGE_HOOK_HOLD_FILE``: the first range this process claims waits until that file exists
  (a worker kept busy for as long as a test wants, or killed inside a range);
- ``RANGE_HOOK_SECONDS_PER_PLANNED``: every range waits its planned candidates times this many
  seconds (the pool benchmark's stand-in for the measured cost of a range, ``tests/benchmarks/
  pool.py``).

Nothing of this is in the service: the benchmark and the tests pass this module to ``python
-m`` in place of the command line's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gomoku_archive.db import range_store
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.db.range_store import RangeClaim
from gomoku_archive.export import range_run
from gomoku_archive.logs import get_logger

log = get_logger(__name__)
_REAL = range_run.run_range
_POLL_SECONDS = 0.1


class _Hook:
    def __init__(self, hold_file: Path | None, seconds_per_planned: float) -> None:
        self.hold_file = hold_file
        self.seconds_per_planned = seconds_per_planned
        self.held_once = False

    async def run_range(
        self, archive_pool: Pool, source_pool: Pool, claim: RangeClaim, **options: Any
    ) -> range_run.RangeOutcome:
        # The claim's instant, for the benchmark (the range's own line times its real work).
        log.info(
            "range_hook_claimed",
            archive_id=claim.archive_id,
            range=claim.seq,
            attempt=claim.attempt,
        )
        given: Connection | None = options.get("conn")
        async with contextlib.AsyncExitStack() as stack:
            conn = given or await stack.enter_async_context(archive_pool.acquire())
            hold_file = self.hold_file
            if hold_file is not None and not self.held_once:
                self.held_once = True
                await _beating(conn, claim, hold_file.exists)
            if self.seconds_per_planned > 0:
                await _sleeping(conn, claim, claim.planned * self.seconds_per_planned)
        return await _REAL(archive_pool, source_pool, claim, **options)


async def _beating(conn: Connection, claim: RangeClaim, done: Callable[[], bool]) -> None:
    """Wait until ``done()``, refreshing the range's heartbeat as a range being read does."""
    next_beat = time.monotonic() + range_run.HEARTBEAT_SECONDS
    while not done():
        await asyncio.sleep(_POLL_SECONDS)
        if time.monotonic() >= next_beat:
            await range_store.heartbeat(conn, claim, 0)
            next_beat = time.monotonic() + range_run.HEARTBEAT_SECONDS


async def _sleeping(conn: Connection, claim: RangeClaim, seconds: float) -> None:
    """Exactly ``seconds``, refreshing the heartbeat on the way."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        await asyncio.sleep(min(left, range_run.HEARTBEAT_SECONDS))
        if until - time.monotonic() > 0:
            await range_store.heartbeat(conn, claim, 0)


def main() -> None:
    hold = os.environ.get("RANGE_HOOK_HOLD_FILE")
    hook = _Hook(
        Path(hold) if hold else None, float(os.environ.get("RANGE_HOOK_SECONDS_PER_PLANNED", "0"))
    )
    range_run.run_range = hook.run_range  # type: ignore[assignment]
    from gomoku_archive.cli.main import main as cli

    sys.argv = ["gomoku-archive", *sys.argv[1:]]
    sys.exit(cli())


if __name__ == "__main__":
    main()
