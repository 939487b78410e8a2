"""The content check's windows: a fixed cost per pass, consecutive passes reading consecutive
windows, and every byte of a file read within as many passes as it has windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.jobs.content_sample import Window, pass_number, sample_window, windows_in

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("size", "sample", "number", "window"),
    [
        (10, 0, 7, Window(0, 10, 10)),  # 0: the whole file, every pass
        (10, 10, 3, Window(0, 10, 10)),  # no longer than the sample: whole
        (10, 64, 3, Window(0, 10, 10)),
        (10, 4, 0, Window(0, 4, 10)),
        (10, 4, 1, Window(4, 8, 10)),
        (10, 4, 2, Window(6, 10, 10)),  # the last one ends with the file
        (10, 4, 3, Window(0, 4, 10)),  # and round again
        (3 * MIB, MIB, 5, Window(2 * MIB, 3 * MIB, 3 * MIB)),
    ],
)
def test_windows(size: int, sample: int, number: int, window: Window) -> None:
    assert sample_window(size, sample, number) == window


def test_a_window_as_a_range_header() -> None:
    assert Window(4, 8, 10).http_range() == "bytes=4-7"
    assert Window(0, 10, 10).whole and not Window(0, 4, 10).whole


@given(
    size=st.integers(min_value=1, max_value=10**9),
    sample=st.integers(min_value=0, max_value=10**8),
    first=st.integers(min_value=0, max_value=10**9),
)
def test_consecutive_passes_cover_the_file_at_a_fixed_cost(
    size: int, sample: int, first: int
) -> None:
    windows = windows_in(size, sample)
    seen = [sample_window(size, sample, first + k) for k in range(min(windows, 50))]
    cost = min(sample, size) if sample else size
    assert all(w.length == cost and 0 <= w.start < w.end <= w.size == size for w in seen)
    if windows <= 50:
        covered = sorted((w.start, w.end) for w in seen)
        reach = 0
        for start, end in covered:
            assert start <= reach, "no byte is skipped"
            reach = max(reach, end)
        assert reach == size, f"read whole in {windows} passes"


def test_pass_numbers_count_periods() -> None:
    start = datetime.fromtimestamp(900 * 1_990_000, UTC)  # a period's first second
    assert pass_number(start, 900) == 1_990_000
    assert pass_number(start + timedelta(seconds=899), 900) == 1_990_000
    assert pass_number(start + timedelta(seconds=900), 900) == 1_990_001
    assert pass_number(start - timedelta(seconds=1), 900) == 1_989_999
