"""The two-process export against a real PostgreSQL: the same archive bytes, counts and
statistics as one process, slice edges and empty slices included; no helper outlives it."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from gomoku_archive.db import archive_store, source
from gomoku_archive.db.archive_store import BuiltFile, Counts
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import ExportFailed
from gomoku_archive.export.helpers import ParallelExport
from gomoku_archive.export.month import export_month
from gomoku_archive.export.slices import plan_slices
from gomoku_archive.profile.months import Month
from tests.benchmarks.data import seed_month as seed_bulk_month
from tests.integration.rows import game_row, utc
from tests.integration.test_export import _bad_rows, insert

AUG = Month(2026, 8)


class Recorder:
    """A progress bar that remembers what it was told."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.done: list[int] = []

    def start(self, month: Month, candidates: int) -> None:
        self.total = candidates

    def advance(self, candidates_done: int, games: int) -> None:
        self.done.append(candidates_done)


async def published(
    pool: Pool, monkeypatch: pytest.MonkeyPatch, parallel: ParallelExport | None
) -> tuple[Counts, BuiltFile | None, Recorder]:
    """One forced export of August; what it handed to ``publish``."""
    seen: list[tuple[Counts, BuiltFile | None]] = []
    real = archive_store.publish

    async def spy(conn: Any, archive_id: int, month: str, counts: Counts, built: Any) -> Any:
        seen.append((counts, built))
        return await real(conn, archive_id, month, counts, built)

    monkeypatch.setattr(archive_store, "publish", spy)
    bar = Recorder()
    await export_month(pool, table="games", month=AUG, force=True, progress=bar, parallel=parallel)
    monkeypatch.setattr(archive_store, "publish", real)
    (counts, built), *_ = seen
    return counts, built, bar


def small_slices(dsn: str, target: int) -> ParallelExport:
    return ParallelExport(dsn=dsn, processes=2, min_candidates=0, slice_candidates=target)


def children(parent: int | None = None) -> list[str]:
    """The export helpers (Linux: processes multiprocessing spawned) of ``parent`` (this
    process by default), as command lines; not multiprocessing's resource tracker, one per
    process that ever spawned, which ends with it, nor the test session's other children (its
    private Redis server)."""
    me, found = parent or os.getpid(), []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
            command = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # ended meanwhile
        ppid = next(line for line in text.splitlines() if line.startswith("PPid:"))
        if int(ppid.split()[1]) == me and "spawn_main" in command:
            found.append(f"{status.parent.name} {command}")
    return found


def alive(pid: int) -> bool:
    try:
        state = next(
            line
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("State:")
        )
    except OSError:
        return False
    return "Z" not in state.split()[1]  # a zombie has ended; only its entry waits


