"""The month statistics: hand-counted games, the nearest-rank percentiles, the histogram's bins,
the stored form, and a property test against a naive recount of the written lines."""

from __future__ import annotations

import json
import pickle
import random
import uuid
from datetime import UTC, datetime
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.catalog.manifest import stats_entry
from gomoku_archive.demo.examples import example_records
from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Move, Result, Termination
from gomoku_archive.profile.stats import (
    EMPTY,
    LENGTH_BIN,
    MonthStats,
    StatsCounter,
    grid,
    length_histogram,
    percentile,
)
from gomoku_archive.profile.writer import GameRecord, game_line, game_parts, move_node
from tests.budget import examples
from tests.stats_recount import recount
from tests.support import add_record

B, W = Color.BLACK, Color.WHITE


def game(
    moves: list[tuple[int, int]],
    result: Result = Result.BLACK_WIN,
    *,
    termination: Termination = Termination.RESIGNATION,
    tc: int | None = 60,
    black: int | None = 1200,
    white: int | None = 1210,
) -> GameRecord:
    return GameRecord(
        game_id=uuid.uuid4(),
        started_at=datetime(2026, 8, 12, 12, 0, tzinfo=UTC),
        finished_at=datetime(2026, 8, 12, 12, 5, tzinfo=UTC),
        result=result,
        termination=termination,
        moves=[Move(B if i % 2 == 0 else W, x, y) for i, (x, y) in enumerate(moves)],
        time_control_seconds=tc,
        black_rating=black,
        white_rating=white,
    )


def counted(*games: GameRecord) -> MonthStats:
    counter = StatsCounter()
    for g in games:
        add_record(counter, g)
    return counter.result()


THREE = (
    game([(7, 7), (8, 7), (8, 8)]),  # hh ih ii, black wins
    game([(0, 0), (14, 1)], Result.WHITE_WIN, tc=None, black=None, white=1500),  # aa ob
    game([(7, 7)], Result.DRAW, termination=Termination.AGREEMENT, tc=600, black=-5, white=0),
)


def test_three_games_counted_by_hand() -> None:
    stats = counted(*THREE)
    assert stats.winners == {"black": 1, "white": 1, "draw": 1}
    assert stats.games == 3
    assert stats.lengths == {1: 1, 2: 1, 3: 1}
    first = grid(stats.first_moves)
    assert first[7][7] == 2 and first[0][0] == 1 and sum(map(sum, first)) == 3
    every = grid(stats.all_moves)
    # Rows from the top, columns from the left: ob is column o (14) of row b (1).
    assert (every[7][7], every[7][8], every[8][8], every[0][0], every[1][14]) == (2, 1, 1, 1, 1)
    assert sum(map(sum, every)) == 6
    assert stats.ratings == {-5: 1, 0: 1, 1200: 1, 1210: 1, 1500: 1}
    assert list(stats.time_controls.items()) == [(60, 1), (600, 1), (None, 1)]


def test_the_manifest_object_of_three_games() -> None:
    entry = stats_entry(counted(*THREE))
    assert entry["winners"] == {"black": 1, "white": 1, "draw": 1}
    length = entry["length"]
    assert (length["min"], length["median"], length["p90"], length["max"]) == (1, 2, 3, 3)
    assert length["histogram"][0] == {"from": 1, "to": 10, "games": 3}
    assert sum(b["games"] for b in length["histogram"]) == 3
    assert len(entry["firstMoves"]) == BOARD_SIZE
    assert all(len(row) == BOARD_SIZE for row in entry["firstMoves"] + entry["allMoves"])
    assert entry["allMoves"][1][14] == 1
    # Five ratings, sorted -5, 0, 1200, 1210, 1500: ranks 1, 3 and 5.
    assert entry["ratings"] == {"count": 5, "p10": -5, "median": 1200, "p90": 1500}
    assert entry["timeControls"] == {"60": 1, "600": 1, "none": 1}
    assert list(entry["timeControls"]) == ["60", "600", "none"]


def test_a_month_without_games_has_zero_counts_and_null_percentiles() -> None:
    entry = stats_entry(EMPTY)
    assert entry["winners"] == {"black": 0, "white": 0, "draw": 0}
    assert entry["length"]["min"] is None and entry["length"]["max"] is None
    assert entry["length"]["median"] is None and entry["length"]["p90"] is None
    assert [b["games"] for b in entry["length"]["histogram"]] == [0] * 23
    assert entry["firstMoves"] == [[0] * 15] * 15 == entry["allMoves"]
    assert entry["ratings"] == {"count": 0, "p10": None, "median": None, "p90": None}
    assert entry["timeControls"] == {}


def test_games_without_ratings_give_null_rating_percentiles() -> None:
    stats = counted(game([(7, 7)], black=None, white=None))
    assert stats_entry(stats)["ratings"] == {"count": 0, "p10": None, "median": None, "p90": None}


