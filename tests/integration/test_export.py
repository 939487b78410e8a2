"""The month export against a real PostgreSQL: selection, counts, storage, publication."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import uuid
from datetime import timedelta

import pytest

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store, source
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS
from gomoku_archive.storage.chunks import CHUNK_SIZE, iter_archive
from tests.benchmarks.data import seed_month as seed_bulk_month
from tests.integration.rows import FIVE_MOVES, game_row, utc

AUG = Month(2026, 8)
SEP = Month(2026, 9)


async def insert(pool: Pool, rows: list[tuple[object, ...]]) -> None:
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", rows)


async def archive_bytes(pool: Pool, archive_id: int) -> bytes:
    async with pool.acquire() as conn:
        size = await conn.fetchval("SELECT bytes FROM archives WHERE id = $1", archive_id)
    return b"".join([bytes(c) async for c in iter_archive(pool, archive_id, size)])


async def test_month_edges_are_exact(pool: Pool) -> None:
    first_aug = uuid.UUID(int=1)
    last_aug = uuid.UUID(int=2)
    first_sep = uuid.UUID(int=3)
    crosser = uuid.UUID(int=4)
    await insert(
        pool,
        [
            game_row(id=first_aug, finished_at=utc(2026, 8, 1, 0, 0, 0)),
            game_row(
                id=last_aug,
                finished_at=utc(2026, 8, 31, 23, 59, 59) + timedelta(microseconds=999_999),
            ),
            game_row(id=first_sep, finished_at=utc(2026, 9, 1, 0, 0, 0)),
            game_row(
                id=crosser, started_at=utc(2026, 7, 31, 23, 58), finished_at=utc(2026, 8, 1, 0, 1)
            ),
            game_row(finished_at=utc(2026, 7, 31, 23, 59, 59) + timedelta(microseconds=999_999)),
        ],
    )
    aug = await export_month(pool, table="games", month=AUG)
    sep = await export_month(pool, table="games", month=SEP)
    assert aug.archive is not None and sep.archive is not None
    text = gzip.decompress(await archive_bytes(pool, aug.archive.id)).decode()
    assert aug.archive.games == 3
    assert f"GN[{first_aug}]" in text and f"GN[{last_aug}]" in text and f"GN[{crosser}]" in text
    assert "DT[2026-07-31,08-01]" in text
    assert "XET[2026-08-31T23:59:59Z]" in text  # truncated, not rounded into September
    sep_text = gzip.decompress(await archive_bytes(pool, sep.archive.id)).decode()
    assert sep.archive.games == 1 and f"GN[{first_sep}]" in sep_text


def _bad_rows(finished: object) -> list[tuple[Reason, tuple[object, ...]]]:
    f = finished
    five_then_more = [*FIVE_MOVES, {"color": "W", "x": 14, "y": 14}]
    return [
        (Reason.ABORTED, game_row(finished_at=f, status="ABORTED", result=None, termination=None)),
        (Reason.INCOMPLETE, game_row(finished_at=f, status="IN_PROGRESS")),
        (Reason.INCOMPLETE, game_row(finished_at=f, result=None)),
        (Reason.INCOMPLETE, game_row(finished_at=f, termination="CHECKMATE")),
        (Reason.INCOMPLETE, game_row(finished_at=f, board_size=19)),
        (Reason.INCOMPLETE, game_row(finished_at=f, started_at=f + timedelta(hours=1))),  # type: ignore[operator]
        (Reason.EMPTY, game_row(finished_at=f, moves=[])),
        (Reason.MALFORMED, game_row(finished_at=f, moves="B[hh];W[ih]")),
        (Reason.MALFORMED, game_row(finished_at=f, moves={"color": "B", "x": 1, "y": 1})),
        (Reason.MALFORMED, game_row(finished_at=f, moves=[{"color": "B", "x": "7", "y": 7}])),
        (Reason.MALFORMED, game_row(finished_at=f, moves=[{"color": "B", "x": 7.5, "y": 7}])),
        (Reason.MALFORMED, game_row(finished_at=f, moves=[{"color": "B", "x": None, "y": 7}])),
        (Reason.MALFORMED, game_row(finished_at=f, moves=[[7, 7]])),
        (
            Reason.MALFORMED,
            game_row(finished_at=f, moves=[{"color": "B", "x": 7, "y": 7}] * 50_000 + [None]),
        ),
        (Reason.TURN_ORDER, game_row(finished_at=f, moves=[{"color": "W", "x": 7, "y": 7}])),
        (Reason.OUT_OF_BOUNDS, game_row(finished_at=f, moves=[{"color": "B", "x": 15, "y": 7}])),
        (
            Reason.OUT_OF_BOUNDS,
            game_row(finished_at=f, moves=[{"color": "B", "x": 2**40, "y": -1}]),
        ),
        (
            Reason.OCCUPIED,
            game_row(
                finished_at=f,
                moves=[{"color": "B", "x": 7, "y": 7}, {"color": "W", "x": 7, "y": 7}],
            ),
        ),
        (
            Reason.MOVES_AFTER_FIVE,
            game_row(finished_at=f, moves=five_then_more, result="WHITE_WIN"),
        ),
        (Reason.RESULT_MISMATCH, game_row(finished_at=f, result="WHITE_WIN")),
        (Reason.RESULT_MISMATCH, game_row(finished_at=f, termination="RESIGNATION")),
        (Reason.RESULT_MISMATCH, game_row(finished_at=f, termination="AGREEMENT")),
        (
            Reason.RESULT_MISMATCH,
            game_row(finished_at=f, moves=FIVE_MOVES[:3], termination="BOARD_FULL", result="DRAW"),
        ),
    ]


async def test_every_exclusion_reason_is_counted_and_out_of_scope_is_ignored(pool: Pool) -> None:
    when = utc(2026, 8, 15, 12, 0)
    bad = _bad_rows(when)
    good = [
        game_row(finished_at=when + timedelta(seconds=i), termination=t, result=r, moves=m)
        for i, (t, r, m) in enumerate(
            [
                ("FIVE", "BLACK_WIN", None),
                ("RESIGNATION", "WHITE_WIN", FIVE_MOVES[:4]),
                ("TIMEOUT", "BLACK_WIN", FIVE_MOVES[:3]),
                ("AGREEMENT", "DRAW", FIVE_MOVES[:6]),
            ]
        )
    ]
    out_of_scope = [
        game_row(finished_at=when, mode="CASUAL"),
        game_row(finished_at=when, rated=False),
        game_row(finished_at=when, ruleset="RENJU"),
        game_row(finished_at=when, mode="TOURNAMENT", status="ABORTED"),
    ]
    await insert(pool, [row for _, row in bad] + good + out_of_scope)
    async with pool.acquire() as conn:  # NULL finish: never a candidate of any month
        await conn.execute(
            "INSERT INTO games (id, mode, rated, ruleset, status, started_at) "
            "VALUES ($1, 'RANKED', true, 'FREESTYLE', 'IN_PROGRESS', $2)",
            uuid.uuid4(),
            when,
        )

    result = await export_month(pool, table="games", month=AUG)
    row = result.archive
    assert row is not None and result.outcome == "published"
    expected = {reason.value: sum(1 for r, _ in bad if r is reason) for reason in Reason}
    assert dict(row.exclusions) == expected
    assert list(row.exclusions) == list(ALL_REASONS)
    assert row.games == 4
    assert row.excluded_games == len(bad)
    assert row.candidate_games == len(bad) + 4 == row.games + row.excluded_games
    assert dict(row.results) == {
        "FIVE": 1,
        "RESIGNATION": 1,
        "TIMEOUT": 1,
        "BOARD_FULL": 0,
        "AGREEMENT": 1,
    }
    assert list(row.results) == [t.value for t in Termination] == list(ALL_TERMINATIONS)


async def test_zero_game_month_is_published_without_a_file(pool: Pool) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 3), status="ABORTED")])
    result = await export_month(pool, table="games", month=AUG)
    assert result.outcome == "published"
    row = result.archive
    assert row is not None
    assert (row.file_name, row.sha256, row.bytes, row.games) == (None, None, 0, 0)
    assert row.candidate_games == 1 and row.exclusions["aborted"] == 1
    async with pool.acquire() as conn:
        rows = await archive_store.published_archives(conn)
        assert await conn.fetchval("SELECT count(*) FROM archive_chunks") == 0
    doc = build_manifest([r.summary() for r in rows])
    (entry,) = doc["months"]
    assert entry["month"] == "2026-08" and entry["file"] is None and entry["bytes"] == 0
    # Rebuilding an unchanged zero-game month changes nothing.
    again = await export_month(pool, table="games", month=AUG, force=True)
    assert again.outcome == "unchanged"
    assert again.archive is not None and again.archive.id == row.id


async def test_chunks_are_exactly_256_kib_and_bytes_check_out(pool: Pool) -> None:
    from gomoku_archive.demo.games import generate_month

    rows = [
        tuple(getattr(g, c) for c in source.INSERT_COLUMNS)
        for g in generate_month(AUG, 4000, seed=7)
    ]
    await insert(pool, rows)
    result = await export_month(pool, table="games", month=AUG)
    row = result.archive
    assert row is not None and row.file_name is not None and row.sha256 is not None
    async with pool.acquire() as conn:
        sizes = [
            r["n"]
            for r in await conn.fetch(
                "SELECT seq, length(data) AS n FROM archive_chunks "
                "WHERE archive_id = $1 ORDER BY seq",
                row.id,
            )
        ]
    assert len(sizes) >= 2, "the test needs an archive of several chunks"
    assert all(n == CHUNK_SIZE for n in sizes[:-1])
    assert 0 < sizes[-1] <= CHUNK_SIZE
    data = await archive_bytes(pool, row.id)
    assert len(data) == row.bytes == sum(sizes)
    assert hashlib.sha256(data).hexdigest() == row.sha256
    assert row.file_name == archive_file_name(AUG, row.sha256)
    assert len(gzip.decompress(data)) == row.uncompressed_bytes


async def test_identical_rebuild_changes_nothing(pool: Pool) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 10, h)) for h in range(5)])
    first = await export_month(pool, table="games", month=AUG)
    again = await export_month(pool, table="games", month=AUG, force=True)
    assert first.archive is not None and again.archive is not None
    assert again.outcome == "unchanged"
    assert again.archive.id == first.archive.id
    assert again.archive.file_name == first.archive.file_name
    assert again.archive.published_at == first.archive.published_at
    # ... but the rebuild counts as the month's last good build (operators' view).
    assert first.archive.built_at is not None and again.archive.built_at is not None
    assert again.archive.built_at > first.archive.built_at
    async with pool.acquire() as conn:
        # One archive and its companion (tests/integration/test_companions.py has the rest).
        assert await conn.fetchval("SELECT count(*) FROM archives WHERE companion_of IS NULL") == 1
        assert await conn.fetchval("SELECT count(*) FROM archives") == 2
    skipped = await export_month(pool, table="games", month=AUG)
    assert skipped.outcome == "skipped"


async def test_changed_content_publishes_a_new_file_and_keeps_the_old_downloadable(
    pool: Pool,
) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 10, h)) for h in range(3)])
    old = (await export_month(pool, table="games", month=AUG)).archive
    await insert(pool, [game_row(finished_at=utc(2026, 8, 20))])  # the game server fixed a row
    new_result = await export_month(pool, table="games", month=AUG, force=True)
    new = new_result.archive
    assert old is not None and new is not None and old.file_name and new.file_name
    assert new_result.outcome == "published"
    assert new.file_name != old.file_name and new.games == 4
    async with pool.acquire() as conn:
        listed = await archive_store.published_archives(conn)
        assert [r.file_name for r in listed] == [new.file_name]
        superseded = await archive_store.downloadable_archive(conn, old.file_name)
        assert superseded is not None and superseded.state == "superseded"
        assert superseded.superseded_at is not None
    # Old bytes are intact and still served from the same row.
    assert hashlib.sha256(await archive_bytes(pool, old.id)).hexdigest() == old.sha256


async def test_a_restored_file_is_published_now_and_keeps_its_first_publication(
    pool: Pool,
) -> None:
    """A rebuild that gives back an earlier file's bytes publishes that file again, at the same
    URL: its Last-Modified (firstPublishedAt) stays the first publication, so a client's
    validator for an immutable URL never changes; its publishedAt is the restore's time, so the
    month's history reads in order."""
    await insert(pool, [game_row(id=uuid.UUID(int=1), finished_at=utc(2026, 8, 10))])
    first = (await export_month(pool, table="games", month=AUG)).archive
    await insert(pool, [game_row(id=uuid.UUID(int=2), finished_at=utc(2026, 8, 20))])
    second = (await export_month(pool, table="games", month=AUG, force=True)).archive
    async with pool.acquire() as conn:  # the game server takes the second game back
        await conn.execute("DELETE FROM games WHERE id = $1", uuid.UUID(int=2))
    restored = await export_month(pool, table="games", month=AUG, force=True)
    assert first is not None and second is not None and restored.archive is not None
    assert restored.outcome == "restored"
    assert restored.archive.id == first.id
    assert restored.archive.file_name == first.file_name
    assert restored.archive.first_published_at == first.published_at == first.last_modified
    assert restored.archive.last_modified == first.published_at
    assert second.published_at is not None and restored.archive.published_at is not None
    assert restored.archive.published_at > second.published_at > first.published_at
    assert restored.archive.superseded_at is None


