import json
import random
import statistics
import uuid
from collections import Counter
from dataclasses import replace
from datetime import UTC, timedelta

import pytest

from gomoku_archive.demo.games import generate_month, generate_months
from gomoku_archive.demo.player import fill_board_without_five, play_game
from gomoku_archive.demo.rows import SourceGame
from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Reason, Result, Termination
from gomoku_archive.profile.months import Month

MONTH = Month(2026, 8)
GAMES = 120
FIRST, LAST = Month(2026, 8), Month(2026, 10)
PER_MONTH = 60


@pytest.fixture(scope="module")
def rows() -> list[SourceGame]:
    return list(generate_month(MONTH, GAMES, seed=7))


@pytest.fixture(scope="module")
def months() -> list[SourceGame]:
    return list(generate_months(FIRST, LAST, PER_MONTH, seed=11))


def valid(rows: list[SourceGame]) -> list[SourceGame]:
    return [r for r in rows if r.in_scope and r.expected_reason is None]


def month_of(row: SourceGame) -> Month:
    assert row.finished_at is not None
    return Month.containing(row.finished_at)


# -- an independent checker of the export's rules, written from the specification -----------
# (deliberately not gomoku.replay: it checks the generator's labels, not another module)

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
Board = dict[tuple[int, int], str]


def makes_five(board: Board, x: int, y: int) -> bool:
    colour = board[x, y]
    for dx, dy in DIRECTIONS:
        run = 1
        for sign in (1, -1):
            i, j = x + sign * dx, y + sign * dy
            while board.get((i, j)) == colour:
                run += 1
                i, j = i + sign * dx, j + sign * dy
        if run >= 5:
            return True
    return False


def well_formed(move: object) -> bool:
    return (
        isinstance(move, dict)
        and move.get("color") in ("B", "W")
        and type(move.get("x")) is int
        and type(move.get("y")) is int
    )


def verdict(row: SourceGame) -> Reason | None:
    """What the export must decide for an in-scope row, reasons in their documented order."""
    if row.status == "ABORTED":
        return Reason.ABORTED
    assert row.finished_at is not None
    if (
        row.status != "FINISHED"
        or row.result not in {r.value for r in Result}
        or row.termination not in {t.value for t in Termination}
        or row.board_size != BOARD_SIZE
        or row.finished_at < row.started_at
    ):
        return Reason.INCOMPLETE
    moves = row.moves
    if moves == []:
        return Reason.EMPTY
    if not isinstance(moves, list) or not all(well_formed(m) for m in moves):
        return Reason.MALFORMED
    if any(m["color"] != "BW"[i % 2] for i, m in enumerate(moves)):
        return Reason.TURN_ORDER
    if any(not (0 <= m["x"] < BOARD_SIZE and 0 <= m["y"] < BOARD_SIZE) for m in moves):
        return Reason.OUT_OF_BOUNDS
    if len({(m["x"], m["y"]) for m in moves}) < len(moves):
        return Reason.OCCUPIED
    board: Board = {}
    fives = []
    for ply, m in enumerate(moves):
        board[m["x"], m["y"]] = m["color"]
        if makes_five(board, m["x"], m["y"]):
            fives.append(ply)
    if fives and fives[0] < len(moves) - 1:
        return Reason.MOVES_AFTER_FIVE
    five = bool(fives)
    last_mover_wins = "BLACK_WIN" if len(moves) % 2 else "WHITE_WIN"
    agrees = {
        "FIVE": five and row.result == last_mover_wins,
        "RESIGNATION": not five and row.result != "DRAW",
        "TIMEOUT": not five and row.result != "DRAW",
        "BOARD_FULL": not five and len(moves) == POINTS and row.result == "DRAW",
        "AGREEMENT": not five and row.result == "DRAW",
    }[row.termination]
    return None if agrees else Reason.RESULT_MISMATCH


def on_board(x: int, y: int) -> bool:
    return 0 <= x < BOARD_SIZE and 0 <= y < BOARD_SIZE


WINDOWS = [
    [(x + k * dx, y + k * dy) for k in range(5)]
    for y in range(BOARD_SIZE)
    for x in range(BOARD_SIZE)
    for dx, dy in DIRECTIONS
    if on_board(x + 4 * dx, y + 4 * dy)
]
"""Every five consecutive points of a line."""


def winning_points(board: Board, colour: str) -> set[tuple[int, int]]:
    """Empty points where ``colour`` would make five (or more) in a row."""
    found = set()
    for window in WINDOWS:
        stones = [board.get(p) for p in window]
        if stones.count(colour) == 4 and None in stones:
            found.add(window[stones.index(None)])
    return found


def position(moves: list[dict[str, object]]) -> Board:
    return {(int(str(m["x"])), int(str(m["y"]))): str(m["color"]) for m in moves}


