"""The freestyle replay engine: every exclusion reason, the priority order between them, board
edges and the result rules, checked by tables, by a naive reference implementation and by
properties of random games."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import BOARD_SIZE, Color, Move, Reason, Result, Termination
from gomoku_archive.gomoku.lines import point_bit
from gomoku_archive.gomoku.replay import Verdict, coerce_moves, is_valid_bitboards, replay
from tests.budget import examples

B, W = Color.BLACK, Color.WHITE


def replay_raw(raw_moves: object, result: Result, termination: Termination) -> Verdict:
    """The export's path from the decoded moves column: ``coerce_moves``, then ``replay``."""
    moves = coerce_moves(raw_moves)
    return moves if isinstance(moves, Verdict) else replay(moves, result, termination)


BW, WW, DRAW = Result.BLACK_WIN, Result.WHITE_WIN, Result.DRAW
FIVE, RES, TIME = Termination.FIVE, Termination.RESIGNATION, Termination.TIMEOUT
FULL, AGREE = Termination.BOARD_FULL, Termination.AGREEMENT


def alternate(*points: tuple[int, int]) -> list[Move]:
    """Moves at ``points``, black first, colours alternating."""
    return [Move(B if i % 2 == 0 else W, x, y) for i, (x, y) in enumerate(points)]


def raw(moves: Sequence[Move]) -> list[dict[str, object]]:
    return [{"color": m.color.value, "x": m.x, "y": m.y} for m in moves]


def interleave(black: Sequence[tuple[int, int]], white: Sequence[tuple[int, int]]) -> list[Move]:
    points: list[tuple[int, int]] = []
    for i, point in enumerate(black):
        points.append(point)
        if i < len(white):
            points.append(white[i])
    return alternate(*points)


# Black builds a line, white answers on every other point of rows 14 and 12: never five.
FAR = [(x, 14) for x in range(0, 15, 2)] + [(x, 12) for x in range(0, 15, 2)]


def black_line(cells: Sequence[tuple[int, int]], last: tuple[int, int] | None = None) -> list[Move]:
    """Black plays ``cells`` (then ``last`` if given), white plays harmless far points."""
    black = [*cells, *([last] if last else [])]
    return interleave(black, FAR[: len(black) - 1])


HORIZONTAL_EDGE = black_line([(10, 0), (11, 0), (12, 0), (13, 0), (14, 0)])
VERTICAL_EDGE = black_line([(14, 3), (14, 4), (14, 5), (14, 6), (14, 7)])
DIAGONAL_DOWN = black_line([(10, 9), (11, 10), (12, 11), (13, 12), (14, 13)])
# Anti-diagonal ending in the top-right corner.
DIAGONAL_UP = black_line([(10, 4), (11, 3), (12, 2), (13, 1), (14, 0)])
# 0,1,2 and 4,5 then 3: the last stone makes six in a row.
OVERLINE = black_line([(0, 5), (1, 5), (2, 5), (4, 5), (5, 5), (3, 5)])
# White wins: black wastes moves on row 14, white fills column 0 from row 0 down.
WHITE_FIVE = interleave([(2, 14), (4, 14), (6, 14), (8, 14), (10, 14)], [(0, y) for y in range(5)])
NO_FIVE = alternate((7, 7), (8, 7), (8, 8))


def draw_board() -> list[str]:
    """A full board with no five of either colour: pairs of stones, shifted one pair each row."""
    return [
        "".join("X" if (x + 2 * y) // 2 % 2 == 0 else "O" for x in range(BOARD_SIZE))
        for y in range(BOARD_SIZE)
    ]


# A full board whose only five, x = 5..9 on row 7, is completed by black's 113th stone at hh.
FIVE_ON_LAST_POINT = [
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXOOOXXOOX",
    "XXOOXOOOXXOOXXO",
    "OOXXOXXXXXOXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
]


def fill(picture: Sequence[str], last: tuple[int, int] | None = None) -> list[Move]:
    """Every point of ``picture`` played, X black and O white, ``last`` (black) played last."""
    black = [(x, y) for y, row in enumerate(picture) for x, c in enumerate(row) if c == "X"]
    white = [(x, y) for y, row in enumerate(picture) for x, c in enumerate(row) if c == "O"]
    if last is not None:
        black.remove(last)
        black.append(last)
    return interleave(black, white)


FULL_DRAW = fill(draw_board())
FULL_FIVE = fill(FIVE_ON_LAST_POINT, last=(7, 7))


# --- a naive reference: the spec read literally, whole board scanned after every move -------


def naive_five(board: list[list[str]], colour: str) -> bool:
    for y in range(BOARD_SIZE):
        for x in range(BOARD_SIZE):
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(x + k * dx, y + k * dy) for k in range(5)]
                if all(
                    0 <= cx < BOARD_SIZE and 0 <= cy < BOARD_SIZE and board[cy][cx] == colour
                    for cx, cy in cells
                ):
                    return True
    return False


