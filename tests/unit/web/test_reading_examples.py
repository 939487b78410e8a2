"""The typed recipes for ``games``' CSV and JSON lines (``web.pages.examples.GAMES_RECIPES``, shown
on /database/ and, word for word, in docs/downloaders.md), run as written on ``games`` output of
the bundled example archive: each reads the Parquet companion's types (the id as text, UTC
timestamps, nullable integers, the moves as lists) and every value ``games`` wrote."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gomoku_archive.cli.games_cmd import write_games
from gomoku_archive.demo.examples import EXAMPLES_DIR
from gomoku_archive.verify.games_rows import GameFilter
from gomoku_archive.web.pages.examples import GAMES_CSV, GAMES_JSONL, GAMES_RECIPES
from tests.docs_pages import between_markers, code_blocks

pytestmark = pytest.mark.slow  # pandas, polars and DuckDB import in seconds


def test_the_docs_show_the_recipes_of_the_page() -> None:
    section = between_markers("downloaders.md", "data-tools")
    assert code_blocks(section, "sh") == [f"{GAMES_CSV}\n{GAMES_JSONL}\n"]
    assert code_blocks(section, "python") == list(GAMES_RECIPES.values())


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """A working folder with ``games.csv`` and ``games.jsonl``, as the section's lines make."""
    (archive,) = EXAMPLES_DIR.glob("*.sgf.gz")
    for name, kind in (("games.csv", "csv"), ("games.jsonl", "jsonl")):
        with (tmp_path / name).open("w") as out:
            assert write_games(str(archive), GameFilter(), kind, out, io.StringIO()) == 0
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def run(block: str) -> Any:
    namespace: dict[str, Any] = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(block, "downloaders.md", "exec"), namespace)
    return namespace["games"]


def written(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def as_written(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows read back, in ``games``' JSON values (times as text, missing numbers None)."""
    out = []
    for row in rows:
        values = {}
        for key, value in row.items():
            if isinstance(value, datetime):
                assert value.utcoffset() is not None and value.utcoffset().total_seconds() == 0
                value = value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            elif value is not None and hasattr(value, "tolist"):  # numpy arrays (pandas lists)
                value = [list(pair) for pair in value.tolist()]
            elif key == "moves" and value is not None:
                value = [list(pair) for pair in value]
            elif str(value) in ("<NA>", "nan", "NaT"):
                value = None
            values[key] = value
        out.append(values)
    return out


@pytest.mark.parametrize("label", [k for k in GAMES_RECIPES if k.startswith("pandas")])
def test_pandas_reads_the_companion_s_types(folder: Path, label: str) -> None:
    games = run(GAMES_RECIPES[label])
    assert len(games) == 200
    assert str(games["start"].dtype).startswith("datetime64[") and "UTC" in str(games["end"].dtype)
    for column in ("blackRating", "whiteRating", "timeControl"):
        assert str(games[column].dtype) == "Int32", column
    assert games["id"].map(type).eq(str).all()
    rows = [
        {k: (None if v is None or str(v) == "<NA>" else v) for k, v in row.items()}
        for row in games.astype(object).to_dict("records")
    ]
    for row in rows:
        for key in ("blackRating", "whiteRating", "timeControl"):
            row[key] = None if row[key] is None else int(row[key])
        row["start"], row["end"] = row["start"].to_pydatetime(), row["end"].to_pydatetime()
    assert as_written(rows) == written(folder)


@pytest.mark.parametrize("label", [k for k in GAMES_RECIPES if k.startswith("polars")])
def test_polars_reads_the_companion_s_types(folder: Path, label: str) -> None:
    import polars as pl

    games = run(GAMES_RECIPES[label])
    schema = games.schema
    assert schema["id"] == pl.String
    assert schema["start"] == schema["end"] == pl.Datetime("us", "UTC")
    assert schema["blackRating"] == schema["whiteRating"] == schema["timeControl"] == pl.Int32
    assert schema["moves"] in (pl.List(pl.List(pl.Int8)), pl.List(pl.List(pl.Int64)))
    assert as_written(games.to_dicts()) == written(folder)


@pytest.mark.parametrize("label", [k for k in GAMES_RECIPES if k.startswith("DuckDB")])
def test_duckdb_reads_the_companion_s_types(folder: Path, label: str) -> None:
    games = run(GAMES_RECIPES[label])
    types = dict(zip(games.columns, (str(t) for t in games.types), strict=True))
    assert types["id"] == "VARCHAR", "text, as every other tool reads it"
    assert types["start"] in ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP")
    assert types["blackRating"] in ("INTEGER", "BIGINT")
    assert types["moves"] in ("TINYINT[][]", "BIGINT[][]")
    rows = games.fetch_arrow_table().to_pylist()
    for row in rows:
        for key in ("start", "end"):
            if row[key].tzinfo is None:  # JSON's TIMESTAMP: UTC by the Z it was read from
                row[key] = row[key].replace(tzinfo=UTC)
    assert as_written(rows) == written(folder)


def test_duckdb_writes_parquet_whose_id_polars_reads_as_text(folder: Path) -> None:
    """The one-liner the docs replaced wrote a UUID; the relation above writes text."""
    import duckdb
    import polars as pl

    relation = run(GAMES_RECIPES["DuckDB, JSON lines"])
    relation.write_parquet(str(folder / "games.parquet"))
    read = pl.read_parquet(folder / "games.parquet")
    assert read.schema["id"] == pl.String
    first = written(folder)[0]["id"]
    assert read.filter(pl.col("id") == first).height == 1
    assert duckdb.sql(f"SELECT count(*) FROM '{folder / 'games.parquet'}'").fetchone() == (200,)
