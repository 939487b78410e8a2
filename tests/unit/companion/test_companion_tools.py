"""Each tool reads each column of a companion as the schema (and so the docs and the profile
page) says: pyarrow, DuckDB, polars and pandas on the bundled example's companion."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gomoku_archive.companion.schema import COLUMN_NAMES, COLUMNS
from tests.unit.companion.test_companion import build, example_lines

pytestmark = pytest.mark.slow  # DuckDB, polars and pandas import in seconds


@pytest.fixture(scope="module")
def companion(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("companion") / "gomoku-party-2026-08-example.parquet"
    path.write_bytes(build(example_lines()))
    return path


def test_the_file_s_own_types(companion: Path) -> None:
    schema = pq.ParquetFile(companion).schema
    leaves = {schema.column(i).path.split(".")[0]: schema.column(i) for i in range(len(schema))}
    for column in COLUMNS:
        leaf = leaves[column.name]
        expected = column.types.parquet
        if expected.startswith("LIST"):
            assert ".list.element" in leaf.path, column.name
            expected = expected.rsplit(" of ", 1)[1]
        assert expected.startswith(leaf.physical_type), (column.name, leaf.physical_type)
        assert leaf.max_definition_level >= (1 if column.nullable else 0), column.name


def test_pyarrow(companion: Path) -> None:
    schema = pq.read_schema(companion)
    assert [str(schema.field(c.name).type) for c in COLUMNS] == [c.types.pyarrow for c in COLUMNS]
    assert [schema.field(c.name).nullable for c in COLUMNS] == [c.nullable for c in COLUMNS]


def test_duckdb(companion: Path) -> None:
    import duckdb

    described = duckdb.sql(f"DESCRIBE SELECT * FROM '{companion}'").fetchall()
    assert [(name, kind) for name, kind, *_ in described] == [
        (c.name, c.types.duckdb) for c in COLUMNS
    ]


def test_polars(companion: Path) -> None:
    import polars as pl

    schema = pl.read_parquet(companion).schema
    assert list(schema) == list(COLUMN_NAMES)
    assert [repr(schema[c.name]) for c in COLUMNS] == [c.types.polars for c in COLUMNS]


def test_pandas(companion: Path) -> None:
    import pandas as pd

    games = pd.read_parquet(companion)
    assert [str(games[c.name].dtype) for c in COLUMNS] == [c.types.pandas for c in COLUMNS]
    assert games["black_rating"].isna().any(), "missing ratings are <NA>, not NaN"
    assert games["moves"][0][0].tolist() == [8, 0]