async def test_killed_export_leaves_nothing_visible_and_next_run_publishes(pool: Pool) -> None:
    await insert(pool, [game_row(finished_at=utc(2026, 8, 10, h)) for h in range(3)])
    async with pool.acquire() as conn:  # exactly what a process killed mid-export leaves behind
        dead = await archive_store.start_building(conn, "2026-08")
        await archive_store.write_chunks(conn, dead, 0, [b"\x1f\x8b" + b"x" * (CHUNK_SIZE - 2)])
        assert await archive_store.published_archives(conn) == []
        assert await archive_store.published_months(conn) == set()
    result = await export_month(pool, table="games", month=AUG)
    assert result.outcome == "published" and result.archive is not None
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM archives WHERE id = $1", dead) == 0
        assert (
            await conn.fetchval("SELECT count(*) FROM archive_chunks WHERE archive_id = $1", dead)
            == 0
        )


async def test_player_ids_never_reach_the_archive(pool: Pool) -> None:
    black, white = uuid.uuid4(), uuid.uuid4()
    await insert(
        pool, [game_row(finished_at=utc(2026, 8, 2), black_player_id=black, white_player_id=white)]
    )
    row = (await export_month(pool, table="games", month=AUG)).archive
    assert row is not None
    raw = await archive_bytes(pool, row.id)
    text = gzip.decompress(raw).decode()
    for pid in (black, white):
        for form in (str(pid), pid.hex, str(pid).upper(), pid.hex.upper()):
            assert form not in text
            assert form.encode() not in raw


