from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.errors import InvalidMonth
from gomoku_archive.jobs.planning import missing_months
from gomoku_archive.profile.months import Month, closed_months


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2026-08", Month(2026, 8)), ("2027-01", Month(2027, 1)), ("0001-12", Month(1, 12))],
)
def test_parse(text: str, expected: Month) -> None:
    assert Month.parse(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize(
    "text", ["2026-8", "2026-13", "2026-00", " 2026-08", "2026-08-01", "", "abcd-ef"]
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(InvalidMonth):
        Month.parse(text)


@pytest.mark.parametrize(
    ("month", "start", "end"),
    [
        (Month(2026, 8), datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 9, 1, tzinfo=UTC)),
        (Month(2026, 12), datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
    ],
)
def test_bounds(month: Month, start: datetime, end: datetime) -> None:
    assert month.start == start
    assert month.end == end


def test_next_previous_roundtrip() -> None:
    m = Month(2025, 1)
    for _ in range(30):
        assert m.next().previous() == m
        m = m.next()
    assert Month(2026, 1).previous() == Month(2025, 12)


def test_containing_converts_to_utc() -> None:
    from datetime import timezone

    plus2 = timezone(timedelta(hours=2))
    # 01:30 on Sept 1st at UTC+2 is still August in UTC.
    assert Month.containing(datetime(2026, 9, 1, 1, 30, tzinfo=plus2)) == Month(2026, 8)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (datetime(2026, 8, 31, 23, 59, 59, 999999, tzinfo=UTC), []),
        (datetime(2026, 9, 1, 0, 0, 0, tzinfo=UTC), ["2026-08"]),
        (datetime(2026, 11, 30, 12, 0, tzinfo=UTC), ["2026-08", "2026-09", "2026-10"]),
        (datetime(2027, 1, 1, tzinfo=UTC), ["2026-08", "2026-09", "2026-10", "2026-11", "2026-12"]),
    ],
)
def test_closed_months(now: datetime, expected: list[str]) -> None:
    assert [str(m) for m in closed_months(Month(2026, 8), now)] == expected


@pytest.mark.parametrize(
    ("now", "published", "expected"),
    [
        (datetime(2026, 11, 30, tzinfo=UTC), {"2026-09"}, ["2026-08", "2026-10"]),
        (datetime(2026, 11, 30, tzinfo=UTC), {"2026-08", "2026-09", "2026-10"}, []),
        # The first instant of December closes November.
        (datetime(2026, 12, 1, tzinfo=UTC), {"2026-08", "2026-09", "2026-10"}, ["2026-11"]),
        (datetime(2026, 7, 15, tzinfo=UTC), set(), []),
    ],
)
def test_missing_months(now: datetime, published: set[str], expected: list[str]) -> None:
    assert [str(m) for m in missing_months(Month(2026, 8), now, published)] == expected