# -- the tests -------------------------------------------------------------------------------


def test_verdict_checker_catches_what_it_should() -> None:
    # The checker itself must be able to fail: a five credited to the wrong player.
    base = next(
        r for r in valid(list(generate_month(MONTH, 10, seed=1))) if r.termination == "FIVE"
    )
    assert verdict(base) is None
    flipped = "WHITE_WIN" if base.result == "BLACK_WIN" else "BLACK_WIN"
    assert verdict(replace(base, result=flipped)) is Reason.RESULT_MISMATCH


def test_same_seed_same_rows() -> None:
    assert list(generate_month(MONTH, 30, seed=3)) == list(generate_month(MONTH, 30, seed=3))
    first = {r.id for r in generate_month(MONTH, 30, seed=3)}
    assert first.isdisjoint(r.id for r in generate_month(MONTH, 30, seed=4))


def test_months_are_independent_of_each_other(months: list[SourceGame]) -> None:
    again: list[SourceGame] = []
    month = FIRST
    while month <= LAST:
        again += generate_month(month, PER_MONTH, seed=11)
        month = month.next()
    assert again == months


@pytest.mark.parametrize("games", [0, 1, 10, 60])
def test_exactly_the_requested_valid_games(games: int) -> None:
    made = list(generate_months(FIRST, LAST, games, seed=2))
    assert Counter(month_of(r) for r in valid(made)) == (
        Counter({FIRST: games, FIRST.next(): games, LAST: games}) if games else Counter()
    )


def test_negative_games_rejected() -> None:
    with pytest.raises(ValueError, match="games"):
        list(generate_month(MONTH, -1, seed=1))


def test_every_reason_present_each_month(months: list[SourceGame]) -> None:
    by_month: dict[Month, set[Reason | None]] = {}
    for row in months:
        if row.in_scope:
            by_month.setdefault(month_of(row), set()).add(row.expected_reason)
    assert by_month == {month: {*Reason, None} for month in (FIRST, FIRST.next(), LAST)}


def test_zero_games_still_has_broken_and_out_of_scope_rows() -> None:
    made = list(generate_month(MONTH, 0, seed=5))
    assert not valid(made)
    assert {r.expected_reason for r in made if r.in_scope} == set(Reason)
    assert any(not r.in_scope for r in made)


def test_every_label_matches_an_independent_replay(
    rows: list[SourceGame], months: list[SourceGame]
) -> None:
    checked: Counter[Reason | None] = Counter()
    for row in rows + months:
        if row.in_scope:
            assert verdict(row) == row.expected_reason, row
            checked[row.expected_reason] += 1
    assert checked[None] == GAMES + 3 * PER_MONTH


def test_in_scope_label(rows: list[SourceGame]) -> None:
    for row in rows:
        candidate = row.mode == "RANKED" and row.rated and row.ruleset == "FREESTYLE"
        assert row.in_scope == (candidate and row.finished_at is not None)


def test_out_of_scope_rows(rows: list[SourceGame]) -> None:
    outside = [r for r in rows if not r.in_scope]
    assert len(outside) == round(GAMES * 0.2)
    assert any(r.mode != "RANKED" for r in outside)
    assert any(r.mode == "RANKED" and not r.rated for r in outside)
    assert any(r.ruleset != "FREESTYLE" for r in outside)
    in_progress = [r for r in outside if r.status == "IN_PROGRESS"]
    assert in_progress
    assert all(r.finished_at is None and r.result is None for r in in_progress)


def test_termination_mix(rows: list[SourceGame]) -> None:
    endings = Counter(r.termination for r in valid(rows))
    assert endings["FIVE"] > GAMES / 2
    assert all(endings[t.value] >= 1 for t in Termination)


def test_board_full_draws_are_complete_boards(rows: list[SourceGame]) -> None:
    full = [r for r in valid(rows) if r.termination == "BOARD_FULL"]
    assert full
    for row in full:
        assert isinstance(row.moves, list)
        assert len(row.moves) == POINTS
        assert row.result == "DRAW"
    points = fill_board_without_five(random.Random(1))
    assert sorted(points) == list(range(POINTS))


def test_every_finish_inside_its_month(rows: list[SourceGame], months: list[SourceGame]) -> None:
    assert all(month_of(r) == MONTH for r in rows if r.finished_at is not None)
    for row in rows + months:
        assert row.started_at.tzinfo is UTC
        assert row.finished_at is None or row.finished_at.tzinfo is UTC
    assert {month_of(r) for r in months if r.finished_at} == {FIRST, FIRST.next(), LAST}