@pytest.mark.parametrize("table", ["games_src", "archive_src.games"])
async def test_games_table_is_configurable(pool: Pool, table: str) -> None:
    async with pool.acquire() as conn:
        if "." in table:
            await conn.execute("CREATE SCHEMA archive_src")
        await source.create_reference_table(conn, table)
        await source.insert_games(conn, table, [game_row(finished_at=utc(2026, 8, 2))])
    result = await export_month(pool, table=table, month=AUG)
    assert result.archive is not None and result.archive.games == 1


@pytest.mark.slow
async def test_the_export_reads_a_realistic_month_in_index_order(pool: Pool, db_dsn: str) -> None:
    """On a table of 100,000+ rows of one month, ANALYZEd as the game server's autovacuum
    would, the export's own query in the export's own transaction is an ordered index scan:
    no Sort (no temp files) and no bitmap scan, whatever the planner estimates."""
    candidates = await seed_bulk_month(db_dsn, AUG, 100_000)
    assert candidates >= 100_000
    async with pool.acquire() as conn, source.snapshot(conn):
        rows = await conn.fetch(
            f"EXPLAIN {source.candidates_query('games')}", *source.month_bounds(AUG)
        )
        plan = "\n".join(r[0] for r in rows)
    assert "Index Scan using games_export_order" in plan, plan
    assert "Sort" not in plan, plan
    assert "Bitmap" not in plan, plan