async def test_a_realistic_month_in_slices_is_the_same_archive(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    candidates = await seed_bulk_month(db_dsn, AUG, 2000)  # broken rows all over the month
    one, one_file, _ = await published(pool, monkeypatch, None)
    two, two_file, bar = await published(pool, monkeypatch, small_slices(db_dsn, 150))
    assert one.excluded_games > 10 and one.candidate_games == candidates
    assert two == one  # games, exclusions by reason, results, statistics
    assert two_file == one_file
    assert bar.total == candidates
    assert len(bar.done) > 10 and bar.done == sorted(bar.done) and bar.done[-1] == candidates
    assert children() == []


async def test_slice_edges_and_empty_slices(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ten candidates a slice: 10:00 (8) and 11:00 (6) are a slice each, so 11:00:00 is an
    # edge; the 14 of 12:00-12:04 cut their hour into two halves, and the second half, with
    # the rest of the month, finds no rows.
    ten, eleven, twelve = utc(2026, 8, 9, 10), utc(2026, 8, 9, 11), utc(2026, 8, 9, 12)
    rows = [game_row(finished_at=ten + timedelta(minutes=i)) for i in range(2)]
    rows += [  # the last second before an edge, and the edge's own second, several ids each
        game_row(id=uuid.UUID(int=i), finished_at=eleven - timedelta(microseconds=10 * i + 1))
        for i in range(1, 4)
    ]
    rows += [
        game_row(id=uuid.UUID(int=10 + i), finished_at=eleven + timedelta(microseconds=99_990 - i))
        for i in range(1, 4)
    ]
    rows += [game_row(finished_at=eleven + timedelta(minutes=30))]
    rows += [game_row(finished_at=twelve + timedelta(seconds=20 * i)) for i in range(12)]
    bad = [row for _, row in _bad_rows(ten + timedelta(minutes=5))][:3]
    bad += [row for _, row in _bad_rows(eleven)][3:5]  # excluded right on the edge
    bad += [row for _, row in _bad_rows(twelve + timedelta(seconds=1))][5:7]
    await insert(pool, rows + bad)

    async with pool.acquire() as conn, source.snapshot(conn):
        hours = await source.count_candidates_by_hour(conn, "games", AUG)
    start, end = AUG.start.replace(tzinfo=None), AUG.end.replace(tzinfo=None)
    plan = plan_slices(hours, start, end, target=10)
    naive = twelve.replace(tzinfo=None)
    assert [(s.start, s.candidates) for s in plan] == [
        (start, 8),
        (eleven.replace(tzinfo=None), 6),
        (naive, 7),  # the hour's 14, shared by its halves as if spread evenly
        (naive + timedelta(minutes=30), 7),
    ]

    one, one_file, _ = await published(pool, monkeypatch, None)
    two, two_file, bar = await published(pool, monkeypatch, small_slices(db_dsn, 10))
    assert one.games == 21 and one.excluded_games == 7
    assert two == one
    assert two_file == one_file
    assert bar.done == [8, 14, 28, 28, 28]  # a report a slice, and the last one
    assert children() == []


async def test_a_small_month_and_one_process_take_the_single_path(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, 4, 5, i)) for i in range(30)])
    started: list[object] = []
    monkeypatch.setattr(
        "gomoku_archive.export.month.SliceHelpers.__aenter__",
        lambda self: started.append(self),  # would fail if awaited
    )
    for parallel in (
        ParallelExport(dsn=db_dsn, processes=2),  # 30 candidates: below the 20,000
        ParallelExport(dsn=db_dsn, processes=1, min_candidates=0),
        None,
    ):
        counts, built, bar = await published(pool, monkeypatch, parallel)
        assert counts.games == 30 and built is not None and bar.total == 30
    assert started == []


async def test_a_cancelled_export_leaves_no_helper(pool: Pool, db_dsn: str) -> None:
    await seed_bulk_month(db_dsn, AUG, 20_000)
    bar = Recorder()
    export = asyncio.create_task(
        export_month(
            pool, table="games", month=AUG, progress=bar, parallel=small_slices(db_dsn, 500)
        )
    )
    for _ in range(600):  # until the helper has handed back slices
        await asyncio.sleep(0.05)
        if len(bar.done) >= 3:
            break
    assert len(bar.done) >= 3 and not export.done()
    assert children() != []
    export.cancel()
    with pytest.raises(asyncio.CancelledError):
        await export
    assert children() == []
    assert multiprocessing.active_children() == []
    async with pool.acquire() as conn:
        state = await conn.fetchval("SELECT state FROM archives WHERE month = '2026-08'")
    assert state == "failed"


async def test_a_helper_that_cannot_connect_fails_the_export_in_one_line(
    pool: Pool, db_dsn: str
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, 4, i)) for i in range(30)])
    nowhere = ParallelExport(
        dsn="postgresql://nobody@127.0.0.1:1/none", min_candidates=0, slice_candidates=5
    )
    with pytest.raises(ExportFailed, match="helper process failed: DatabaseUnavailable"):
        await export_month(pool, table="games", month=AUG, parallel=nowhere)
    assert children() == []


async def test_a_killed_export_command_leaves_no_helper(db_dsn: str) -> None:
    """SIGKILL cannot stop the helper for the export; it notices it was orphaned and ends."""
    await seed_bulk_month(db_dsn, AUG, 30_000)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env |= {"DATABASE_URL": db_dsn, "LOG_FORMAT": "json", "EXPORT_PROCESSES": "2"}
    command = await asyncio.create_subprocess_exec(
        *[
            sys.executable,
            "-m",
            "gomoku_archive.cli.main",
            "export",
            "--month",
            "2026-08",
            "--force",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        helpers: list[int] = []
        for _ in range(400):
            await asyncio.sleep(0.05)
            helpers = [int(c.split()[0]) for c in children(command.pid)]
            if helpers or command.returncode is not None:
                break
        assert helpers and command.returncode is None, "the export ended before its helper"
        await asyncio.sleep(0.5)  # the helper at work
        command.send_signal(signal.SIGKILL)
        await command.wait()
        for _ in range(100):
            if not any(alive(pid) for pid in helpers):
                break
            await asyncio.sleep(0.05)
        assert not any(alive(pid) for pid in helpers)
    finally:
        if command.returncode is None:
            command.kill()
            await command.wait()
