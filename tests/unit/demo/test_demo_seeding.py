"""Which ``seed-demo`` calls a demo makes for the months it still lacks."""

from __future__ import annotations

import pytest

from gomoku_archive.demo.database_setup import contiguous_runs
from gomoku_archive.profile.months import Month


def m(text: str) -> Month:
    return Month.parse(text)


@pytest.mark.parametrize(
    ("months", "runs"),
    [
        ([], []),
        (["2026-08"], [("2026-08", "2026-08")]),
        (["2026-08", "2026-09", "2026-10"], [("2026-08", "2026-10")]),
        (["2026-11", "2026-08", "2026-09"], [("2026-08", "2026-09"), ("2026-11", "2026-11")]),
        (["2026-12", "2027-01"], [("2026-12", "2027-01")]),
    ],
)
def test_contiguous_runs(months: list[str], runs: list[tuple[str, str]]) -> None:
    assert contiguous_runs([m(x) for x in months]) == [(m(a), m(b)) for a, b in runs]
