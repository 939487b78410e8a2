"""The export's second core: helper processes classify and format slices of the month
(``export.slices``) in the export's own snapshot, while the export's process does other
slices itself and writes every slice's text in slice order. Each slice is read, checked,
counted and formatted exactly as the one-process export does it, so the bytes are the same.

The helpers belong to one export: spawned for it, ignoring Ctrl-C (the export decides), ending
with it, killed when it fails or is cancelled, and ending by themselves if the export's process
disappears. Each opens its own database session and joins the export's snapshot
(``pg_export_snapshot``)."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing import util as mp_util
from types import TracebackType
from typing import Any

from gomoku_archive.db import source
from gomoku_archive.db.pool import Connection, connect
from gomoku_archive.errors import ExportFailed
from gomoku_archive.export.slices import Slice
from gomoku_archive.export.tally import Tally
from gomoku_archive.profile.classify import Candidate

MIN_CANDIDATES = 20_000
"""Below this many candidates a month is exported in one process: spawning a helper (about half
a second of imports) would cost more than it saves."""
SLICE_CANDIDATES = 4_000
"""Candidates per slice: about 2 MB of text, the unit of work and of memory in flight."""
_AHEAD_PER_HELPER = 2
"""Slices queued per helper: one running, one waiting, so it never idles between two."""
_PARENT_POLL_SECONDS = 1.0
_JOIN_SECONDS = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelExport:
    """How an export uses more than one process (the ``EXPORT_PROCESSES`` setting)."""

    dsn: str = field(repr=False)
    """Where the helpers connect: the export's own database."""
    processes: int = 2
    """Processes in all, the export's own included; 1 turns helpers off."""
    min_candidates: int = MIN_CANDIDATES
    slice_candidates: int = SLICE_CANDIDATES

    def __post_init__(self) -> None:
        if self.processes < 1 or self.min_candidates < 0 or self.slice_candidates < 1:
            raise ValueError("processes and slice_candidates must be positive")

    def wanted(self, candidates: int) -> bool:
        """Whether a month of ``candidates`` is worth helpers."""
        return self.processes > 1 and candidates >= self.min_candidates


@dataclass(slots=True)
class SliceResult:
    """One slice, classified and formatted: its archive text and its tally."""

    data: bytes
    """The slice's lines, UTF-8, in archive order."""
    tally: Tally


async def format_slice(rows: AsyncIterator[Candidate], *, label: str) -> SliceResult:
    """Classify and format ``rows`` with the one-process export's step (``Tally.take``);
    ``label`` (the month) starts the error of rows out of order."""
    tally = Tally(label)
    take = tally.take
    lines = [line async for row in rows if (line := take(row)) is not None]
    return SliceResult("".join(lines).encode("utf-8"), tally)


@dataclass(frozen=True, slots=True)
class _Job:
    dsn: str = field(repr=False)
    table: str
    snapshot_id: str
    label: str
    start: datetime
    end: datetime