def five_through(board: list[list[str]], x: int, y: int) -> bool:
    """Whether the stone at (x, y) is part of five or more in a row: walk each line both ways."""
    colour = board[y][x]
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            cx, cy = x + sign * dx, y + sign * dy
            while 0 <= cx < BOARD_SIZE and 0 <= cy < BOARD_SIZE and board[cy][cx] == colour:
                run += 1
                cx, cy = cx + sign * dx, cy + sign * dy
        if run >= 5:
            return True
    return False


def naive_verdict(moves: object, result: Result, termination: Termination) -> tuple[object, ...]:
    if moves is None or moves == []:
        return (Reason.EMPTY, None)
    if not isinstance(moves, list):
        return (Reason.MALFORMED, None)
    for i, m in enumerate(moves, 1):
        ok = (
            isinstance(m, dict)
            and m.get("color") in ("B", "W")
            and type(m.get("x")) is int
            and type(m.get("y")) is int
        )
        if not ok:
            return (Reason.MALFORMED, i)
    for i, m in enumerate(moves, 1):
        if m["color"] != ("B" if i % 2 else "W"):
            return (Reason.TURN_ORDER, i)
    for i, m in enumerate(moves, 1):
        if not (0 <= m["x"] < BOARD_SIZE and 0 <= m["y"] < BOARD_SIZE):
            return (Reason.OUT_OF_BOUNDS, i)
    board = [["."] * BOARD_SIZE for _ in range(BOARD_SIZE)]
    for i, m in enumerate(moves, 1):
        if board[m["y"]][m["x"]] != ".":
            return (Reason.OCCUPIED, i)
        board[m["y"]][m["x"]] = m["color"]
    board = [["."] * BOARD_SIZE for _ in range(BOARD_SIZE)]
    five_at = 0
    for i, m in enumerate(moves, 1):
        board[m["y"]][m["x"]] = m["color"]
        if five_through(board, m["x"], m["y"]):
            five_at = i
            break
    n = len(moves)
    if five_at and five_at < n:
        return (Reason.MOVES_AFTER_FIVE, five_at + 1)
    mover_wins = BW if n % 2 else WW
    ok = {
        FIVE: five_at == n and result == mover_wins,
        RES: not five_at and result != DRAW,
        TIME: not five_at and result != DRAW,
        FULL: not five_at and n == 225 and result == DRAW,
        AGREE: not five_at and result == DRAW,
    }[termination]
    return (None, None) if ok else (Reason.RESULT_MISMATCH, n)


def both(moves: Sequence[Move], result: Result, termination: Termination) -> Verdict:
    """Run both entry points and the reference; they must agree."""
    typed = replay(moves, result, termination)
    untyped = replay_raw(raw(moves), result, termination)
    assert (typed.reason, typed.ply) == (untyped.reason, untyped.ply)
    assert (typed.reason, typed.ply) == naive_verdict(raw(moves), result, termination)
    return typed


def test_fixtures_are_what_they_claim() -> None:
    def board_of(moves: Sequence[Move]) -> list[list[str]]:
        board = [["."] * BOARD_SIZE for _ in range(BOARD_SIZE)]
        for m in moves:
            board[m.y][m.x] = m.color.value
        return board

    assert len(FULL_DRAW) == 225
    assert not naive_five(board_of(FULL_DRAW), "B")
    assert not naive_five(board_of(FULL_DRAW), "W")
    assert len(FULL_FIVE) == 225
    assert naive_five(board_of(FULL_FIVE), "B")
    assert not naive_five(board_of(FULL_FIVE[:-1]), "B")


# --- valid games -----------------------------------------------------------------------------

