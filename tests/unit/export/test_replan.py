"""The consistency check's decision (``export.replan``): a build's done ranges are accepted only
when they are the check's plan AND hold the check's rows; otherwise the build gets the check's
plan, keeping each done range whose edges and rows are unchanged."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from gomoku_archive.export.ranges import Range
from gomoku_archive.export.replan import Replan, replan

START = datetime(2026, 8, 1)


def at(hour: int) -> datetime:
    return START + timedelta(hours=hour)


@dataclass(frozen=True, slots=True)
class Done:
    """A done range as the check sees it (``replan.DoneRange``)."""

    seq: int
    first_second: datetime
    end_second: datetime
    fingerprint: object


def done(seq: int, lo: int, hi: int, fingerprint: object) -> Done:
    return Done(seq, at(lo), at(hi), fingerprint)


def plan(*edges: int) -> list[Range]:
    return [Range(at(lo), at(hi), 10) for lo, hi in itertools.pairwise(edges)]


BUILD = [done(0, 0, 3, "a"), done(1, 3, 5, "b"), done(2, 5, 9, "c")]


def test_ranges_cut_by_the_check_s_plan_with_its_rows_are_accepted() -> None:
    assert replan(BUILD, ["a", "b", "c"], plan(0, 3, 5, 9)) is None


@pytest.mark.parametrize(
    ("seen", "edges", "expected"),
    [
        # Rows of range 1 changed, the plan holds: range 1 is exported again, the others kept.
        (["a", "x", "c"], (0, 3, 5, 9), Replan(tuple(plan(0, 3, 5, 9)), (0, None, 2), (1,), False)),
        # Every row the same, but the check's counts cut the month elsewhere (counts changed
        # between the plan's count and the ranges' reads): the moved ranges are new.
        (["a", "b", "c"], (0, 4, 5, 9), Replan(tuple(plan(0, 4, 5, 9)), (None, None, 2), (), True)),
        # A game moved from range 0 into range 1: both changed, and the edge between them
        # moved; range 2 is kept.
        (
            ["x", "y", "c"],
            (0, 2, 5, 9),
            Replan(tuple(plan(0, 2, 5, 9)), (None, None, 2), (0, 1), True),
        ),
        # The check's plan has more ranges: new ones between kept ones.
        (
            ["a", "b", "c"],
            (0, 3, 4, 5, 9),
            Replan(tuple(plan(0, 3, 4, 5, 9)), (0, None, None, 2), (), True),
        ),
        # ... or fewer: two ranges become one.
        (["a", "b", "c"], (0, 5, 9), Replan(tuple(plan(0, 5, 9)), (None, 2), (), True)),
    ],
    ids=["rows-changed", "edges-moved", "moved-game", "more-ranges", "fewer-ranges"],
)
def test_otherwise_the_build_gets_the_check_s_plan_keeping_what_is_unchanged(
    seen: list[object], edges: tuple[int, ...], expected: Replan
) -> None:
    assert replan(BUILD, seen, plan(*edges)) == expected


def test_how_many_ranges_are_exported_again() -> None:
    found = replan(BUILD, ["x", "y", "c"], plan(0, 2, 5, 9))
    assert found is not None and found.to_export == 2


def test_a_range_is_kept_only_with_the_same_edges_and_rows() -> None:
    """Same first second but another end is another range (its part ends elsewhere); same
    edges but other rows are read again."""
    found = replan(BUILD, ["a", "b", "c"], plan(0, 3, 6, 9))
    assert found is not None and found.kept == (0, None, None)
    found = replan(BUILD, ["x", "b", "c"], plan(0, 3, 6, 9))
    assert found is not None and found.kept == (None, None, None)


def test_a_fingerprint_per_range_and_a_plan_are_required() -> None:
    with pytest.raises(ValueError, match="one fingerprint per range"):
        replan(BUILD, ["a", "b"], plan(0, 3, 5, 9))
    with pytest.raises(ValueError, match="at least one range"):
        replan(BUILD, ["a", "b", "c"], [])
