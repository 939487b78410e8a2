"""Start times of every value PostgreSQL's timestamptz accepts reach the export as a published
game or a counted ``incomplete`` exclusion, never as a failed month: 'infinity', '-infinity',
4714 BC to 294276 AD (Python's datetime holds years 1 to 9999 only), and starts far before the
finish."""

from __future__ import annotations

import gzip
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gomoku_archive.db import source
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.writer import LONGEST_GAME
from gomoku_archive.storage.chunks import iter_archive
from tests.budget import examples
from tests.integration.rows import game_row

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