VALID_GAMES = [
    pytest.param(HORIZONTAL_EDGE, BW, FIVE, id="five-horizontal-top-edge"),
    pytest.param(VERTICAL_EDGE, BW, FIVE, id="five-vertical-right-edge"),
    pytest.param(DIAGONAL_DOWN, BW, FIVE, id="five-diagonal-down-right"),
    pytest.param(DIAGONAL_UP, BW, FIVE, id="five-diagonal-up-right-corner"),
    pytest.param(OVERLINE, BW, FIVE, id="overline-of-six-wins"),
    pytest.param(WHITE_FIVE, WW, FIVE, id="white-five-left-edge"),
    pytest.param(FULL_FIVE, BW, FIVE, id="five-on-the-225th-move"),
    pytest.param(FULL_DRAW, DRAW, FULL, id="board-full-draw"),
    pytest.param(NO_FIVE, BW, RES, id="white-resigns"),
    pytest.param(NO_FIVE, WW, RES, id="black-resigns-after-own-move"),
    pytest.param(alternate((7, 7)), WW, TIME, id="timeout-after-one-move"),
    pytest.param(NO_FIVE, DRAW, AGREE, id="agreed-draw"),
    pytest.param(alternate((0, 0), (14, 14), (0, 14), (14, 0)), DRAW, AGREE, id="corners"),
]


@pytest.mark.parametrize(("moves", "result", "termination"), VALID_GAMES)
def test_valid_games(moves: list[Move], result: Result, termination: Termination) -> None:
    verdict = both(moves, result, termination)
    assert verdict.valid
    assert verdict == Verdict(None, None, "valid")


# --- each reason ------------------------------------------------------------------------------

C = {"color": "B", "x": 7, "y": 7}  # a well-formed first move


def item(color: object = "W", x: object = 8, y: object = 7, **extra: object) -> dict[str, object]:
    return {"color": color, "x": x, "y": y, **extra}


RAW_CASES = [
    pytest.param(None, Reason.EMPTY, None, id="null-moves"),
    pytest.param([], Reason.EMPTY, None, id="empty-list"),
    pytest.param({"color": "B", "x": 7, "y": 7}, Reason.MALFORMED, None, id="object-not-list"),
    pytest.param("hh", Reason.MALFORMED, None, id="string-not-list"),
    pytest.param(7, Reason.MALFORMED, None, id="number-not-list"),
    pytest.param([C, [8, 7]], Reason.MALFORMED, 2, id="item-is-list"),
    pytest.param([C, None], Reason.MALFORMED, 2, id="item-is-null"),
    pytest.param([C, item(color="w")], Reason.MALFORMED, 2, id="lowercase-colour"),
    pytest.param([C, item(color=None)], Reason.MALFORMED, 2, id="null-colour"),
    pytest.param([C, item(color=["W"])], Reason.MALFORMED, 2, id="list-colour"),
    pytest.param([C, {"x": 8, "y": 7}], Reason.MALFORMED, 2, id="missing-colour"),
    pytest.param([C, {"color": "W", "y": 7}], Reason.MALFORMED, 2, id="missing-x"),
    pytest.param([C, {"color": "W", "x": 8}], Reason.MALFORMED, 2, id="missing-y"),
    pytest.param([C, item(x=True)], Reason.MALFORMED, 2, id="bool-x"),
    pytest.param([C, item(y=False)], Reason.MALFORMED, 2, id="bool-y"),
    pytest.param([C, item(x=8.0)], Reason.MALFORMED, 2, id="float-x"),
    pytest.param([C, item(y="7")], Reason.MALFORMED, 2, id="string-y"),
    pytest.param([C, item(x=None)], Reason.MALFORMED, 2, id="null-x"),
    pytest.param([C, item(extra="ok", ms=1200)], None, None, id="extra-keys-are-fine"),
    pytest.param([item(color="W")], Reason.TURN_ORDER, 1, id="white-first"),
    pytest.param([C, item(color="B")], Reason.TURN_ORDER, 2, id="black-twice"),
    pytest.param([C, item(), item(color="W", x=9)], Reason.TURN_ORDER, 3, id="white-twice"),
    pytest.param([item(x=15, color="B")], Reason.OUT_OF_BOUNDS, 1, id="x-15"),
    pytest.param([item(x=-1, color="B")], Reason.OUT_OF_BOUNDS, 1, id="x-minus-1"),
    pytest.param([C, item(y=15)], Reason.OUT_OF_BOUNDS, 2, id="y-15"),
    pytest.param([C, item(y=-1)], Reason.OUT_OF_BOUNDS, 2, id="y-minus-1"),
    pytest.param([C, item(x=10**30)], Reason.OUT_OF_BOUNDS, 2, id="huge-x"),
    pytest.param([C, item(x=7)], Reason.OCCUPIED, 2, id="onto-own-stone"),
    pytest.param([C, item(), item("B", 8, 7)], Reason.OCCUPIED, 3, id="onto-other-stone"),
    # Priority: a later, higher-priority problem wins over an earlier, lower one.
    pytest.param([C, item(x=7), item("B", 1.5)], Reason.MALFORMED, 3, id="malformed>occupied"),
    pytest.param([item("W"), item("B", x=True)], Reason.MALFORMED, 2, id="malformed>turn"),
    pytest.param([C, item(x=99), item("W", 1, 1)], Reason.TURN_ORDER, 3, id="turn>bounds"),
    pytest.param([C, item(x=7), item("B", y=-3)], Reason.OUT_OF_BOUNDS, 3, id="bounds>occupied"),
]