@pytest.mark.parametrize(
    ("counts", "p", "expected"),
    [
        ({}, 50, None),
        ({7: 1}, 10, 7),
        ({7: 1}, 100, 7),
        ({1: 1, 2: 1}, 50, 1),  # even N: the lower middle value (rank ceil(1.0) = 1)
        ({1: 1, 2: 1, 3: 1, 4: 1}, 50, 2),
        ({1: 1, 2: 1, 3: 1, 4: 1}, 75, 3),
        ({1: 1, 2: 1, 3: 1, 4: 1}, 76, 4),
        ({10: 9, 20: 1}, 90, 10),  # rank 9 of 10
        ({10: 9, 20: 1}, 91, 20),  # rank ceil(9.1) = 10
        ({-3: 2, 5: 2}, 10, -3),
        ({i: 1 for i in range(1, 101)}, 90, 90),
    ],
)
def test_nearest_rank_percentiles(counts: dict[int, int], p: float, expected: int | None) -> None:
    assert percentile(counts, p) == expected


def test_the_histogram_has_fixed_ten_move_bins_from_1_to_225() -> None:
    bins = length_histogram({1: 1, 10: 2, 11: 3, 220: 4, 221: 5, 225: 6})
    assert len(bins) == 23
    assert bins[0] == (1, 10, 3) and bins[1] == (11, 20, 3)
    assert bins[21] == (211, 220, 4) and bins[22] == (221, 225, 11)
    assert all(last - first + 1 == LENGTH_BIN for first, last, _ in bins[:-1])
    assert all(b[0] == a[1] + 1 for a, b in pairwise(bins))
    assert bins[-1][1] == POINTS


def test_the_stored_form_round_trips_through_jsonb_whatever_its_key_order() -> None:
    stats = counted(*example_records())
    stored = json.loads(json.dumps(stats.to_json()))
    shuffled = {k: _shuffled(v) if isinstance(v, dict) else v for k, v in stored.items()}
    again = MonthStats.from_json(shuffled)
    assert again == stats
    assert list(again.lengths) == sorted(again.lengths)
    assert list(again.ratings) == sorted(again.ratings)
    keys = list(again.time_controls)
    assert keys == sorted(keys, key=lambda t: (t is None, t or 0))
    assert stats_entry(again) == stats_entry(stats)
    with pytest.raises(ValueError, match="version"):
        MonthStats.from_json({**stored, "version": 99})


def _shuffled(d: dict[str, object]) -> dict[str, object]:
    items = list(d.items())
    random.Random(3).shuffle(items)
    return dict(items)


def test_game_parts_are_the_line_and_the_shared_move_nodes() -> None:
    for record in example_records()[:20]:
        parts = game_parts(record)
        assert "".join(parts) == game_line(record)
        assert parts[-1] == ")\n"
        for move, node in zip(record.moves, parts[1:-1], strict=True):
            assert node is move_node(move.color, move.y * BOARD_SIZE + move.x)


def test_counts_scale_with_repeats_and_hold_nothing_per_game() -> None:
    records = example_records()
    once = counted(*records)
    counter = StatsCounter()
    for _ in range(5):
        for record in records:
            add_record(counter, record)
    five = counter.result()
    assert five.winners == {k: 5 * v for k, v in once.winners.items()}
    assert five.lengths == {k: 5 * v for k, v in once.lengths.items()}
    assert five.all_moves == tuple(5 * c for c in once.all_moves)
    # Memory is the counters: at most a key per node, length, rating and time control.
    assert len(five.lengths) == len(once.lengths) and len(five.ratings) == len(once.ratings)


# --- a naive recount of the written lines (tests/stats_recount.py) ------------------------------


def test_the_example_archive_matches_a_naive_recount_of_its_lines() -> None:
    records = example_records()
    assert stats_entry(counted(*records)) == recount([game_line(r) for r in records])


_RESULTS = {
    Result.BLACK_WIN: Termination.RESIGNATION,
    Result.WHITE_WIN: Termination.TIMEOUT,
    Result.DRAW: Termination.AGREEMENT,
}


@st.composite
def games(draw: st.DrawFn) -> GameRecord:
    n = draw(st.integers(1, POINTS))
    points = draw(st.permutations(range(POINTS)))[:n]
    result = draw(st.sampled_from(list(Result)))
    ratings = st.none() | st.integers(-50, 3000)
    return game(
        [(p % BOARD_SIZE, p // BOARD_SIZE) for p in points],
        result,
        termination=_RESULTS[result],
        tc=draw(st.none() | st.sampled_from([15, 60, 180, 600, 86400])),
        black=draw(ratings),
        white=draw(ratings),
    )


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(games(), max_size=30))
def test_counts_equal_a_naive_recount(records: list[GameRecord]) -> None:
    entry = stats_entry(counted(*records))
    expected = recount([game_line(r) for r in records])
    assert entry == expected
    assert list(entry["timeControls"]) == sorted(
        entry["timeControls"], key=lambda k: (k == "none", int(k) if k != "none" else 0)
    )


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(games(), max_size=30), st.lists(st.integers(0, 30), max_size=4))
def test_merged_parts_count_as_the_whole(records: list[GameRecord], cuts: list[int]) -> None:
    # What a two-process export does: each slice counted apart (in another process: pickled),
    # then merged in order.
    edges = [0, *sorted(min(c, len(records)) for c in cuts), len(records)]
    total = StatsCounter()
    for lo, hi in pairwise(edges):
        part = StatsCounter()
        for record in records[lo:hi]:
            add_record(part, record)
        total.merge(pickle.loads(pickle.dumps(part)))
    assert total.result() == counted(*records)
