"""The content check's windows: a fixed cost per pass, each window starting where the copy's
last right window ended, and every byte of a file read within as many passes as it has windows;
a window found wrong, or not read, is read again."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.jobs.content_sample import Window, offset_after, window_at, windows_in

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("size", "sample", "offset", "window", "after"),
    [
        (10, 0, 7, Window(0, 10, 10), 0),  # 0: the whole file, every pass
        (10, 10, 3, Window(0, 10, 10), 0),  # no longer than the sample: whole
        (10, 64, 3, Window(0, 10, 10), 0),
        (10, 4, 0, Window(0, 4, 10), 4),
        (10, 4, 4, Window(4, 8, 10), 8),
        (10, 4, 8, Window(6, 10, 10), 0),  # the last one ends with the file, then round again
        (10, 4, 5, Window(5, 9, 10), 9),  # the sample changed mid-cycle: on from where it was
        (10, 4, 10, Window(0, 4, 10), 4),  # an offset outside the file starts over
        (10, 4, 99, Window(0, 4, 10), 4),
        (13_700_000, MIB, 9 * MIB, Window(9 * MIB, 10 * MIB, 13_700_000), 10 * MIB),
        (13_700_000, MIB, 13 * MIB, Window(13_700_000 - MIB, 13_700_000, 13_700_000), 0),
    ],
)
def test_windows(size: int, sample: int, offset: int, window: Window, after: int) -> None:
    assert window_at(size, sample, offset) == window
    assert offset_after(window) == after


def test_a_window_as_a_range_header() -> None:
    assert Window(4, 8, 10).http_range() == "bytes=4-7"
    assert Window(0, 10, 10).whole and not Window(0, 4, 10).whole
    assert Window(0, 4, 10).first and not Window(0, 4, 10).last
    assert Window(6, 10, 10).last and not Window(6, 10, 10).first


@given(
    size=st.integers(min_value=1, max_value=10**9),
    sample=st.integers(min_value=0, max_value=10**8),
    wrong=st.sets(st.integers(min_value=0, max_value=60), max_size=5),
)
def test_passes_cover_the_file_at_a_fixed_cost_whatever_was_found_wrong(
    size: int, sample: int, wrong: set[int]
) -> None:
    """Pass after pass from a fresh copy, some passes finding their window wrong (or not
    reading it): the passes that found theirs right read the file whole, in order, in exactly
    ``windows_in`` of them, one window each."""
    windows = windows_in(size, sample)
    cost = min(sample, size) if sample else size
    offset, right, number = 0, [], 0
    while len(right) < min(windows, 50):
        window = window_at(size, sample, offset)
        assert window.length == cost and 0 <= window.start < window.end <= window.size == size
        if number not in wrong:  # else not moved on: the same window next time
            right.append(window)
            offset = offset_after(window)
        number += 1
    if windows <= 50:
        reach = 0
        for window in right:
            assert window.start <= reach, "no byte is skipped"
            reach = window.end
        assert reach == size, f"read whole in {windows} passes"
        assert right[-1].last and offset == 0, "and round again"
