"""Issue 36's "Done when": the real service (``gomoku-archive serve`` over a database whose
months were published by the real export), and DuckDB (its httpfs extension loaded from the
``duckdb-ext-httpfs`` wheel's file: no network), polars and pyarrow reading the companions over
HTTP: every row of every month is what ``games`` reads from the month's ``.sgf.gz`` downloaded
from the same service; the documented one-liners (the page's and docs/downloaders.md's) give
the answers ``games`` gives; and a count on one column of a three-row-group companion reads
less than half of its bytes, counted by the server's own access log."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from gomoku_archive.cli.games_cmd import write_games
from gomoku_archive.db import migrate, source
from gomoku_archive.db.pool import create_pool
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.verify.games_rows import GameFilter
from gomoku_archive.web.pages.examples import QUERY_EXAMPLES, with_origin
from tests.benchmarks.data import seed_month
from tests.integration.api_support import ServerProcess
from tests.unit.companion.test_companion import games_view

SMALL = {Month(2026, 8): 700, Month(2026, 9): 500}
BIG = Month(2026, 10)
BIG_GAMES = 26_000
"""About as many games (copies of a template of the demo's), exported in ranges of
``BIG_K`` candidates: three ranges, so three row groups."""
BIG_K = 10_000


def httpfs_extension() -> Path:
    """The httpfs extension the ``duckdb-ext-httpfs`` wheel installed, for this duckdb."""
    spec = importlib.util.find_spec("duckdb_ext")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    (found,) = root.glob(f"extensions/v{duckdb.__version__}/*/httpfs.duckdb_extension")
    return found


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    """A fresh DuckDB (no cache of an earlier read) that never downloads an extension."""
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")
    con.execute(f"LOAD '{httpfs_extension()}'")
    con.execute("SET TimeZone = 'UTC'")
    return con


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Two small months of the demo's games and one of three row groups, published by the
    real export (the big month in ranges of K), served by a real ``serve`` process."""
    from tests.integration.conftest import PG_ADMIN_DSN, _dsn

    name = f"gpa_test_query_{tmp_path_factory.getbasetemp().name[-8:].replace('-', '_')}"

    async def prepare() -> str:
        import asyncpg

        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {name}")
            await admin.execute(f"CREATE DATABASE {name}")
        finally:
            await admin.close()
        dsn = _dsn(name)
        pool = await create_pool(dsn, min_size=1, max_size=10)
        try:
            async with pool.acquire() as conn:
                await migrate.migrate(conn)
                await source.create_reference_table(conn, "games")
            for month, games in [*SMALL.items(), (BIG, BIG_GAMES)]:
                await seed_month(dsn, month, games)
                ranges = RangeOptions(range_candidates=BIG_K) if month == BIG else RangeOptions()
                result = await export_month(pool, table="games", month=month, ranges=ranges)
                assert result.outcome == "published"
        finally:
            await pool.close()
        return dsn

    async def drop() -> None:
        import asyncpg

        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            await admin.close()

    server = ServerProcess(asyncio.run(prepare()))
    server.start()
    try:
        yield server
    finally:
        server.stop()
        asyncio.run(drop())


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        data: bytes = response.read()
        return data


@pytest.fixture(scope="module")
def manifest(service: ServerProcess) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(fetch(service.base + "/api/v1/database"))
    return document


@pytest.fixture(scope="module")
def from_games(
    service: ServerProcess, manifest: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> list[dict[str, Any]]:
    """Every game of every month as ``games`` prints it from the downloaded ``.sgf.gz``, in
    the manifest's order of months (newest first) and the archive's order within each."""
    folder = tmp_path_factory.mktemp("archives")
    out = io.StringIO()
    for month in manifest["months"]:
        path = folder / month["file"]
        path.write_bytes(fetch(service.base + month["downloadUrl"]))
        assert write_games(str(path), GameFilter(), "jsonl", out, io.StringIO(), header=False) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def urls(service: ServerProcess) -> list[str]:
    return fetch(service.base + "/api/v1/database/parquet.txt").decode().split()


def test_every_month_has_a_companion_of_its_games(manifest: dict[str, Any]) -> None:
    months = {m["month"]: m for m in manifest["months"]}
    assert set(months) == {str(m) for m in [*SMALL, BIG]}
    for month in months.values():
        assert month["parquet"]["rows"] == month["games"] > 0
    assert months[str(BIG)]["parquet"]["rowGroups"] == 3


def ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest month first, the archive's order within a month (as ``from_games``)."""
    return sorted(rows, key=lambda r: (-int(r["month"].replace("-", "")), r["end"], r["id"]))


def test_duckdb_reads_every_row_as_games_does(
    service: ServerProcess, from_games: list[dict[str, Any]]
) -> None:
    con = duckdb_connection()
    # Through Arrow: DuckDB's own Python rows of a TIMESTAMPTZ would need pytz.
    rows = con.sql(f"SELECT * FROM read_parquet({urls(service)})").fetch_arrow_table().to_pylist()
    assert ordered([games_view(r) for r in rows]) == from_games


def test_polars_reads_every_row_as_games_does(
    service: ServerProcess, from_games: list[dict[str, Any]]
) -> None:
    import polars as pl

    rows = pl.scan_parquet(urls(service)).collect().to_dicts()
    assert ordered([games_view(r) for r in rows]) == from_games


def test_pyarrow_reads_every_row_as_games_does(
    service: ServerProcess, from_games: list[dict[str, Any]]
) -> None:
    import fsspec
    import pyarrow.dataset as ds

    dataset = ds.dataset(urls(service), format="parquet", filesystem=fsspec.filesystem("https"))
    rows = dataset.to_table().to_pylist()
    assert ordered([games_view(r) for r in rows]) == from_games


def expected_answer(from_games: list[dict[str, Any]]) -> dict[str, int]:
    """The documented question, answered from ``games``: games of 2026 with both players above
    2000 Elo, by winner."""
    return dict(
        Counter(
            g["result"]
            for g in from_games
            if g["end"].startswith("2026-")
            and (g["blackRating"] or 0) > 2000
            and (g["whiteRating"] or 0) > 2000
        )
    )


def run(example: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(example, "examples.py", "exec"), namespace)
    return namespace


def test_the_documented_lines_answer_as_games_does(
    service: ServerProcess, from_games: list[dict[str, Any]]
) -> None:
    expected = expected_answer(from_games)
    assert sum(expected.values()) > 100, "the question has answers in these months"
    con = duckdb_connection()
    *statements, query = [
        s for s in with_origin(QUERY_EXAMPLES["DuckDB"], service.base).split(";\n") if s.strip()
    ]
    for statement in statements:
        con.execute(statement)
    assert dict(con.sql(query).fetchall()) == expected
    polars = run(with_origin(QUERY_EXAMPLES["polars"], service.base))["strong"]
    assert dict(polars.group_by("winner").len().collect().rows()) == expected
    table = run(with_origin(QUERY_EXAMPLES["pyarrow"], service.base))["strong"]
    assert dict(Counter(table.column("winner").to_pylist())) == expected
    frame = run(with_origin(QUERY_EXAMPLES["pandas"], service.base))["strong"]
    assert frame.groupby("winner").size().to_dict() == expected
    games = run(with_origin(QUERY_EXAMPLES["pandas"], service.base))["games"]
    assert str(games["black_rating"].dtype) == "Int32", "pandas reads nullable integers"


def served_bytes(service: ServerProcess, path: str, since: int) -> tuple[int, int]:
    """Body bytes the server sent for ``path`` in its access lines after the first ``since``,
    and how many requests."""
    lines = service.log_events("http_request")[since:]
    sent = [line["bytes"] for line in lines if line["path"] == path]
    return sum(sent), len(sent)


def test_a_count_on_one_column_reads_under_half_the_file(
    service: ServerProcess, manifest: dict[str, Any]
) -> None:
    (big,) = [m["parquet"] for m in manifest["months"] if m["month"] == str(BIG)]
    url, size = service.base + big["downloadUrl"], big["bytes"]
    before = len(service.log_events("http_request"))
    con = duckdb_connection()
    (count,) = con.sql(f"SELECT count(black_rating) FROM read_parquet('{url}')").fetchone() or ()
    assert 0 < count <= big["rows"]
    read, requests = served_bytes(service, big["downloadUrl"], before)
    assert requests >= 2 and read < size / 2, (read, size)
    print(f"{size:,} bytes in 3 row groups; a count on one column read {read:,} with DuckDB")

    import polars as pl

    before = len(service.log_events("http_request"))
    polars_count = pl.scan_parquet(url).select(pl.col("black_rating").count()).collect().item()
    assert polars_count == count
    read, _ = served_bytes(service, big["downloadUrl"], before)
    assert read < size / 2, (read, size)
    print(f"{size:,} bytes in 3 row groups; a count on one column read {read:,} with polars")


def test_a_filter_on_finish_skips_the_other_row_groups(
    service: ServerProcess, manifest: dict[str, Any]
) -> None:
    """The rows are in finish order with each group's minimum and maximum in the footer: a day
    of the month reads its group, not the file."""
    (big,) = [m["parquet"] for m in manifest["months"] if m["month"] == str(BIG)]
    url, size = service.base + big["downloadUrl"], big["bytes"]
    before = len(service.log_events("http_request"))
    con = duckdb_connection()
    first_day = datetime(2026, 10, 1, tzinfo=UTC)
    day = con.sql(
        f"SELECT count(*), count(DISTINCT moves) FROM read_parquet('{url}') "
        f"WHERE finish < TIMESTAMPTZ '{first_day:%Y-%m-%d} 12:00:00+00'"
    ).fetchone()
    assert day is not None and day[0] > 0
    read, _ = served_bytes(service, big["downloadUrl"], before)
    assert read < size / 2, (read, size)
