"""A month cut into ranges against a real PostgreSQL: the same counts and statistics whatever K,
the same bytes whoever exports which range in whatever order (1, 2 or 3 local processes, ranges
done in random order, a range taken over from a worker that stopped, a range retried after a
lost connection), one gzip member every reader takes, and no helper process left behind."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import itertools
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import uuid
import zlib
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sgfmill import sgf  # type: ignore[import-untyped]

from gomoku_archive.db import archive_store, companion_store, range_store, source
from gomoku_archive.db.archive_store import BuiltFile, Counts
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import ExportFailed, RangeRetriesExhausted
from gomoku_archive.export import month as month_export
from gomoku_archive.export import range_run
from gomoku_archive.export.assembly import assemble
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import export_month
from gomoku_archive.export.ranges import plan_ranges
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.stream import ArchiveStream
from tests.benchmarks.data import seed_month as seed_bulk_month
from tests.integration.rows import game_row, utc
from tests.integration.test_export import _bad_rows, archive_bytes, insert
from tests.support import part_segments, pool_from

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
    pool: Pool,
    monkeypatch: pytest.MonkeyPatch,
    *,
    k: int = 1_000_000,
    processes: int = 1,
    dsn: str = "",
) -> tuple[Counts, BuiltFile | None, Recorder]:
    """One forced export of August with ranges of ``k`` candidates over ``processes`` local
    processes; what it handed to ``publish``."""
    seen: list[tuple[Counts, BuiltFile | None]] = []
    real = archive_store.publish

    async def spy(conn: Any, archive_id: int, month: str, counts: Counts, built: Any) -> Any:
        seen.append((counts, built))
        # The ranges as the build left them (a build that changes nothing is dropped, ranges
        # and all, when it publishes).
        LAST_RANGES[:] = await range_store.ranges_of(conn, archive_id)
        return await real(conn, archive_id, month, counts, built)

    monkeypatch.setattr(archive_store, "publish", spy)
    bar = Recorder()
    spreads = ()
    if processes > 1:
        spreads = (local(dsn, processes),)
    options = RangeOptions(spreads=spreads, range_candidates=k)
    await export_month(pool, table="games", month=AUG, force=True, progress=bar, ranges=options)
    monkeypatch.setattr(archive_store, "publish", real)
    (counts, built), *_ = seen
    return counts, built, bar


def local(dsn: str, processes: int) -> LocalProcesses:
    return LocalProcesses(dsn=dsn, source_dsn=dsn, table="games", processes=processes)


async def stored(pool: Pool, built: BuiltFile | None) -> bytes:
    assert built is not None
    async with pool.acquire() as conn:
        archive_id = await conn.fetchval(
            "SELECT id FROM archives WHERE file_name = $1", built.file_name
        )
    data = await archive_bytes(pool, archive_id)
    assert hashlib.sha256(data).hexdigest() == built.sha256
    return data


LAST_RANGES: list[range_store.RangeRow] = []


async def ranges_of_last_build(pool: Pool) -> list[range_store.RangeRow]:
    """The ranges of the last build ``published`` ran."""
    return list(LAST_RANGES)


def children(parent: int | None = None) -> list[str]:
    """The range processes (Linux: processes multiprocessing spawned) of ``parent`` (this
    process by default), as command lines; not multiprocessing's resource tracker, nor the test
    session's other children (its private Redis server)."""
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


def check_readers(data: bytes, games: int, tmp_path: Path) -> None:
    """One gzip member that gzip -t, zcat, Python's gzip, one decompressobj and sgfmill read."""
    path = tmp_path / "month.sgf.gz"
    path.write_bytes(data)
    assert subprocess.run(["gzip", "-t", str(path)], check=False).returncode == 0
    zcat = subprocess.run(["zcat", str(path)], capture_output=True, check=True)
    assert zcat.stdout.count(b"\n") == games
    text = gzip.decompress(data)
    assert text == zcat.stdout
    one = zlib.decompressobj(wbits=31)
    assert one.decompress(data) == text and one.eof and one.unused_data == b""
    lines = text.splitlines()
    for line in random.Random(7).sample(lines, min(20, len(lines))):
        game = sgf.Sgf_game.from_bytes(line)
        assert game.get_size() == 15


