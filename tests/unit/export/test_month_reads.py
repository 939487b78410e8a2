"""How the month's count and consistency check are cut for several connections: minute slices
that cover the month exactly, and runs of consecutive ranges that together are every range."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.export.month_reads import minute_slices, range_groups

START = datetime(2026, 8, 1)


@dataclass(frozen=True, slots=True)
class Planned:
    """A range as the check sees it (``month_reads.CheckedRange``)."""

    seq: int
    planned: int
    first_second: datetime


def a_range(seq: int, planned: int) -> Planned:
    return Planned(seq, planned, START + timedelta(hours=seq))


@given(st.integers(1, 60 * 24 * 31), st.integers(1, 40))
def test_minute_slices_cover_the_span_exactly_in_whole_minutes(minutes: int, count: int) -> None:
    end = START + timedelta(minutes=minutes)
    slices = minute_slices(START, end, count)
    assert 1 <= len(slices) <= count
    assert slices[0][0] == START and slices[-1][1] == end
    for (_, hi), (lo, _) in itertools.pairwise(slices):
        assert hi == lo
    lengths = [(hi - lo) // timedelta(minutes=1) for lo, hi in slices]
    assert all(n >= 1 for n in lengths)
    assert all((hi - lo) % timedelta(minutes=1) == timedelta(0) for lo, hi in slices)
    assert max(lengths) - min(lengths) <= 1


def test_a_month_in_eight_slices() -> None:
    slices = minute_slices(START, datetime(2026, 9, 1), 8)
    assert len(slices) == 8
    assert slices[1][0] == datetime(2026, 8, 4, 21)  # 44,640 minutes / 8 = 5,580 = 3 d 21 h


@given(st.lists(st.integers(0, 60_000), min_size=1, max_size=60), st.integers(1, 12))
def test_range_groups_are_every_range_in_order(planned: list[int], count: int) -> None:
    ranges = [a_range(seq, n) for seq, n in enumerate(planned)]
    groups = range_groups(ranges, count)
    assert 1 <= len(groups) <= count
    assert all(groups)
    assert [r.seq for g in groups for r in g] == [r.seq for r in ranges]


def test_equal_ranges_make_equal_groups() -> None:
    groups = range_groups([a_range(seq, 50_000) for seq in range(2_000)], 8)
    assert [len(g) for g in groups] == [250] * 8


def test_one_connection_reads_every_range_in_one_run() -> None:
    ranges = [a_range(seq, 10) for seq in range(5)]
    assert [list(g) for g in range_groups(ranges, 1)] == [ranges]