def test_month_and_day_edges(rows: list[SourceGame]) -> None:
    games = valid(rows)
    exact = [r for r in games if r.finished_at == MONTH.start]
    assert exact
    assert all(r.started_at < MONTH.start for r in exact)
    assert any(r.finished_at and r.finished_at >= MONTH.end - timedelta(seconds=1) for r in games)
    days = [r for r in games if r.finished_at and r.started_at.date() < r.finished_at.date()]
    assert any(r.started_at >= MONTH.start for r in days)  # a midnight inside the month


def test_timestamps_sometimes_carry_microseconds(rows: list[SourceGame]) -> None:
    fractions = {bool(r.finished_at.microsecond) for r in valid(rows) if r.finished_at}
    assert fractions == {True, False}


def test_realistic_metadata(rows: list[SourceGame]) -> None:
    games = valid(rows)
    ratings = [rating for r in games for rating in (r.black_rating, r.white_rating)]
    known = [rating for rating in ratings if rating is not None]
    assert len(known) >= 0.9 * len(ratings)
    assert all(type(rating) is int for rating in known)
    assert 1350 < statistics.mean(known) < 1650
    assert 150 < statistics.stdev(known) < 450
    assert {r.time_control_seconds for r in games} <= {60, 180, 300, 600, None}
    for row in games:
        assert row.finished_at is not None
        assert isinstance(row.moves, list)
        seconds = (row.finished_at - row.started_at).total_seconds()
        time_control = row.time_control_seconds
        if row.termination == "TIMEOUT":  # the flagged player's whole budget is gone
            assert time_control is not None
            assert time_control <= seconds
        else:
            assert 0.3 <= seconds / len(row.moves) <= 120
        if time_control is not None:
            assert seconds <= 2 * time_control + 1  # both clocks, rounded to the second


def test_ids(months: list[SourceGame]) -> None:
    ids = [r.id for r in months]
    assert len(set(ids)) == len(ids)
    assert all(i.version == 4 for i in ids)
    for row in months:
        for player in (row.black_player_id, row.white_player_id):
            assert player is None or isinstance(player, uuid.UUID)
        assert row.black_player_id is None or row.black_player_id != row.white_player_id


def test_moves_are_json(rows: list[SourceGame]) -> None:
    for row in rows:
        json.dumps(row.moves)
    for row in valid(rows):
        assert isinstance(row.moves, list)
        assert all(list(m) == ["color", "x", "y"] for m in row.moves)


def test_player_takes_wins_and_blocks_fours(rows: list[SourceGame]) -> None:
    fives = [r for r in valid(rows) if r.termination == "FIVE"]
    unstoppable = 0
    for row in fives:
        assert isinstance(row.moves, list)
        winner = "B" if row.result == "BLACK_WIN" else "W"
        # On their previous turn the winner had no five to make, or it would have been made.
        assert not winning_points(position(row.moves[:-3]), winner)
        # Usually the loser faced two threats at once rather than missing a block.
        unstoppable += len(winning_points(position(row.moves[:-2]), winner)) >= 2
    assert unstoppable >= 0.8 * len(fives)


def test_stronger_player_wins_more_often() -> None:
    rng = random.Random(11)
    stronger = decided = 0
    for game in range(200):
        strong = Color.BLACK if game % 2 else Color.WHITE
        skills = {strong: 0.9, strong.other: 0.1}
        played = play_game(rng, black_skill=skills[Color.BLACK], white_skill=skills[Color.WHITE])
        if played.winner is not None:
            decided += 1
            stronger += played.winner is strong
    assert stronger > 0.6 * decided


def test_the_specified_defects_are_there(rows: list[SourceGame]) -> None:
    def broken(reason: Reason) -> list[SourceGame]:
        return [r for r in rows if r.in_scope and r.expected_reason is reason]

    def items(row: SourceGame) -> list[dict[str, object]]:
        return [m for m in row.moves if isinstance(m, dict)] if isinstance(row.moves, list) else []

    assert any(len(items(r)) == 2 for r in broken(Reason.ABORTED))
    incomplete = broken(Reason.INCOMPLETE)
    assert any(r.status == "FINISHED" and r.result is None for r in incomplete)
    assert any(r.board_size == 19 for r in incomplete)
    malformed = broken(Reason.MALFORMED)
    assert any(isinstance(r.moves, str) for r in malformed)
    assert any(isinstance(r.moves, dict) for r in malformed)
    moves = [m for r in malformed for m in items(r)]
    assert any("y" not in m for m in moves)
    assert {str, float, bool} <= {type(m.get("x")) for m in moves}
    assert any(m["x"] == BOARD_SIZE for r in broken(Reason.OUT_OF_BOUNDS) for m in items(r))
    mismatches = broken(Reason.RESULT_MISMATCH)
    assert any(r.termination == "BOARD_FULL" and len(items(r)) == 40 for r in mismatches)
    assert any(r.termination == "AGREEMENT" and r.result == "BLACK_WIN" for r in mismatches)