@pytest.mark.parametrize(("moves", "reason", "ply"), RAW_CASES)
def test_raw_moves(moves: object, reason: Reason | None, ply: int | None) -> None:
    verdict = replay_raw(moves, Result.BLACK_WIN, Termination.RESIGNATION)
    assert (verdict.reason, verdict.ply) == (reason, ply)
    assert (verdict.reason, verdict.ply) == naive_verdict(moves, BW, RES)
    coerced = coerce_moves(moves)
    if isinstance(coerced, Verdict):
        assert coerced == verdict
    else:
        assert replay(coerced, BW, RES) == verdict


MOVE_CASES = [
    pytest.param([*HORIZONTAL_EDGE, Move(W, 7, 7)], BW, FIVE, Reason.MOVES_AFTER_FIVE, 10),
    pytest.param([*WHITE_FIVE, Move(B, 7, 7)], WW, FIVE, Reason.MOVES_AFTER_FIVE, 11),
    pytest.param([*HORIZONTAL_EDGE, Move(W, 7, 7)], BW, RES, Reason.MOVES_AFTER_FIVE, 10),
    pytest.param(
        [*HORIZONTAL_EDGE, Move(W, 14, 0)], BW, FIVE, Reason.OCCUPIED, 10, id="occupied>after-five"
    ),
    pytest.param(HORIZONTAL_EDGE, WW, FIVE, Reason.RESULT_MISMATCH, 9, id="five-wrong-winner"),
    pytest.param(HORIZONTAL_EDGE, DRAW, FIVE, Reason.RESULT_MISMATCH, 9, id="five-draw"),
    pytest.param(WHITE_FIVE, BW, FIVE, Reason.RESULT_MISMATCH, 10, id="white-five-black-wins"),
    pytest.param(NO_FIVE, BW, FIVE, Reason.RESULT_MISMATCH, 3, id="five-without-five"),
    pytest.param(HORIZONTAL_EDGE[:-1], BW, FIVE, Reason.RESULT_MISMATCH, 8, id="four-is-not-five"),
    pytest.param(HORIZONTAL_EDGE, BW, RES, Reason.RESULT_MISMATCH, 9, id="resign-with-five"),
    pytest.param(HORIZONTAL_EDGE, BW, TIME, Reason.RESULT_MISMATCH, 9, id="timeout-with-five"),
    pytest.param(NO_FIVE, DRAW, RES, Reason.RESULT_MISMATCH, 3, id="resignation-draw"),
    pytest.param(NO_FIVE, DRAW, TIME, Reason.RESULT_MISMATCH, 3, id="timeout-draw"),
    pytest.param(NO_FIVE, DRAW, FULL, Reason.RESULT_MISMATCH, 3, id="board-full-after-3"),
    pytest.param(FULL_DRAW, BW, FULL, Reason.RESULT_MISMATCH, 225, id="board-full-black-wins"),
    pytest.param(FULL_DRAW[:-1], DRAW, FULL, Reason.RESULT_MISMATCH, 224, id="board-224"),
    pytest.param(FULL_FIVE, DRAW, FULL, Reason.RESULT_MISMATCH, 225, id="board-full-with-five"),
    pytest.param(FULL_DRAW, DRAW, AGREE, None, None, id="agreement-on-full-board"),
    pytest.param(NO_FIVE, BW, AGREE, Reason.RESULT_MISMATCH, 3, id="agreement-black-wins"),
    pytest.param(HORIZONTAL_EDGE, DRAW, AGREE, Reason.RESULT_MISMATCH, 9, id="agreement-five"),
    pytest.param([*FULL_DRAW, Move(W, 0, 0)], DRAW, FULL, Reason.OCCUPIED, 226, id="move-226"),
    pytest.param([Move(B, 7, 7), Move(W, 7, 7), Move(W, 99, 0)], BW, RES, Reason.TURN_ORDER, 3),
]