class SliceHelpers:
    """The export's helper processes over its open snapshot; ``in_order`` runs a plan."""

    def __init__(
        self, conn: Connection, parallel: ParallelExport, *, table: str, label: str
    ) -> None:
        self._conn = conn
        self._parallel = parallel
        self._table = table
        self._label = label
        self._snapshot_id = ""
        self._executor: ProcessPoolExecutor | None = None

    async def __aenter__(self) -> SliceHelpers:
        self._snapshot_id = await source.export_snapshot(self._conn)
        self._executor = ProcessPoolExecutor(
            max_workers=self._parallel.processes - 1,
            # spawn: a fresh interpreter, nothing of the event loop, its threads or sockets
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_helper,
            initargs=(os.getpid(),),
        )
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        # The helpers finish the slice in hand, end their sessions and exit; one that does not
        # within _JOIN_SECONDS is killed. Killing one at once could cut it in the middle of
        # writing its result: the pool's manager thread then waits for the rest of that
        # message for ever, and the interpreter, which joins that thread at exit, never ends
        # (a worker stopped by SIGTERM hung after "worker_stopped").
        try:
            await asyncio.wait_for(
                asyncio.to_thread(executor.shutdown, True, cancel_futures=True), _JOIN_SECONDS
            )
        except TimeoutError:
            _terminate(executor)
        except BaseException:
            _terminate(executor)
            raise

    async def in_order(self, slices: Sequence[Slice]) -> AsyncGenerator[SliceResult, None]:
        """Every slice's result, in the plan's order. Helpers take the next slices as they
        free up; whenever the next result due is still a helper's, this process formats the
        next unclaimed slice itself. At most a few slices are held at once."""
        executor = self._executor
        assert executor is not None, "use SliceHelpers as an async context manager"
        helpers = self._parallel.processes - 1
        ahead = helpers * _AHEAD_PER_HELPER
        window_max = ahead + 2
        window: deque[asyncio.Future[SliceResult]] = deque()
        theirs: set[asyncio.Future[SliceResult]] = set()
        loop = asyncio.get_running_loop()
        nxt = 0
        try:
            while nxt < len(slices) or window:
                theirs = {f for f in theirs if not f.done()}
                while nxt < len(slices) and len(theirs) < ahead and len(window) < window_max:
                    job = self._job(slices[nxt])
                    future = asyncio.wrap_future(executor.submit(_run_slice, job), loop=loop)
                    window.append(future)
                    theirs.add(future)
                    nxt += 1
                if window[0].done():
                    yield _result(window.popleft())
                elif nxt < len(slices) and len(window) < window_max:
                    part = slices[nxt]
                    rows = source.stream_candidates_between(
                        self._conn, self._table, part.start, part.end
                    )
                    mine = loop.create_future()
                    mine.set_result(await format_slice(rows, label=self._label))
                    window.append(mine)
                    nxt += 1
                else:
                    await asyncio.wait([window[0]])
        finally:  # given up: the slices still due are dropped, their errors with them
            for future in window:
                if not future.cancel() and not future.cancelled():
                    future.exception()

    def _job(self, part: Slice) -> _Job:
        return _Job(
            self._parallel.dsn, self._table, self._snapshot_id, self._label, part.start, part.end
        )


def _result(future: asyncio.Future[SliceResult]) -> SliceResult:
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise ExportFailed(f"the export's helper process ended unexpectedly: {exc}") from exc


def _terminate(executor: ProcessPoolExecutor) -> None:
    """Kill the helpers now (a failed or cancelled export must not leave them running).
    ``_processes`` is private; Python 3.14's ``terminate_workers()`` does the same."""
    processes: dict[int, Any] = dict(getattr(executor, "_processes", None) or {})
    for process in processes.values():
        process.terminate()
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        process.join(_JOIN_SECONDS)
        if process.is_alive():
            process.kill()
            process.join(_JOIN_SECONDS)


# --- the helper process's side ---------------------------------------------------------


class _Helper:
    """A helper's session, in the export's snapshot, and the event loop it runs on."""

    def __init__(self, job: _Job) -> None:
        self.loop = asyncio.new_event_loop()
        self._stack = contextlib.AsyncExitStack()
        self.conn: Connection | None = None
        self.loop.run_until_complete(self._join(job))
        # Multiprocessing's exit hook, which runs when the pool lets the helper go (atexit
        # handlers do not: the process ends with os._exit).
        mp_util.Finalize(self, self.close, exitpriority=10)

    async def _join(self, job: _Job) -> None:
        self.conn = await connect(job.dsn)
        await self._stack.enter_async_context(source.joined_snapshot(self.conn, job.snapshot_id))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self._close())
        self.loop.close()

    async def _close(self) -> None:
        await self._stack.aclose()
        if self.conn is not None:
            await self.conn.close()

    def format(self, job: _Job) -> SliceResult:
        assert self.conn is not None
        rows = source.stream_candidates_between(self.conn, job.table, job.start, job.end)
        return self.loop.run_until_complete(format_slice(rows, label=job.label))


_helper: _Helper | None = None


def _start_helper(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the export, which ends us
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    # A killed export (SIGKILL) cannot end its helpers; they notice they were orphaned.
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


def _run_slice(job: _Job) -> SliceResult:
    """One slice, in a helper process. Errors come back as ``ExportFailed`` (picklable, one
    line); the export's process re-raises them."""
    global _helper
    try:
        if _helper is None:  # the first slice: connect and join the snapshot
            _helper = _Helper(job)
        return _helper.format(job)
    except ExportFailed:
        raise
    except Exception as exc:
        raise ExportFailed(
            f"{job.label}: the export's helper process failed: {type(exc).__name__}: {exc}"
        ) from None
