"""docs/downloaders.md's pandas, polars and DuckDB examples, run as written on ``games`` output
of the bundled example archive: each reads the types the page says (UTC timestamps, integer
ratings that may be missing, the moves as lists), and DuckDB's line writes Parquet that reads
back every game."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from gomoku_archive.cli.games_cmd import write_games
from gomoku_archive.demo.examples import EXAMPLES_DIR
from gomoku_archive.verify.records import GameFilter
from tests.docs_pages import between_markers, code_blocks

pytestmark = pytest.mark.slow  # pandas, polars and DuckDB import in seconds


def examples() -> dict[str, str]:
    """The section's Python blocks by the library each imports."""
    blocks = code_blocks(between_markers("downloaders.md", "data-tools"), "python")
    found = {block.split()[1]: block for block in blocks}
    assert sorted(found) == ["duckdb", "pandas", "polars"]
    return found


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """A working folder with ``games.jsonl``, as the section's first line makes it."""
    (archive,) = EXAMPLES_DIR.glob("*.sgf.gz")
    with (tmp_path / "games.jsonl").open("w") as out:
        assert write_games(str(archive), GameFilter(), "jsonl", out, io.StringIO()) == 0
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def run(block: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(block, "downloaders.md", "exec"), namespace)
    return namespace


def test_the_first_line_is_the_games_command() -> None:
    section = between_markers("downloaders.md", "data-tools")
    assert code_blocks(section, "sh") == ["gomoku-archive games gomoku-party > games.jsonl\n"]


def test_pandas_reads_the_right_types(folder: Path) -> None:
    games = run(examples()["pandas"])["games"]
    assert len(games) == 200
    assert str(games["start"].dtype) == str(games["end"].dtype) == "datetime64[us, UTC]"
    for column in ("blackRating", "whiteRating", "timeControl"):
        assert str(games[column].dtype) == "Int64", column
    first = json.loads((folder / "games.jsonl").read_text().splitlines()[0])
    assert games["start"][0].isoformat() == first["start"].replace("Z", "+00:00")
    assert list(games["moves"][0][0]) == first["moves"][0]


def test_polars_reads_the_right_types(folder: Path) -> None:
    import polars as pl

    games = run(examples()["polars"])["games"]
    assert games.height == 200
    schema = games.schema
    assert schema["start"] == schema["end"] == pl.Datetime("us", "UTC")
    assert schema["blackRating"] == schema["timeControl"] == pl.Int64
    assert schema["moves"] == pl.List(pl.List(pl.Int64))


def test_duckdb_reads_the_types_and_writes_parquet(folder: Path) -> None:
    import duckdb

    games = run(examples()["duckdb"])["games"]
    types = dict(zip(games.columns, (str(t) for t in games.types), strict=True))
    assert types["id"] == "UUID"
    assert types["start"] == types["end"] == "TIMESTAMP"
    assert types["blackRating"] == types["timeControl"] == "BIGINT"
    assert types["moves"] == "BIGINT[][]"
    parquet = folder / "games.parquet"
    assert parquet.read_bytes()[:4] == b"PAR1"
    assert duckdb.sql(f"SELECT count(*) FROM '{parquet}'").fetchone() == (200,)