@pytest.mark.parametrize(("moves", "result", "termination", "reason", "ply"), MOVE_CASES)
def test_move_lists(
    moves: list[Move], result: Result, termination: Termination, reason: Reason | None, ply: int
) -> None:
    verdict = both(moves, result, termination)
    assert (verdict.reason, verdict.ply) == (reason, ply)


def test_details_name_the_problem() -> None:
    occupied = replay(alternate((7, 7), (7, 7)), BW, RES)
    assert occupied.detail == "move 2 plays on occupied hh"
    assert replay_raw([C, item(x=True)], BW, RES).detail == 'move 2 has no integer "x"'
    after = replay([*HORIZONTAL_EDGE, Move(W, 7, 7)], BW, FIVE)
    assert after.detail == "move 10 is played after the five made at move 9"
    assert not after.valid


def test_coerce_moves_builds_moves() -> None:
    assert coerce_moves([C, item(extra=1)]) == [Move(B, 7, 7), Move(W, 8, 7)]
    assert coerce_moves([]) == Verdict(Reason.EMPTY, None, "the game has no moves")


# --- long lists ------------------------------------------------------------------------------


def long_list(n: int) -> list[dict[str, object]]:
    return [
        {"color": "B" if i % 2 == 0 else "W", "x": i % 15, "y": (i // 15) % 15} for i in range(n)
    ]


@pytest.mark.slow  # a million moves per case: over a second each
@pytest.mark.parametrize(
    ("tweak", "reason", "ply"),
    [
        pytest.param(None, Reason.OCCUPIED, 226, id="board-full-then-226"),
        pytest.param((999_999, {"color": "B"}), Reason.MALFORMED, 1_000_000, id="last-malformed"),
        pytest.param((999_998, item("W", 0, 0)), Reason.TURN_ORDER, 999_999, id="late-turn"),
        pytest.param((999_998, item("B", 0, 15)), Reason.OUT_OF_BOUNDS, 999_999, id="late-bounds"),
    ],
)
def test_a_million_moves_is_decided_quickly(
    tweak: tuple[int, dict[str, object]] | None, reason: Reason, ply: int
) -> None:
    moves = long_list(1_000_000)
    if tweak is not None:
        moves[tweak[0]] = tweak[1]
    started = time.perf_counter()
    verdict = replay_raw(moves, DRAW, FULL)
    elapsed = time.perf_counter() - started
    assert (verdict.reason, verdict.ply) == (reason, ply)
    # One linear scan; generous so that slow CI machines pass, tight enough to catch a replay.
    assert elapsed < 3.0


def test_226_typed_moves_stop_at_226() -> None:
    moves = [*FULL_DRAW, *FULL_DRAW[1:]]
    assert (replay(moves, DRAW, FULL).reason, replay(moves, DRAW, FULL).ply) == (
        Reason.OCCUPIED,
        226,
    )


# --- properties ------------------------------------------------------------------------------

points = st.tuples(st.integers(0, BOARD_SIZE - 1), st.integers(0, BOARD_SIZE - 1))


@st.composite
def legal_games(draw: st.DrawFn) -> tuple[list[Move], bool]:
    """Distinct points played alternately, stopping at the first five; (moves, ended_in_five)."""
    order = draw(st.permutations(range(BOARD_SIZE * BOARD_SIZE)))
    length = draw(st.integers(1, BOARD_SIZE * BOARD_SIZE))
    board = [["."] * BOARD_SIZE for _ in range(BOARD_SIZE)]
    moves: list[Move] = []
    for i, point in enumerate(order[:length]):
        colour = B if i % 2 == 0 else W
        x, y = point % BOARD_SIZE, point // BOARD_SIZE
        board[y][x] = colour.value
        moves.append(Move(colour, x, y))
        if five_through(board, x, y):
            return moves, True
    return moves, False


@settings(max_examples=examples(150), deadline=None)
@given(legal_games())
def test_legal_games_are_valid_with_the_right_result(game: tuple[list[Move], bool]) -> None:
    moves, five = game
    mover_wins = BW if len(moves) % 2 else WW
    loser_wins = WW if mover_wins is BW else BW
    if five:
        assert replay(moves, mover_wins, FIVE).valid
        assert replay_raw(raw(moves), mover_wins, FIVE).valid
        assert replay(moves, loser_wins, FIVE).reason is Reason.RESULT_MISMATCH
        assert replay(moves, mover_wins, RES).reason is Reason.RESULT_MISMATCH
    else:
        assert replay(moves, loser_wins, RES).valid
        assert replay_raw(raw(moves), mover_wins, TIME).valid
        assert replay(moves, DRAW, AGREE).valid
        assert replay(moves, mover_wins, FIVE).reason is Reason.RESULT_MISMATCH


@settings(max_examples=examples(150), deadline=None)
@given(legal_games(), st.data())
def test_changing_a_colour_breaks_turn_order(
    game: tuple[list[Move], bool], data: st.DataObject
) -> None:
    moves, _ = game
    index = data.draw(st.integers(0, len(moves) - 1))
    swapped = list(moves)
    swapped[index] = Move(moves[index].color.other, moves[index].x, moves[index].y)
    verdict = both(swapped, BW, RES)
    assert (verdict.reason, verdict.ply) == (Reason.TURN_ORDER, index + 1)


move_items = st.one_of(
    st.fixed_dictionaries(
        {"color": st.sampled_from(["B", "W"]), "x": st.integers(-1, 15), "y": st.integers(-1, 15)}
    ),
    st.fixed_dictionaries(
        {
            "color": st.sampled_from(["B", "W", "b", None]),
            "x": st.one_of(
                st.integers(0, 14), st.booleans(), st.floats(0, 14), st.text(max_size=2)
            ),
            "y": st.integers(0, 14),
        }
    ),
)


@st.composite
def mostly_alternating(draw: st.DrawFn) -> list[dict[str, object]]:
    """Distinct points of an 8 x 8 corner played alternately, with an occasional bad item or
    repeated point, so that every reason (and fives followed by more moves) gets reached."""
    order = draw(st.permutations(range(64)))
    n = draw(st.integers(0, 40))
    moves: list[dict[str, object]] = []
    for i, point in enumerate(order[:n]):
        twist = draw(st.integers(0, 60))
        if twist == 0:
            moves.append(draw(move_items))
        elif twist == 1 and moves:
            moves.append({**draw(st.sampled_from(moves)), "color": "B" if i % 2 == 0 else "W"})
        else:
            moves.append({"color": "B" if i % 2 == 0 else "W", "x": point % 8, "y": point // 8})
    return moves


@settings(max_examples=examples(400), deadline=None)
@given(
    st.one_of(mostly_alternating(), st.lists(move_items, max_size=12)),
    st.sampled_from(list(Result)),
    st.sampled_from(list(Termination)),
)
def test_agrees_with_the_naive_reference(
    moves: list[dict[str, object]], result: Result, termination: Termination
) -> None:
    verdict = replay_raw(moves, result, termination)
    assert (verdict.reason, verdict.ply) == naive_verdict(moves, result, termination)
    coerced = coerce_moves(moves)
    if not isinstance(coerced, Verdict):
        assert replay(coerced, result, termination) == verdict


# --- bitboards (the verifier's fast path) -------------------------------------------------------


def bitboards(moves: Sequence[Move]) -> tuple[int, int, int]:
    black = sum(point_bit(m.x, m.y) for m in moves[0::2])
    white = sum(point_bit(m.x, m.y) for m in moves[1::2])
    return black, white, point_bit(moves[-1].x, moves[-1].y)


@pytest.mark.parametrize(("moves", "result", "termination"), VALID_GAMES)
def test_bitboards_accept_the_valid_games(
    moves: list[Move], result: Result, termination: Termination
) -> None:
    assert is_valid_bitboards(*bitboards(moves), len(moves), result, termination)


@settings(max_examples=examples(500))
@given(
    st.lists(st.tuples(st.integers(3, 9), st.integers(3, 9)), min_size=1, max_size=49, unique=True),
    st.sampled_from(list(Result)),
    st.sampled_from(list(Termination)),
)
def test_bitboards_agree_with_replay(
    points: list[tuple[int, int]], result: Result, termination: Termination
) -> None:
    """Distinct points in a 7 x 7 square, so that fives (and fives before the end) are common."""
    moves = alternate(*points)
    expected = replay(moves, result, termination).valid
    assert is_valid_bitboards(*bitboards(moves), len(moves), result, termination) is expected