async def test_the_source_s_batches_give_every_candidate_once_in_order(pool: Pool) -> None:
    rows = [game_row(id=uuid.UUID(int=n), finished_at=utc(2026, 8, 2, n % 5)) for n in range(1, 24)]
    rows.append(game_row(id=uuid.UUID(int=99), finished_at=utc(2026, 9, 1)))  # next month
    await insert(pool, rows)
    start, end = source.month_bounds(AUG)
    async with pool.acquire() as conn, source.snapshot(conn):
        batches = [
            batch
            async for batch in source.candidate_batches_between(conn, "games", start, end, size=5)
        ]
    assert [len(b) for b in batches] == [5, 5, 5, 5, 3]
    ids = [r["id"] for b in batches for r in b]
    keys = [(r["finished_at"], str(r["id"])) for b in batches for r in b]
    assert sorted(ids) == [uuid.UUID(int=n) for n in range(1, 24)] and keys == sorted(keys)


async def test_a_reader_that_stops_early_leaves_its_connection_usable(pool: Pool) -> None:
    """A range that fails midway closes the batches while the next fetch is under way: the
    fetch is cancelled, and the transaction and the connection go on working."""
    await insert(pool, [game_row(finished_at=utc(2026, 8, 2, n % 20)) for n in range(50)])
    start, end = source.month_bounds(AUG)

    async def fails_after_one_batch(conn: Connection) -> None:
        async with source.snapshot(conn):
            batches = source.candidate_batches_between(conn, "games", start, end, size=4)
            async with contextlib.aclosing(batches):
                async for _ in batches:
                    raise ZeroDivisionError

    async with pool.acquire() as conn:
        with pytest.raises(ZeroDivisionError):
            await fails_after_one_batch(conn)
        assert await conn.fetchval("SELECT count(*) FROM games") == 50


