"""Every value of every column of a candidate row reaches the export as a published game or a
counted exclusion, never as a failed month: start times over all PostgreSQL's timestamptz
accepts ('infinity', '-infinity', 4714 BC to 294276 AD, while Python's datetime holds years 1 to
9999 only; starts far before the finish), and the other columns over their types' values
(moves as jsonb nested thousands deep, or with numbers of thousands of digits)."""

from __future__ import annotations

import gzip
import json
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gomoku_archive.db import source
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.storage.chunks import iter_archive
from tests.budget import examples
from tests.integration.rows import FIVE_MOVES, game_row

AUG = Month(2026, 8)
FINISHED = datetime(2026, 8, 15, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Start:
    literal: str
    """As PostgreSQL reads it."""
    instant: datetime | None
    """The same instant in Python, None when Python has none (infinite, or a year outside 1 to
    9999 in UTC)."""


def _literal(year: int, rest: datetime) -> str:
    """A timestamptz literal in UTC for ``year`` (<= 0: BC, PostgreSQL has no year 0, so 0 is
    1 BC) with the month to microsecond of ``rest``."""
    era = " BC" if year <= 0 else ""
    shown = 1 - year if year <= 0 else year
    return f"{shown:04d}-{rest:%m-%d %H:%M:%S.%f}+00{era}"


@st.composite
def any_start(draw: st.DrawFn) -> Start:
    """Starts over PostgreSQL's whole range, the edges of Python's, and near the finish."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        literal, instant = draw(
            st.sampled_from(
                [
                    ("infinity", None),
                    ("-infinity", None),
                    ("4714-11-24 00:00:00+00 BC", None),  # PostgreSQL's first instant
                    ("294276-12-31 23:59:59.999999+00", None),  # and its last
                    ("0001-12-31 23:59:59.999999+00 BC", None),
                    ("0001-01-01 00:00:00+00", datetime(1, 1, 1, tzinfo=UTC)),
                    ("9999-12-31 23:59:59.999999+00", datetime.max.replace(tzinfo=UTC)),
                    ("10000-01-01 00:00:00+00", None),
                    ("1970-01-01 00:00:00+00", datetime(1970, 1, 1, tzinfo=UTC)),
                ]
            )
        )
        return Start(literal, instant)
    if kind == 1:  # anywhere in PostgreSQL's range
        year = draw(st.integers(-4712, 294276))  # 4713 BC .. 294276 AD, whole years
        rest = draw(st.datetimes(datetime(2001, 1, 1), datetime(2001, 12, 31, 23, 59, 59)))
        instant = rest.replace(year=year, tzinfo=UTC) if 1 <= year <= 9999 else None
        return Start(_literal(year, rest), instant)
    # Near the finish: both sides of "not after the finish" and of the longest game.
    offset = draw(
        st.one_of(
            st.timedeltas(-timedelta(days=1), LONGEST_GAME + timedelta(days=1)),
            st.sampled_from([LONGEST_GAME, LONGEST_GAME + timedelta(microseconds=1)]),
            st.just(timedelta(0)),
        )
    )
    instant = FINISHED - offset
    return Start(_literal(instant.year, instant.replace(tzinfo=None)), instant)


def published(start: Start, finished: datetime) -> bool:
    instant = start.instant
    return instant is not None and timedelta(0) <= finished - instant <= LONGEST_GAME


# Each example empties the tables of the test's own database before it writes (the fixture's
# database outlives the examples, which is what the health check warns about).
@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(starts=st.lists(any_start(), min_size=1, max_size=25))
async def test_every_start_time_is_a_game_or_an_incomplete_exclusion(
    pool: Pool, starts: list[Start]
) -> None:
    ids = [uuid.uuid4() for _ in starts]
    finishes = [FINISHED + timedelta(seconds=i) for i in range(len(starts))]
    async with pool.acquire() as conn:
        await conn.execute("TRUNCATE games; DELETE FROM archives")
        await source.insert_games(
            conn,
            "games",
            [game_row(id=i, finished_at=f) for i, f in zip(ids, finishes, strict=True)],
        )
        await conn.executemany(
            "UPDATE games SET started_at = $2::text::timestamptz WHERE id = $1",
            [(i, s.literal) for i, s in zip(ids, starts, strict=True)],
        )
    result = await export_month(pool, table="games", month=AUG, force=True)

    expected = [i for i, s, f in zip(ids, starts, finishes, strict=True) if published(s, f)]
    row = result.archive
    assert result.outcome == "published" and row is not None
    assert row.candidate_games == len(starts)
    assert row.games == len(expected)
    assert row.exclusions["incomplete"] == len(starts) - len(expected) == row.excluded_games
    text = ""
    if row.file_name is not None:
        data = b"".join([bytes(c) async for c in iter_archive(pool, row.id, row.bytes)])
        text = gzip.decompress(data).decode()
    assert [line.split("GN[", 1)[1][:36] for line in text.splitlines()] == [
        str(i) for i in expected
    ]


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)
"""What a text column (and a jsonb string) can hold: UTF-8 without NUL."""
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["color", "x", "y"]), inner, max_size=3)
    ),
    max_leaves=12,
)
MOVES = st.one_of(
    st.just(json.dumps(FIVE_MOVES)),
    JSON.map(json.dumps),
    st.sampled_from(
        [
            "[" * 5000 + "]" * 5000,  # jsonb keeps it; Python's decoder gives up at ~1000 levels
            '[{"color": "B", "x": 1' + "0" * 5000 + ', "y": 7}]',  # past int()'s 4,300 digits
            '[{"color": "B", "x": 1e400, "y": 7}]',
            '[{"color": "B", "x": 7.0, "y": 7}]',
            '[{"color": "B", "x": 7, "y": 7, "color": "W"}]',  # jsonb keeps the last key
        ]
    ),
)
INT32 = st.integers(-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Row:
    status: str
    board_size: int
    start: Start
    result: str | None
    termination: str | None
    moves: str
    time_control_seconds: int | None
    black_rating: int | None
    white_rating: int | None


rows = st.builds(
    Row,
    status=st.sampled_from(["FINISHED"] * 4 + ["ABORTED", "IN_PROGRESS"]) | TEXT,
    board_size=st.sampled_from([15] * 4 + [19]) | st.integers(-(2**15), 2**15 - 1),
    start=any_start(),
    result=st.sampled_from(["BLACK_WIN"] * 4 + ["WHITE_WIN", "DRAW", None]) | TEXT,
    termination=st.sampled_from([t.value for t in Termination] + ["FIVE"] * 4 + [None]) | TEXT,
    moves=MOVES,
    time_control_seconds=st.none() | INT32,
    black_rating=st.none() | INT32,
    white_rating=st.none() | INT32,
)


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=st.lists(rows, min_size=1, max_size=20))
async def test_any_value_of_any_column_is_a_game_or_a_counted_exclusion(
    pool: Pool, drawn: list[Row]
) -> None:
    """Every column of the reference DDL, over its type's values: the export publishes the
    month, with the counts and games ``classify`` gives for the same values."""
    ids = sorted(uuid.uuid4() for _ in drawn)
    finished = FINISHED + timedelta(seconds=5)
    async with pool.acquire() as conn:
        await conn.execute("TRUNCATE games; DELETE FROM archives")
        await source.insert_games(
            conn, "games", [game_row(id=i, finished_at=finished) for i in ids]
        )
        await conn.executemany(
            "UPDATE games SET status = $2, board_size = $3, started_at = $4::text::timestamptz, "
            "result = $5, termination = $6, moves = $7::text::jsonb, time_control_seconds = $8, "
            "black_rating = $9, white_rating = $10 WHERE id = $1",
            [
                (
                    i,
                    r.status,
                    r.board_size,
                    r.start.literal,
                    r.result,
                    r.termination,
                    r.moves,
                    r.time_control_seconds,
                    r.black_rating,
                    r.white_rating,
                )
                for i, r in zip(ids, drawn, strict=True)
            ],
        )
    result = await export_month(pool, table="games", month=AUG, force=True)

    verdicts = [
        classify(
            Candidate(
                i,
                r.status,
                r.board_size,
                r.start.instant,
                finished,
                r.result,
                r.termination,
                r.moves,
                r.time_control_seconds,
                r.black_rating,
                r.white_rating,
            )
        )
        for i, r in zip(ids, drawn, strict=True)
    ]
    row = result.archive
    assert result.outcome == "published" and row is not None
    assert row.candidate_games == len(drawn) == row.games + row.excluded_games
    expected = Counter(v.value for v in verdicts if isinstance(v, Reason))
    assert {k: n for k, n in row.exclusions.items() if n} == dict(expected)
    assert row.games == sum(1 for v in verdicts if not isinstance(v, Reason))


async def test_moves_python_cannot_decode_are_malformed(pool: Pool) -> None:
    """jsonb values a row may hold but Python's JSON decoder refuses: counted as ``malformed``
    (a RecursionError used to stop the month)."""
    hard = [
        "[" * 5000 + "]" * 5000,
        '[{"color": "B", "x": 1' + "0" * 5000 + ', "y": 7}]',
        '[{"color": "B", "x": 1e400, "y": 7}]',  # jsonb writes its 401 digits: an integer
    ]
    ids = [uuid.uuid4() for _ in hard]
    async with pool.acquire() as conn:
        await source.insert_games(
            conn,
            "games",
            [
                game_row(id=i, finished_at=FINISHED + timedelta(seconds=n))
                for n, i in enumerate(ids)
            ],
        )
        await conn.executemany(
            "UPDATE games SET moves = $2::text::jsonb WHERE id = $1",
            list(zip(ids, hard, strict=True)),
        )
    result = await export_month(pool, table="games", month=AUG)
    row = result.archive
    assert result.outcome == "published" and row is not None
    assert row.candidate_games == 3
    assert (row.exclusions["malformed"], row.exclusions["out_of_bounds"]) == (2, 1)
