"""A month's range plan: contiguous whole-second ranges in order, about a target of candidates
each, from the month's counts per bucket (per hour here, per minute in the export)."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.export.ranges import MINUTE, Range, plan_ranges

START = datetime(2026, 8, 1)
H = timedelta(hours=1)


def hour(n: int) -> datetime:
    return START + n * H


@pytest.mark.parametrize(
    ("counts", "hours", "target", "expected"),
    [
        # nothing at all: one slice for the whole range
        ({}, 3, 10, [(0, 3, 0)]),
        # hours gathered while they fit, a quiet tail joins the last slice
        ({0: 4, 1: 5, 2: 3}, 4, 10, [(0, 2, 9), (2, 4, 3)]),
        # quiet hours before the first game join the first slice
        ({2: 6, 3: 6}, 4, 10, [(0, 3, 6), (3, 4, 6)]),
        # exactly the target fits
        ({0: 5, 1: 5, 2: 1}, 3, 10, [(0, 2, 10), (2, 3, 1)]),
    ],
)
def test_hours_are_gathered_up_to_the_target(
    counts: dict[int, int], hours: int, target: int, expected: list[tuple[int, int, int]]
) -> None:
    plan = plan_ranges(
        {hour(h): n for h, n in counts.items()}, START, hour(hours), target=target, bucket=H
    )
    assert plan == [Range(hour(a), hour(b), n) for a, b, n in expected]


def test_a_busy_hour_is_cut_into_equal_lengths_of_time() -> None:
    plan = plan_ranges({hour(1): 25, hour(0): 3}, START, hour(3), target=10, bucket=H)
    assert plan == [
        Range(hour(0), hour(1), 3),
        Range(hour(1), hour(1) + timedelta(minutes=20), 9),
        Range(hour(1) + timedelta(minutes=20), hour(1) + timedelta(minutes=40), 8),
        Range(hour(1) + timedelta(minutes=40), hour(3), 8),  # the quiet tail joins it
    ]


def test_a_busy_first_hour_takes_the_quiet_ones_before_it() -> None:
    plan = plan_ranges({hour(2): 20}, START, hour(3), target=10, bucket=H)
    assert plan == [
        Range(hour(0), hour(2) + timedelta(minutes=30), 10),
        Range(hour(2) + timedelta(minutes=30), hour(3), 10),
    ]


def test_an_hour_is_cut_into_whole_seconds_at_most() -> None:
    plan = plan_ranges({hour(0): 10_000}, START, hour(1), target=1, bucket=H)
    assert len(plan) == 3600
    assert all(s.end - s.start == timedelta(seconds=1) for s in plan)
    assert sum(s.candidates for s in plan) == 10_000


@pytest.mark.parametrize(
    ("start", "end", "target"),
    [(START, START, 10), (START + timedelta(minutes=1), hour(2), 10), (START, hour(1), 0)],
)
def test_bad_ranges_and_targets_are_refused(start: datetime, end: datetime, target: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        plan_ranges({}, start, end, target=target, bucket=H)


@given(
    st.dictionaries(st.integers(0, 47), st.integers(0, 3600), max_size=48),  # <= 1 a second,
    st.integers(1, 48),
    st.integers(1, 3000),
)
def test_ranges_cover_the_range_in_order_within_the_target(
    counts: dict[int, int], hours: int, target: int
) -> None:
    in_range = {hour(h): n for h, n in counts.items() if h < hours}
    plan = plan_ranges(in_range, START, hour(hours), target=target, bucket=H)
    assert plan[0].start == START and plan[-1].end == hour(hours)
    assert all(a.end == b.start for a, b in pairwise(plan))
    assert all(s.start < s.end and s.start.microsecond == 0 for s in plan)
    assert sum(s.candidates for s in plan) == sum(in_range.values())
    assert all(s.candidates <= target for s in plan)
    total = sum(in_range.values())
    # No slice for nothing: a quiet stretch always joins a neighbour.
    assert all(s.candidates > 0 for s in plan) or (total == 0 and len(plan) == 1)


def test_a_busy_minute_is_cut_into_whole_seconds() -> None:
    plan = plan_ranges({START: 120}, START, START + 2 * MINUTE, target=30)
    assert [(r.start.second, r.candidates) for r in plan] == [(0, 30), (15, 30), (30, 30), (45, 30)]
    assert plan[-1].end == START + 2 * MINUTE


def test_a_month_within_the_target_is_one_range() -> None:
    end = START + timedelta(days=31)
    counts = {START + i * MINUTE: 1 for i in range(0, 44_640, 7)}
    assert plan_ranges(counts, START, end, target=len(counts)) == [Range(START, end, len(counts))]