async def test_export_needs_only_select_on_the_games_table(pg_dsn: str) -> None:
    """The game server owns its table; this service's role may only read it."""
    import asyncpg

    from gomoku_archive.db.migrate import migrate
    from gomoku_archive.db.pool import connect, create_pool

    role = "gpa_reader_" + uuid.uuid4().hex[:8]
    admin = await connect(pg_dsn)
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    try:
        await admin.execute("CREATE SCHEMA game_server")
        await source.create_reference_table(admin, "game_server.games")
        await source.insert_games(
            admin, "game_server.games", [game_row(finished_at=utc(2026, 8, 5))]
        )
        await admin.execute(f"GRANT CREATE ON SCHEMA public TO {role}")
        await admin.execute(f"GRANT USAGE ON SCHEMA game_server TO {role}")
        await admin.execute(f"GRANT SELECT ON game_server.games TO {role}")
        pool = await create_pool(pg_dsn.replace("postgres@", f"{role}@", 1), max_size=3)
        try:
            async with pool.acquire() as conn:
                await migrate(conn)
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await conn.execute("DELETE FROM game_server.games")
            result = await export_month(pool, table="game_server.games", month=AUG)
            assert result.outcome == "published"
            assert result.archive is not None and result.archive.games == 1
        finally:
            await pool.close()
    finally:
        await admin.execute(f"DROP OWNED BY {role}")
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()