async def test_a_realistic_month_in_ranges_has_the_same_counts_and_text(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    candidates = await seed_bulk_month(db_dsn, AUG, 2000)  # broken rows all over the month
    one, one_file, _ = await published(pool, monkeypatch)
    many, many_file, bar = await published(pool, monkeypatch, k=150)
    assert one.excluded_games > 10 and one.candidate_games == candidates
    assert many == one  # games, exclusions by reason, results, statistics
    assert one_file is not None and many_file is not None
    assert many_file.sha256 != one_file.sha256  # the deflate stream restarts at each range
    assert many_file.uncompressed_bytes == one_file.uncompressed_bytes
    single, several = await stored(pool, one_file), await stored(pool, many_file)
    assert gzip.decompress(several) == gzip.decompress(single)
    # Restarting the compressor every 150 candidates costs little even at this tiny K.
    assert len(several) < len(single) * 1.05
    check_readers(several, many.games, tmp_path)
    assert len(await ranges_of_last_build(pool)) > 10
    assert bar.total == candidates
    assert bar.done == sorted(bar.done) and bar.done[-1] == candidates
    assert children() == []


async def test_the_same_bytes_from_one_two_and_three_processes(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_bulk_month(db_dsn, AUG, 3000)
    files = [
        (await published(pool, monkeypatch, k=200, processes=n, dsn=db_dsn))[1]
        for n in (1, 2, 3, 1)
    ]
    assert files[0] is not None
    assert {f.sha256 for f in files if f is not None} == {files[0].sha256}
    workers = {r.worker for r in await ranges_of_last_build(pool)}
    assert len(workers) == 1  # the last run, one process, did every range
    assert children() == []


async def test_ranges_done_in_random_order_give_the_same_bytes(
    pool: Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_bulk_month(db_dsn, AUG, 1500)
    counts, built, _ = await published(pool, monkeypatch, k=120)
    assert built is not None
    async with pool.acquire() as conn:
        async with source.counting(conn):
            counted = await source.count_between(conn, "games", *source.month_bounds(AUG))
        plan = plan_ranges(counted.publishable, *source.month_bounds(AUG), target=120)
        archive_id = await archive_store.start_building(conn, str(AUG))
        await range_store.add_ranges(
            conn, archive_id, [(r.start, r.end, r.candidates) for r in plan]
        )
    order = list(range(len(plan)))
    random.Random(19).shuffle(order)
    for seq in order:
        async with pool.acquire() as conn:
            claim = await range_store.claim_range(
                conn, archive_id, seq, worker="test", max_attempts=3, stale_seconds=30
            )
        assert claim is not None
        outcome = await range_run.run_range(pool, pool, claim, table="games")
        assert outcome.outcome == "done"
    async with pool.acquire() as conn:
        rows = await range_store.ranges_of(conn, archive_id)
        again, rebuilt = await assemble(pool, conn, archive_id, AUG, rows)
    assert again == counts
    assert rebuilt == built


async def test_range_edges_and_empty_ranges(
    pool: Pool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Ten publishable candidates a range: 10:00-10:59 (2 rows + 3 excluded, and 3 in its last
    # second), then 11:00's minute (3 + 2 excluded) with 11:30's game; the 14 candidates of
    # 12:00 are all in its first half minute, so that minute is cut in two halves and the
    # second finds no rows.
    ten, eleven, twelve = utc(2026, 8, 9, 10), utc(2026, 8, 9, 11), utc(2026, 8, 9, 12)
    rows = [game_row(finished_at=ten + timedelta(minutes=i)) for i in range(2)]
    rows += [  # the last second before 11:00 and 11:00's own second, several ids each
        game_row(id=uuid.UUID(int=i), finished_at=eleven - timedelta(microseconds=10 * i + 1))
        for i in range(1, 4)
    ]
    rows += [
        game_row(id=uuid.UUID(int=10 + i), finished_at=eleven + timedelta(microseconds=99_990 - i))
        for i in range(1, 4)
    ]
    rows += [game_row(finished_at=eleven + timedelta(minutes=30))]
    rows += [game_row(finished_at=twelve + timedelta(seconds=2 * i)) for i in range(12)]
    bad = [row for _, row in _bad_rows(ten + timedelta(minutes=5))][:3]
    bad += [row for _, row in _bad_rows(eleven)][3:5]  # excluded right on the edge
    bad += [row for _, row in _bad_rows(twelve + timedelta(seconds=1))][5:7]
    await insert(pool, rows + bad)

    one, one_file, _ = await published(pool, monkeypatch)
    many, many_file, bar = await published(pool, monkeypatch, k=10)
    assert one.games == 21 and one.excluded_games == 7
    assert many == one
    plan = await ranges_of_last_build(pool)
    # Planned from the publishable rows: the 21 games and the 2 bad rows only the replay excludes.
    assert len(plan) >= 3 and sum(r.planned for r in plan) == 23
    assert any(r.candidates_done == 0 for r in plan)  # a part of a split minute found nothing
    assert [r.candidates_done for r in plan] != [r.planned for r in plan]
    assert sum(r.candidates_done for r in plan) == 28
    assert bar.done[-1] == 28 and bar.done == sorted(bar.done)
    single, several = await stored(pool, one_file), await stored(pool, many_file)
    assert gzip.decompress(several) == gzip.decompress(single)
    check_readers(several, 21, tmp_path)


async def test_a_month_within_k_is_one_range_of_todays_bytes(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, 4, 5, i)) for i in range(30)])
    counts, built, bar = await published(pool, monkeypatch, k=30)
    assert counts.games == 30 and built is not None and bar.total == 30
    (only,) = await ranges_of_last_build(pool)
    assert only.state == "done" and only.planned == 30
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM archive_parts") == 0
    # Exactly what one ArchiveStream (the exporter before ranges) writes for the same text.
    data = await stored(pool, built)
    plain = ArchiveStream()
    assert plain.write(gzip.decompress(data)) + plain.finish() == data


async def test_a_range_of_a_stopped_worker_is_taken_over(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claimer that stops sending heartbeats (SIGKILLed, its machine gone) loses its range to
    the coordinator once the heartbeat is stale; the bytes are those of an undisturbed run."""
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, h)) for h in range(20)])
    _, expected, _ = await published(pool, monkeypatch, k=5)
    monkeypatch.setattr(range_store, "STALE_SECONDS", 1.0)
    real_claim = range_store.claim_range
    ghost: list[range_store.RangeClaim] = []

    async def first_claim_by_a_ghost(conn: Any, archive_id: int, seq: Any, **kw: Any) -> Any:
        if not ghost:  # a worker claims range 0 and is never heard of again
            claim = await real_claim(conn, archive_id, 0, **(kw | {"worker": "ghost:1"}))
            assert claim is not None
            ghost.append(claim)
        return await real_claim(conn, archive_id, seq, **kw)

    monkeypatch.setattr(range_store, "claim_range", first_claim_by_a_ghost)
    _, built, _ = await published(pool, monkeypatch, k=5)
    assert built == expected
    first = (await ranges_of_last_build(pool))[0]
    assert first.attempt == 2 and first.worker != "ghost:1"
    # The ghost's writes are refused: its range is no longer its own.
    async with pool.acquire() as conn:
        assert not await range_store.heartbeat(conn, ghost[0], 1)


async def test_a_range_whose_connection_broke_is_retried(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, h)) for h in range(20)])
    _, expected, _ = await published(pool, monkeypatch, k=5)
    real = source.candidate_batches_between
    broken: list[int] = []

    async def breaks_once(*args: Any, **kwargs: Any) -> Any:
        async with contextlib.aclosing(real(*args, **kwargs)) as batches:
            async for rows in batches:
                if not broken:
                    broken.append(1)
                    raise ConnectionResetError("connection reset by peer")
                yield rows

    monkeypatch.setattr(source, "candidate_batches_between", breaks_once)
    _, built, _ = await published(pool, monkeypatch, k=5)
    assert broken and built == expected
    retried = [r for r in await ranges_of_last_build(pool) if r.attempt > 1]
    assert len(retried) == 1 and retried[0].state == "done"


async def test_a_range_that_always_breaks_fails_the_build_for_another_try(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, h)) for h in range(20)])

    async def always_breaks(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionResetError("connection reset by peer")
        yield  # an async generator, like the real one

    monkeypatch.setattr(source, "candidate_batches_between", always_breaks)
    options = RangeOptions(range_candidates=5)
    with pytest.raises(RangeRetriesExhausted, match=r"range 0 failed 3 times: Connection"):
        await export_month(pool, table="games", month=AUG, ranges=options)
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT state, error FROM archives WHERE companion_of IS NULL")
        parts = await conn.fetchval("SELECT count(*) FROM archive_parts")
    assert row["state"] == "failed" and "RangeRetriesExhausted" in row["error"] and parts == 0


async def test_a_range_that_would_fail_again_fails_the_build_at_once(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, h)) for h in range(20)])
    real = range_run.Tally.take_rows
    taken: list[int] = []

    def fails_on_the_seventh(self: Any, rows: Any) -> Any:
        for _ in rows:
            taken.append(1)
            if len(taken) == 7:
                raise ExportFailed("2026-08: the source returned games out of archive order")
        return real(self, rows)

    monkeypatch.setattr(range_run.Tally, "take_rows", fails_on_the_seventh)
    options = RangeOptions(range_candidates=5)
    with pytest.raises(ExportFailed, match=r"^2026-08: range 1 failed: ExportFailed: 2026-08: the"):
        await export_month(pool, table="games", month=AUG, ranges=options)
    assert len(taken) == 7  # not tried again


async def test_a_failed_assembly_leaves_nothing_and_the_next_run_gives_the_same_bytes(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, h)) for h in range(20)])
    _, expected, _ = await published(pool, monkeypatch, k=5)
    real = month_export.assemble
    calls: list[int] = []

    async def fails_once(*args: Any) -> Any:
        if not calls:
            calls.append(1)
            raise ConnectionResetError("connection reset by peer")
        return await real(*args)

    monkeypatch.setattr(month_export, "assemble", fails_once)
    options = RangeOptions(range_candidates=5)
    with pytest.raises(ConnectionResetError):
        await export_month(pool, table="games", month=AUG, force=True, ranges=options)
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM archive_parts") == 0
        assert await conn.fetchval("SELECT count(*) FROM archives WHERE state = 'failed'") == 1
    _, built, _ = await published(pool, monkeypatch, k=5)
    assert built == expected


async def test_a_cancelled_export_leaves_no_helper(pool: Pool, db_dsn: str) -> None:
    await seed_bulk_month(db_dsn, AUG, 20_000)
    bar = Recorder()
    options = RangeOptions(spreads=(local(db_dsn, 2),), range_candidates=500)
    export = asyncio.create_task(
        export_month(pool, table="games", month=AUG, progress=bar, ranges=options)
    )
    for _ in range(600):  # until ranges are done
        await asyncio.sleep(0.05)
        if len(bar.done) >= 3 and children():
            break
    assert len(bar.done) >= 3 and not export.done()
    assert children() != []
    export.cancel()
    with pytest.raises(asyncio.CancelledError):
        await export
    assert children() == []
    assert multiprocessing.active_children() == []
    async with pool.acquire() as conn:
        state = await conn.fetchval(
            "SELECT state FROM archives WHERE month = '2026-08' AND companion_of IS NULL"
        )
        parts = await conn.fetchval("SELECT count(*) FROM archive_parts")
    assert state == "failed" and parts == 0


async def test_a_helper_that_cannot_connect_leaves_its_ranges_to_the_others(
    pool: Pool, monkeypatch: pytest.MonkeyPatch, db_dsn: str
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3, 4, i)) for i in range(30)])
    _, expected, _ = await published(pool, monkeypatch, k=5)
    nowhere = LocalProcesses(
        dsn="postgresql://nobody@127.0.0.1:1/none", source_dsn=db_dsn, table="games", processes=3
    )
    options = RangeOptions(spreads=(nowhere,), range_candidates=5)
    result = await export_month(pool, table="games", month=AUG, force=True, ranges=options)
    assert result.archive is not None and result.archive.sha256 == expected.sha256
    assert children() == []


async def test_a_killed_export_command_leaves_no_helper(db_dsn: str) -> None:
    """SIGKILL cannot stop the range processes of the export; they notice they were orphaned
    and end."""
    await seed_bulk_month(db_dsn, AUG, 30_000)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env |= {"DATABASE_URL": db_dsn, "LOG_FORMAT": "json", "EXPORT_PROCESSES": "2"}
    command = await asyncio.create_subprocess_exec(
        *[
            sys.executable,
            "-c",
            # K lowered, so that the month has ranges for a helper to take
            "import sys; from gomoku_archive.export import ranges; "
            "ranges.RANGE_CANDIDATES = 2000; "
            "from gomoku_archive.cli.main import main; "
            "sys.exit(main(['export', '--month', '2026-08', '--force']))",
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


async def test_a_killed_range_process_costs_the_command_nothing_but_time(
    pool: Pool, db_dsn: str
) -> None:
    """SIGKILL of one of the command's range processes inside a range: the coordinator takes
    the range over once its heartbeat is stale, and the command publishes the same bytes, exit
    0, without a traceback (a lost range process is no failure at all)."""
    await seed_bulk_month(db_dsn, AUG, 30_000)
    expected = await export_month(
        pool, table="games", month=AUG, ranges=RangeOptions(range_candidates=5000)
    )
    assert expected.archive is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env |= {"DATABASE_URL": db_dsn, "LOG_FORMAT": "json", "EXPORT_PROCESSES": "2"}
    command = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sys; from gomoku_archive.export import ranges; "
        "ranges.RANGE_CANDIDATES = 5000; "
        "from gomoku_archive.cli.main import main; "
        "sys.exit(main(['export', '--month', '2026-08', '--force']))",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        victim = None
        for _ in range(600):
            await asyncio.sleep(0.02)
            for line in children(command.pid):
                pid = int(line.split()[0])
                async with pool.acquire() as conn:
                    seq = await conn.fetchval(
                        "SELECT seq FROM archive_ranges WHERE state = 'running' AND worker LIKE $1",
                        f"%:{pid}",
                    )
                if seq is not None:
                    victim = pid
            if victim is not None:
                break
        assert victim is not None, "the range process never held a range"
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = await asyncio.wait_for(command.communicate(), 120)
    finally:
        if command.returncode is None:
            command.kill()
            await command.wait()
    assert command.returncode == 0, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr
    summary = json.loads(stdout.decode().splitlines()[-1])
    assert summary["sha256"] == expected.archive.sha256
    assert summary["outcome"] == "unchanged"


async def test_a_new_plan_keeps_a_done_range_with_its_part_and_numbers_the_others_after_it(
    pool: Pool,
) -> None:
    """The consistency check's ``replace_ranges``: the two first ranges become one, the third
    stays as it was. Every range of the new plan is numbered after the build's last (seq order
    stays archive order, a range job id is never used twice); the kept range moves there with
    its part and its fingerprint; the new one is queued; nothing of the others is left. A
    build that is no longer building is not changed."""
    await insert(
        pool, [game_row(finished_at=utc(2026, 8, 9, h, m)) for h in range(3) for m in range(10)]
    )
    async with pool.acquire() as conn:
        archive_id = await archive_store.start_building(conn, str(AUG))
        bounds = source.month_bounds(AUG)
        edges = [bounds[0], datetime(2026, 8, 9, 1), datetime(2026, 8, 9, 2), bounds[1]]
        await range_store.add_ranges(
            conn, archive_id, [(lo, hi, 10) for lo, hi in itertools.pairwise(edges)]
        )
    for seq in range(3):
        async with pool.acquire() as conn:
            claim = await range_store.claim_range(
                conn, archive_id, seq, worker="test", max_attempts=3, stale_seconds=30
            )
        assert claim is not None
        assert (await range_run.run_range(pool, pool, claim, table="games")).outcome == "done"
    async with pool.acquire() as conn:
        before = await range_store.ranges_of(conn, archive_id)
        third = before[2]
        segments = await part_segments(conn, archive_id, 2, third.attempt, 0, 100)
        todo = await range_store.replace_ranges(
            conn,
            archive_id,
            [(edges[0], edges[2], 20), (edges[2], edges[3], 11)],
            [None, third.seq],
        )
        after = await range_store.ranges_of(conn, archive_id)
        moved = await part_segments(conn, archive_id, 4, third.attempt, 0, 100)
        left = await conn.fetchval(
            "SELECT count(*) FROM archive_parts WHERE archive_id = $1 AND range_seq < 3",
            archive_id,
        )
        # Its companion part, the range's row group, moves with it (segments and footer).
        (footer,) = await companion_store.part_footers(conn, archive_id, [(4, third.attempt)])
        companion_left = await conn.fetchval(
            "SELECT (SELECT count(*) FROM companion_parts WHERE archive_id = $1 "
            "AND range_seq < 3) + (SELECT count(*) FROM companion_part_footers "
            "WHERE archive_id = $1 AND range_seq < 3)",
            archive_id,
        )
        companion_segments = await conn.fetchval(
            "SELECT sum(length(data)) FROM companion_parts WHERE archive_id = $1 AND range_seq = 4",
            archive_id,
        )
        await archive_store.mark_failed(conn, archive_id, "stopped")
        unchanged = await range_store.replace_ranges(
            conn, archive_id, [(edges[0], edges[3], 31)], [None]
        )
        still = await range_store.ranges_of(conn, archive_id)
    assert todo == [3]
    assert [(r.seq, r.state, r.first_second, r.end_second, r.planned) for r in after] == [
        (3, "queued", edges[0], edges[2], 20),
        (4, "done", edges[2], edges[3], 11),
    ]
    kept = after[1]
    assert (kept.attempt, kept.crc32, kept.fingerprint, kept.tally) == (
        third.attempt,
        third.crc32,
        third.fingerprint,
        third.tally,
    )
    assert moved == segments and segments
    assert left == 0
    assert footer is not None and footer.rows == third.games == 10
    assert footer.body_bytes == companion_segments and companion_left == 0
    assert unchanged == [] and still == after


async def test_a_pool_of_two_connections_still_publishes(db_dsn: str, pool: Pool) -> None:
    """The archive's assembly and the companion's join run side by side, each on a connection
    it holds (the month's lock holder, and one more), and spread their copies over more of the
    pool: a pool with no connection to spare (a small one, or one another build holds) slows
    them down but never stops them. With 2 connections the build hung for good, each waiting
    for the pool."""
    await insert(
        pool, [game_row(finished_at=utc(2026, 8, 3, h, m)) for h in range(6) for m in (0, 30)]
    )
    async with pool_from(db_dsn, min_size=2, max_size=2) as small:
        result = await asyncio.wait_for(
            export_month(small, table="games", month=AUG, ranges=RangeOptions(range_candidates=4)),
            timeout=120,
        )
    assert result.outcome == "published" and result.archive is not None
    assert result.archive.games == 12
    async with pool.acquire() as conn:
        ranges = await conn.fetchval("SELECT count(*) FROM archive_ranges")
        companions = await conn.fetchval(
            "SELECT count(*) FROM archives WHERE companion_of IS NOT NULL AND state = 'published'"
        )
    assert ranges == 3 and companions == 1
