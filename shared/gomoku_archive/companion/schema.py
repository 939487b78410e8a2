"""The companion's columns: one row a game, in the archive's order (finish, then id), each
column a field the profile publishes, typed so that pandas, polars, DuckDB and pyarrow read it
natively. The single description of the schema: the writer builds its Arrow schema and options
from it (``export.companion``), and the profile page and docs/downloaders.md show it (a test
holds the docs' table and the tools' own reading of a companion to it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

SCHEMA_ID = "gomoku-party-parquet-1"
"""The companion's schema, as the manifest names it; a change of column, type or option is a
new schema id (and new companions)."""
ROW_GROUPS = (
    "one row group per range the month was exported in (about 50,000 games each, K, unless the "
    "operator sets another; a month of at most K candidates is one group)"
)
"""How the rows are cut into groups, as the docs say it. A group is a few MB, the unit a reader
skips by its statistics (a filter on finish reads the groups of those days) or reads column by
column. Each range encodes its own group, in parallel, and the month's file joins them
(``companion.footer``): so the file depends on the games and on the month's plan (K and the
range edges), as the archive does, whose deflate stream restarts at the same edges; the plan
is a function of the table's state, so a rebuild of the same games gives the same file."""
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 1
"""zstd at its fastest standard level (pandas through pyarrow, polars, DuckDB and pyarrow all
read zstd): the encoding a range does takes a tenth less CPU than at its default level 3, for a
file 7 % larger, still about 0.86 x the archive (measured: 50,000 played games, 2.56 against
2.83 us a game of thread CPU, 76.5 against 71.6 bytes a game)."""


class Kind(StrEnum):
    """How a column is stored and read."""

    TEXT = "text"
    CATEGORY = "category"
    """Text from a short list of values, dictionary-encoded in the file."""
    INSTANT = "instant"
    """A UTC instant to the second, stored in milliseconds (Parquet has no seconds unit)."""
    INT32 = "int32"
    INT16 = "int16"
    POINTS = "points"
    """The moves as ``[x, y]`` pairs of 8-bit integers, dictionary-encoded (15 values: a
    quarter of the plain size, and faster to write)."""
    SGF_POINTS = "sgf points"
    """The moves as the profile's two-letter SGF points, dictionary-encoded."""


@dataclass(frozen=True, slots=True)
class ToolTypes:
    """The type each tool reads a column as (what docs/downloaders.md shows; a test reads a
    companion with each tool and compares)."""

    parquet: str
    pyarrow: str
    duckdb: str
    polars: str
    pandas: str


TOOL_TYPES: dict[Kind, ToolTypes] = {
    Kind.TEXT: ToolTypes("BYTE_ARRAY (STRING)", "string", "VARCHAR", "String", "str"),
    Kind.CATEGORY: ToolTypes(
        "BYTE_ARRAY (STRING), dictionary", "string", "VARCHAR", "String", "str"
    ),
    Kind.INSTANT: ToolTypes(
        "INT64 (TIMESTAMP, ms, UTC)",
        "timestamp[ms, tz=UTC]",
        "TIMESTAMP WITH TIME ZONE",
        "Datetime(time_unit='ms', time_zone='UTC')",
        "datetime64[ms, UTC]",
    ),
    Kind.INT32: ToolTypes("INT32", "int32", "INTEGER", "Int32", "Int32"),
    Kind.INT16: ToolTypes("INT32 (INT(16))", "int16", "SMALLINT", "Int16", "int16"),
    Kind.POINTS: ToolTypes(
        "LIST of LIST of INT32 (INT(8)), dictionary",
        "list<element: list<element: int8>>",
        "TINYINT[][]",
        "List(List(Int8))",
        "object",
    ),
    Kind.SGF_POINTS: ToolTypes(
        "LIST of BYTE_ARRAY (STRING), dictionary",
        "list<element: string>",
        "VARCHAR[]",
        "List(String)",
        "object",
    ),
}


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind
    source: str
    """The profile's property it is read from."""
    meaning: str
    example: str
    nullable: bool = False
    """Null when the game has no such value (the property is absent from its line)."""
    statistics: bool = True
    """Minimum and maximum written per row group, for readers to skip groups by."""

    @property
    def dictionary(self) -> bool:
        return self.kind in (Kind.CATEGORY, Kind.POINTS, Kind.SGF_POINTS)

    @property
    def types(self) -> ToolTypes:
        return TOOL_TYPES[self.kind]


COLUMNS: tuple[Column, ...] = (
    Column(
        "id",
        Kind.TEXT,
        "GN",
        "The game's UUID as text (lowercase, hyphenated), unique in the archive",
        "00000000-0000-4000-8000-000000000001",
        statistics=False,
    ),
    Column(
        "month",
        Kind.CATEGORY,
        "XET",
        "The UTC month of the game's finish, YYYY-MM: the month of the archive that holds it",
        "2026-08",
    ),
    Column("start", Kind.INSTANT, "XST", "When the game started (UTC)", "2026-08-12 12:00:00"),
    Column(
        "finish",
        Kind.INSTANT,
        "XET",
        "When the game finished (UTC); the rows are in finish order, then id",
        "2026-08-12 12:02:00",
    ),
    Column("winner", Kind.CATEGORY, "RE", "black, white or draw", "black"),
    Column(
        "result", Kind.CATEGORY, "RE", "The profile's RE: B+, W+, B+R, W+R, B+T, W+T or Draw", "B+R"
    ),
    Column(
        "termination",
        Kind.CATEGORY,
        "XER",
        "How the game ended: FIVE, RESIGNATION, TIMEOUT, BOARD_FULL or AGREEMENT",
        "RESIGNATION",
    ),
    Column(
        "black_rating",
        Kind.INT32,
        "BR",
        "Black's Elo rating recorded with the game (may be 0 or negative); null when unknown",
        "1200",
        nullable=True,
    ),
    Column(
        "white_rating",
        Kind.INT32,
        "WR",
        "White's Elo rating recorded with the game; null when unknown",
        "1210",
        nullable=True,
    ),
    Column(
        "time_control",
        Kind.INT32,
        "XTC",
        "The game's time control in seconds; null when it had none",
        "60",
        nullable=True,
    ),
    Column("plies", Kind.INT16, "B, W", "The number of moves, 1 to 225", "3"),
    Column(
        "moves",
        Kind.POINTS,
        "B, W",
        "The moves in play order, black first, as [x, y]: column from the left and row from "
        "the top, 0 to 14 (the profile's aa is [0, 0]); moves[0] is the first move",
        "[[7, 7], [8, 7], [8, 8]]",
        statistics=False,
    ),
    Column(
        "sgf_moves",
        Kind.SGF_POINTS,
        "B, W",
        "The same moves as the profile's SGF points, column letter first (hh is the centre)",
        '["hh", "ih", "ii"]',
        statistics=False,
    ),
)
"""In the file's order. Nothing the profile keeps private: no player, only what a line holds."""

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
