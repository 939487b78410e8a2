"""The consistency check against real worker processes (issue 26): two ``gomoku-archive
worker`` processes build a month in two ranges while a game moves from the range being read
into the other one (the change made inside the worker that reads it, by
``tests.integration.read_hook``); the published file passes ``verify``, holds the game once,
and its counts are the table's. And (issue 34) when such changes move the plan's edges, the
file is cut by the plan of the table it holds: a forced rebuild of the quiet table afterwards
is ``unchanged``."""

from __future__ import annotations

import gzip
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from gomoku_archive.db import source
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.verify.archive import ArchiveVerifier
from tests.integration.rows import game_row
from tests.integration.test_export import archive_bytes, insert
from tests.integration.test_worker_ranges import rebuild, started
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    last_closed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()
K = 20
MOVED = uuid.UUID(int=103)


async def test_a_game_moved_while_real_workers_read_the_month_is_published_once(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    early, late = LAST.start + timedelta(days=1), LAST.start + timedelta(days=19)
    rows = [
        game_row(id=uuid.UUID(int=100 + i), finished_at=early + timedelta(minutes=i))
        for i in range(K)
    ]
    rows += [
        game_row(id=uuid.UUID(int=200 + i), finished_at=late + timedelta(minutes=i))
        for i in range(K)
    ]
    await insert(pool, rows)
    # Published once before the workers start, so that their planner leaves the month alone.
    assert (await export_month(pool, table="games", month=LAST)).outcome == "published"
    to = (late + timedelta(hours=1)).isoformat()
    env = cli_env(
        database_url=db_dsn,
        redis_url=redis_url,
        first_month=LAST,
        EXPORT_PROCESSES="1",
        READ_HOOK_DSN=db_dsn,
        READ_HOOK_FIRST_SECOND=source.month_bounds(LAST)[0].isoformat(),
        READ_HOOK_SQL=(
            f"UPDATE games SET finished_at = '{to}', started_at = '{to}'::timestamptz - "
            f"interval '3 minutes' WHERE id = '{MOVED}'"
        ),
    )
    processes = tuple(
        WorkerProcess(env, tmp_path / f"{n}.log", module="tests.integration.read_hook")
        for n in range(2)
    )
    with workers(*processes):

        async def up() -> bool:
            return started(processes)

        await wait_until(up, seconds=60, what="the workers")
        job_id = await rebuild(redis_url, K, "moved")

        async def done() -> list[dict[str, object]]:
            return [e for p in processes for e in p.events("export_job") if e["job_id"] == job_id]

        (outcome,) = await wait_until(done, seconds=120, what="the rebuild")
        changed = [e for p in processes for e in p.events("export_source_changed")]
    assert outcome["outcome"] == "published", [p.output()[-3000:] for p in processes]
    # The range read before the move; range 1, which the other worker's slot claims at the
    # same instant, may have been read before the move too.
    assert changed and 0 in changed[0]["ranges"]
    async with pool.acquire() as conn:
        archive_id = await conn.fetchval(
            "SELECT id FROM archives WHERE month = $1 AND state = 'published' "
            "AND companion_of IS NULL",
            str(LAST),
        )
    data = await archive_bytes(pool, archive_id)
    verifier = ArchiveVerifier()
    verifier.feed(data)
    report = verifier.finish()
    assert report.ok, report.problems
    assert report.games == outcome["games"] == 2 * K
    lines = gzip.decompress(data).decode().splitlines()
    assert sum(f"GN[{MOVED}]" in line for line in lines) == 1


def copy_of(game: uuid.UUID, new: uuid.UUID, finished: datetime) -> str:
    """SQL that inserts a copy of ``game`` under the id ``new``, finished at ``finished``."""
    columns = {
        "id": f"'{new}'::uuid",
        "finished_at": f"'{finished.isoformat()}'::timestamptz",
        "started_at": f"'{finished.isoformat()}'::timestamptz - interval '3 minutes'",
    }
    values = ", ".join(columns.get(c, c) for c in source.INSERT_COLUMNS)
    return (
        f"INSERT INTO games ({', '.join(source.INSERT_COLUMNS)}) "
        f"SELECT {values} FROM games WHERE id = '{game}'"
    )


async def test_a_month_whose_counts_changed_while_real_workers_read_it_rebuilds_unchanged(
    pool: Pool, db_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    """Three ranges of K games; once the first range's snapshot is taken, a game moves from it
    into the last range and a game is added to the middle one, so every edge of the plan moves.
    The build plans again from its check's count, its new ranges go to the pool as range jobs,
    and the file is the final table's clean export: a second forced rebuild, on the quiet
    table, is ``unchanged`` (same SHA-256, same name)."""
    days = [LAST.start + timedelta(days=d) for d in (1, 10, 19)]
    rows = [
        game_row(id=uuid.UUID(int=100 * (n + 1) + i), finished_at=day + timedelta(minutes=i))
        for n, day in enumerate(days)
        for i in range(K)
    ]
    await insert(pool, rows)
    assert (await export_month(pool, table="games", month=LAST)).outcome == "published"
    moved_to = (days[2] + timedelta(hours=1)).isoformat()
    added = uuid.UUID(int=999)
    env = cli_env(
        database_url=db_dsn,
        redis_url=redis_url,
        first_month=LAST,
        EXPORT_PROCESSES="1",
        READ_HOOK_DSN=db_dsn,
        READ_HOOK_FIRST_SECOND=source.month_bounds(LAST)[0].isoformat(),
        READ_HOOK_SQL=(
            f"UPDATE games SET finished_at = '{moved_to}', started_at = '{moved_to}'::timestamptz"
            f" - interval '3 minutes' WHERE id = '{MOVED}'; "
            + copy_of(MOVED, added, days[1] + timedelta(minutes=30))
        ),
    )
    processes = tuple(
        WorkerProcess(env, tmp_path / f"{n}.log", module="tests.integration.read_hook")
        for n in range(2)
    )
    with workers(*processes):

        async def up() -> bool:
            return started(processes)

        await wait_until(up, seconds=60, what="the workers")
        outcomes = []
        for tag in ("changed", "quiet"):
            job_id = await rebuild(redis_url, K, tag)

            async def done(job_id: str = job_id) -> list[dict[str, object]]:
                return [
                    e for p in processes for e in p.events("export_job") if e["job_id"] == job_id
                ]

            (outcome,) = await wait_until(done, seconds=120, what=f"the {tag} rebuild")
            outcomes.append(outcome)
        events = {
            name: [e for p in processes for e in p.events(name)]
            for name in ("export_source_changed", "export_replanned", "export_range")
        }
    logs = [p.output()[-3000:] for p in processes]
    first, again = outcomes
    assert first["outcome"] == "published", logs
    assert (again["outcome"], again["sha256"], again["file"]) == (
        "unchanged",
        first["sha256"],
        first["file"],
    )
    assert [e["plan_moved"] for e in events["export_source_changed"]] == [True]
    (replanned,) = events["export_replanned"]
    assert replanned["ranges"] == 4 and replanned["candidates"] == 3 * K + 1
    # The new plan's ranges were numbered after the first plan's three, and the workers' range
    # slots, told of them, exported them.
    assert any(e["range"] >= 3 and e["outcome"] == "done" for e in events["export_range"]), logs
    async with pool.acquire() as conn:
        archive_id = await conn.fetchval(
            "SELECT id FROM archives WHERE month = $1 AND sha256 = $2", str(LAST), first["sha256"]
        )
        assert await conn.fetchval("SELECT count(*) FROM read_hook_fired") == 1
    data = await archive_bytes(pool, archive_id)
    verifier = ArchiveVerifier()
    verifier.feed(data)
    report = verifier.finish()
    assert report.ok, report.problems
    assert report.games == first["games"] == 3 * K + 1
    lines = gzip.decompress(data).decode().splitlines()
    assert sum(f"GN[{MOVED}]" in line for line in lines) == 1
    assert sum(f"GN[{added}]" in line for line in lines) == 1
