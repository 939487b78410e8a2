"""The examples of reading an archive shown on the pages (and, word for word, in
docs/downloaders.md: a test holds them equal and runs them): standard-library Python on the
profile's fixed line shape, and sgfmill, whose rows count from the bottom."""

from __future__ import annotations

STDLIB_EXAMPLE = """\
import gzip, re, sys

PROPERTY = re.compile(r"([A-Z]+)\\[((?:[^\\\\\\]]|\\\\.)*)\\]")  # PROP[value], escapes honoured
MOVE = re.compile(r";([BW])\\[([a-o])([a-o])\\]")  # a move node: column, then row

with gzip.open(sys.argv[1], "rt", encoding="utf-8") as archive:
    for line in archive:  # one game per line, in the profile's fixed shape
        game = dict(PROPERTY.findall(line))  # root properties (B and W keep the last move)
        moves = [(c, ord(x) - 97, ord(y) - 97) for c, x, y in MOVE.findall(line)]
        # x counts columns from the left and y rows from the top: aa is (0, 0), hh the centre
        print(game["GN"], game["RE"], game["XER"], len(moves), moves[:3])
"""

SGFMILL_EXAMPLE = """\
import gzip, sys
from sgfmill import sgf

with gzip.open(sys.argv[1], "rb") as archive:
    for line in archive:
        game = sgf.Sgf_game.from_bytes(line)
        moves = []
        for node in game.get_main_sequence()[1:]:
            colour, (row, col) = node.get_move()
            moves.append((colour, col, game.get_size() - 1 - row))  # the profile's (x, y)
        print(game.get_root().get("GN"), game.get_root().get("RE"), moves[:3])
"""


# --- the Parquet companions, queried in place ---------------------------------------------------
# Each example reads the companions' addresses from parquet.txt and runs one query: how many
# games of 2026 had both players above 2000 Elo, and who won them. "{origin}" is the service's
# address (the page writes its own; docs/downloaders.md the public one). The test suite runs
# each against a live server (tests/integration/test_query_in_place.py).

PARQUET_LIST = "{origin}/api/v1/database/parquet.txt"

DUCKDB_QUERY = """\
SET VARIABLE urls = (
    SELECT list(column0) FROM read_csv('{origin}/api/v1/database/parquet.txt', header = false)
);
SELECT winner, count(*) AS games
FROM read_parquet(getvariable('urls'))
WHERE finish >= '2026-01-01T00:00:00Z' AND finish < '2027-01-01T00:00:00Z'
  AND black_rating > 2000 AND white_rating > 2000
GROUP BY winner ORDER BY winner;
"""

POLARS_QUERY = """\
import urllib.request
import polars as pl

LIST = "{origin}/api/v1/database/parquet.txt"  # every month's companion
urls = urllib.request.urlopen(LIST).read().decode().split()
games = pl.scan_parquet(urls)  # lazy: reads only the columns and row groups a query needs
strong = games.filter(
    pl.col("finish").dt.year() == 2026, pl.col("black_rating") > 2000, pl.col("white_rating") > 2000
)
print(strong.group_by("winner").len().sort("winner").collect())
"""

PYARROW_QUERY = """\
import urllib.request
import fsspec, pyarrow.dataset as ds

LIST = "{origin}/api/v1/database/parquet.txt"  # every month's companion
urls = urllib.request.urlopen(LIST).read().decode().split()
games = ds.dataset(urls, format="parquet", filesystem=fsspec.filesystem("https"))
in_2026 = (ds.field("month") >= "2026-01") & (ds.field("month") <= "2026-12")
strong = games.to_table(
    columns=["winner"],
    filter=in_2026 & (ds.field("black_rating") > 2000) & (ds.field("white_rating") > 2000),
)
print(strong.group_by("winner").aggregate([("winner", "count")]).sort_by("winner"))
"""

PANDAS_QUERY = """\
import urllib.request
import pandas as pd

LIST = "{origin}/api/v1/database/parquet.txt"  # every month's companion
urls = urllib.request.urlopen(LIST).read().decode().split()
games = pd.concat(map(pd.read_parquet, urls), ignore_index=True)  # whole files; ratings Int32
strong = games[
    (games.finish.dt.year == 2026) & (games.black_rating > 2000) & (games.white_rating > 2000)
]
print(strong.groupby("winner").size())
"""

QUERY_EXAMPLES: dict[str, str] = {
    "DuckDB": DUCKDB_QUERY,
    "polars": POLARS_QUERY,
    "pyarrow": PYARROW_QUERY,
    "pandas": PANDAS_QUERY,
}
"""By tool, in the order the page and docs/downloaders.md show them."""


def with_origin(example: str, origin: str) -> str:
    """An example's text for a service at ``origin`` (``https://host``)."""
    return example.replace("{origin}", origin)


# --- games' output, read with the right types ------------------------------------------------
# Run as printed on the bundled example archive's `games` output
# (tests/unit/web/test_reading_examples.py).

GAMES_CSV = "gomoku-archive games gomoku-party --format csv > games.csv"
GAMES_JSONL = "gomoku-archive games gomoku-party > games.jsonl"

GAMES_RECIPES: dict[str, str] = {
    "pandas, CSV": """\
import json
import pandas as pd

ints = {"blackRating": "Int32", "whiteRating": "Int32", "timeControl": "Int32"}
games = pd.read_csv("games.csv", dtype={"id": "str", **ints}, parse_dates=["start", "end"])
games["moves"] = games["moves"].map(json.loads)  # [[x, y], ...]
""",
    "polars, CSV": """\
import polars as pl

ints = {"blackRating": pl.Int32, "whiteRating": pl.Int32, "timeControl": pl.Int32}
games = pl.read_csv("games.csv", schema_overrides=ints).with_columns(
    pl.col("start", "end").str.to_datetime(time_zone="UTC"),
    pl.col("moves").str.json_decode(pl.List(pl.List(pl.Int8))),
)
""",
    "DuckDB, CSV": """\
import duckdb

games = duckdb.sql(
    "FROM read_csv('games.csv', types = {'id': 'VARCHAR', 'start': 'TIMESTAMPTZ', "
    "'end': 'TIMESTAMPTZ', 'blackRating': 'INTEGER', 'whiteRating': 'INTEGER', "
    "'timeControl': 'INTEGER', 'moves': 'TINYINT[][]'})"
)
""",
    "pandas, JSON lines": """\
import pandas as pd

ints = {"blackRating": "Int32", "whiteRating": "Int32", "timeControl": "Int32"}
games = pd.read_json(
    "games.jsonl", lines=True, convert_dates=["start", "end"], dtype={"id": "str", **ints}
)
""",
    "polars, JSON lines": """\
import polars as pl

games = pl.read_ndjson("games.jsonl").with_columns(
    pl.col("start", "end").str.to_datetime(time_zone="UTC"),
    pl.col("blackRating", "whiteRating", "timeControl").cast(pl.Int32),
)
""",
    "DuckDB, JSON lines": """\
import duckdb

# id as text, as every other tool reads it (DuckDB would infer a UUID)
games = duckdb.sql("SELECT * REPLACE (id::VARCHAR AS id) FROM read_json('games.jsonl')")
""",
}
"""``games``' CSV and JSON lines read with the types the Parquet companion has: id as text, times
as UTC timestamps, ratings and time control as nullable integers, the moves as lists."""
