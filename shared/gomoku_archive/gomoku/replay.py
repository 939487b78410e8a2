"""Freestyle replay: decides whether a recorded move list is a legal, finished game.

Rules: a 15 x 15 board, black plays first, colours alternate, and five or more stones of one
colour in a row (horizontally, vertically or on either diagonal) win; overlines count.

A game gets the FIRST reason, in this priority order, that applies anywhere in its move list,
and the 1-based ply of the first move violating that reason:

1. ``empty``: no moves (a JSON empty list, or SQL NULL / JSON ``null``).
2. ``malformed``: the moves value is not a list, or an item is not an object with ``"color"``
   in {"B", "W"} and integer ``"x"`` and ``"y"`` (bools, floats such as 7.0 and strings such as
   "7" are not integers; extra keys are ignored). Ply is ``None`` when the value is not a list.
3. ``turn_order``: the first move is not black, or a colour does not alternate; equivalently,
   ply k must be black when k is odd and white when k is even.
4. ``out_of_bounds``: a coordinate outside 0..14.
5. ``occupied``: a move onto an intersection that already holds a stone.
6. ``moves_after_five``: a five (or more) appeared before the last move; the ply is the first
   move played after that five.
7. ``result_mismatch`` (ply = the last ply):
   FIVE whose last move does not make five for its mover, or whose recorded winner is not that
   mover; RESIGNATION or TIMEOUT with a DRAW result or with a five on the board; BOARD_FULL that
   is not exactly 225 moves, not a DRAW, or with a five on the board; AGREEMENT that is not a
   DRAW or with a five on the board. Either player may resign or lose on time at any move.

Because the whole list is checked for each reason before the next one, a malformed item at
ply 500 outranks an occupied point at ply 3. Long lists stay cheap: one O(n) pass finds the
first malformed, turn-order and out-of-bounds plies, and stones are placed only up to ply 226,
because after 225 legal in-bounds moves the board is full, so move 226 is necessarily
``occupied`` (a 1,000,000-item list is decided in about 0.2 s, the time of the scan).

Speed (every game of a month goes through here): the position is ``gomoku.lines``' buffer of the
board's 72 lines (rows, columns, both diagonal directions), and a move writes its four cells,
found in a table built at import; nothing is allocated per move. Stones are never removed, so a
five made at any ply is still there at the end: one C-level ``bytes in bytearray`` search on the
final position (and one with the last stone lifted) settles ``moves_after_five`` and the ending.
Only a game with an early five is replayed again, searching after each move, to find the ply.
This measured about 2.5 times faster than checking the four lines through each placed stone in
Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from gomoku_archive.gomoku.game import (
    BOARD_LETTERS,
    BOARD_SIZE,
    POINTS,
    Color,
    Move,
    Reason,
    Result,
    Termination,
)
from gomoku_archive.gomoku.lines import (
    BLACK,
    BLACK_FIVE,
    WHITE,
    WHITE_FIVE,
    bits_have_five,
    line_layout,
)

_COLOUR_CODES = ("B", "W")
_REPLAY_LIMIT = POINTS + 1
"""No legal game places more stones than the board has points, so ply 226 is always occupied."""
_STONES = (BLACK, WHITE)
"""Cell values of a black and a white stone (0 is empty); ply k places _STONES[(k - 1) % 2]."""
_BLACK_FIVE, _WHITE_FIVE = BLACK_FIVE, WHITE_FIVE
_LAYOUT = line_layout(BOARD_SIZE, BOARD_SIZE)
_CELLS, _LINES_LENGTH = _LAYOUT.cells, _LAYOUT.length


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of a replay: valid, or the exclusion reason and where it first applies."""

    reason: Reason | None
    """``None`` when the game is valid."""
    ply: int | None
    """1-based ply of the first offending move; ``None`` when no single move is at fault."""
    detail: str
    """Short human-readable explanation (never contains player data)."""

    @property
    def valid(self) -> bool:
        return self.reason is None


VALID = Verdict(None, None, "valid")
_EMPTY = Verdict(Reason.EMPTY, None, "the game has no moves")
_NOT_A_LIST = Verdict(Reason.MALFORMED, None, "the moves value is not a list")


def point_name(point: int) -> str:
    """SGF coordinate of a board index (column letter, then row letter), for messages."""
    return BOARD_LETTERS[point % BOARD_SIZE] + BOARD_LETTERS[point // BOARD_SIZE]


def _malformed(ply: int, what: str) -> Verdict:
    return Verdict(Reason.MALFORMED, ply, f"move {ply} {what}")


def _item_problem(item: object) -> str | None:
    """Why one raw move item is malformed, or ``None`` when it is well formed."""
    if not isinstance(item, dict):
        return "is not an object"
    color = item.get("color")
    if not isinstance(color, str) or color not in _COLOUR_CODES:
        return 'has no "color" of "B" or "W"'
    # type() rather than isinstance(): bool is a subclass of int, and True is not a coordinate.
    if type(item.get("x")) is not int:
        return 'has no integer "x"'
    if type(item.get("y")) is not int:
        return 'has no integer "y"'
    return None


_SHARED_MOVES: dict[str, tuple[Move, ...]] = {
    color.value: tuple(Move(color, p % BOARD_SIZE, p // BOARD_SIZE) for p in range(POINTS))
    for color in Color
}
"""One frozen ``Move`` per colour and on-board point, shared by every game (moves are
immutable values): ``_SHARED_MOVES["B"][y * 15 + x] == Move(Color.BLACK, x, y)``."""


def coerce_moves(raw: object) -> list[Move] | Verdict:
    """Turn the decoded JSON of a game's moves column into moves, or say why it cannot be.

    Returns a ``Verdict`` with ``empty`` or ``malformed`` (see the module docstring); any other
    reason is left to ``replay``.
    """
    if raw is None:
        return _EMPTY
    if not isinstance(raw, list):
        return _NOT_A_LIST
    if not raw:
        return _EMPTY
    moves: list[Move] = []
    append = moves.append
    shared = _SHARED_MOVES
    size = BOARD_SIZE
    for item in raw:
        # Fast path, equivalent to the checks below for the common item: a plain dict with a
        # colour "B"/"W" and int (not bool) coordinates on the board gives the shared Move.
        if type(item) is dict:
            x = item.get("x")
            y = item.get("y")
            if type(x) is int and type(y) is int and 0 <= x < size and 0 <= y < size:
                color = item.get("color")
                if color == "B" or color == "W":
                    append(shared[color][y * size + x])
                    continue
        ply = len(moves) + 1
        problem = _item_problem(item)
        if problem is not None:
            return _malformed(ply, problem)
        assert isinstance(item, dict)
        append(Move(Color(item["color"]), item["x"], item["y"]))
    return moves


# The game server's moves column as jsonb gives it back as text, for a well-formed move list:
# ``[{...}, {...}]``, each item's keys ordered by length, then bytes ("x", "y", "color"), ", "
# and ": " as separators, ASCII digits. The one definition of that format: the replay's fast
# path and the export's one-pass reader (``profile.row_pass``) both read it with ``read_jsonb``.
JSONB_OPEN, JSONB_SEPARATOR, JSONB_CLOSE = "[{", "}, {", "}]"
JSONB_ITEMS: Mapping[str, Move] = {
    f'"x": {m.x}, "y": {m.y}, "color": "{m.color.value}"': m
    for moves in _SHARED_MOVES.values()
    for m in moves
}
"""jsonb's text of every on-board move item between its braces -> the shared ``Move``."""

_Read = TypeVar("_Read")


def read_jsonb(text: str, table: Mapping[str, _Read]) -> list[_Read] | None:
    """What ``table`` (keyed as ``JSONB_ITEMS``) gives for each item of a moves column in
    jsonb's text form whose every item is an on-board move; None for any other text. The items
    never hold ``}, {``, so the text is split at its separators and each piece looked up in C:
    a text that is not that form misses its frame or a lookup."""
    if text[:2] != JSONB_OPEN or text[-2:] != JSONB_CLOSE:
        return None
    try:
        return list(map(table.__getitem__, text[2:-2].split(JSONB_SEPARATOR)))
    except KeyError:
        return None


def parse_moves(text: str | None) -> list[Move] | Verdict:
    """``coerce_moves`` of the moves column given as JSON text (SQL NULL as None).

    Fast path: a list in jsonb's canonical text form whose every item is an on-board move is
    read into the shared moves (``read_jsonb``), exactly what ``coerce_moves(json.loads(text))``
    returns for it; any other text takes that full path.
    """
    if text is None:
        return _EMPTY
    moves = read_jsonb(text, JSONB_ITEMS)
    if moves is not None:
        return moves
    try:
        raw = json.loads(text)
    except ValueError:  # not JSON, or a number of more digits than int() reads (jsonb has them)
        return Verdict(Reason.MALFORMED, None, "the moves value cannot be read as JSON")
    except RecursionError:  # jsonb keeps arrays nested thousands deep; Python's decoder does not
        return Verdict(Reason.MALFORMED, None, "the moves value nests too deeply")
    return coerce_moves(raw)


# One pass records the first turn-order, out-of-bounds and occupied plies while it places
# stones (placing stops at the first occupied point, and in any case by ply 226), then _decide
# applies the priority order.


def replay(moves: Sequence[Move], result: Result, termination: Termination) -> Verdict:
    """Replay well-typed moves and check the recorded result (see the module docstring)."""
    n = len(moves)
    if n == 0:
        return _EMPTY
    lines = bytearray(_LINES_LENGTH)
    cells = _CELLS
    size = BOARD_SIZE
    black = Color.BLACK
    first_turn = first_out = first_occupied = point = 0
    for ply, move in enumerate(moves, 1):
        odd = ply & 1
        if not first_turn and (move.color == black) != odd:
            first_turn = ply
        x, y = move.x, move.y
        if not (0 <= x < size and 0 <= y < size):
            first_out = first_out or ply
        elif not first_occupied and ply <= _REPLAY_LIMIT:
            point = y * size + x
            a, b, c, d = cells[point]
            if lines[a]:
                first_occupied = ply
            else:
                # 2 - odd is _STONES[(ply - 1) % 2] without the lookup.
                lines[a] = lines[b] = lines[c] = lines[d] = 2 - odd
    return _decide(
        lines,
        n,
        (first_turn, first_out, first_occupied),
        point,
        lambda: [move.y * size + move.x for move in moves],
        result,
        termination,
    )


def _decide(
    lines: bytearray,
    n: int,
    first_plies: tuple[int, int, int],
    last_point: int,
    all_points: Callable[[], list[int]],
    result: Result,
    termination: Termination,
) -> Verdict:
    """Apply the priority order to what the single pass found, then judge the ending.

    ``first_plies`` holds the first turn-order, out-of-bounds and occupied plies (0 for none);
    ``last_point`` is the last point placed (the occupied one when there is one);
    ``all_points`` recomputes every move's point, needed only to locate an early five.
    """
    first_turn, first_out, first_occupied = first_plies
    if first_turn:
        expected = "black" if first_turn % 2 else "white"
        return Verdict(Reason.TURN_ORDER, first_turn, f"move {first_turn} should be {expected}")
    if first_out:
        return Verdict(
            Reason.OUT_OF_BOUNDS, first_out, f"move {first_out} is outside the 15 x 15 board"
        )
    if first_occupied:
        return Verdict(
            Reason.OCCUPIED,
            first_occupied,
            f"move {first_occupied} plays on occupied {point_name(last_point)}",
        )
    # Stones are never removed, so a five made at any ply is still on the final board: the
    # common case (no five, or a five made by the last move) needs no per-move search.
    has_five = _BLACK_FIVE in lines or _WHITE_FIVE in lines
    if has_five:
        a, b, c, d = _CELLS[last_point]
        stone = lines[a]
        lines[a] = lines[b] = lines[c] = lines[d] = 0
        five_before_last = _BLACK_FIVE in lines or _WHITE_FIVE in lines
        lines[a] = lines[b] = lines[c] = lines[d] = stone
        if five_before_last:
            five_ply = _first_five_ply(all_points())
            return Verdict(
                Reason.MOVES_AFTER_FIVE,
                five_ply + 1,
                f"move {five_ply + 1} is played after the five made at move {five_ply}",
            )
    return _judge_result(n, has_five, result, termination)


def _first_five_ply(points: list[int]) -> int:
    """Replay again, searching after every move, to find the ply that first made a five."""
    lines = bytearray(_LINES_LENGTH)
    for ply, point in enumerate(points, 1):
        a, b, c, d = _CELLS[point]
        lines[a] = lines[b] = lines[c] = lines[d] = _STONES[(ply - 1) % 2]
        if _BLACK_FIVE in lines or _WHITE_FIVE in lines:
            return ply
    raise AssertionError("called without a five on the board")


def _mismatch(n: int, what: str) -> Verdict:
    return Verdict(Reason.RESULT_MISMATCH, n, what)


def _judge_result(n: int, has_five: bool, result: Result, termination: Termination) -> Verdict:
    """Check the recorded result and termination against the final position."""
    if termination == Termination.FIVE:
        if not has_five:
            return _mismatch(n, "termination is FIVE but the last move does not make five")
        last_mover_wins = Result.BLACK_WIN if n % 2 == 1 else Result.WHITE_WIN
        if result != last_mover_wins:
            return _mismatch(n, f"the five was made by the last mover, but the result is {result}")
        return VALID
    if has_five:
        return _mismatch(n, f"the last move makes five, but the termination is {termination}")
    if termination in (Termination.RESIGNATION, Termination.TIMEOUT):
        if result == Result.DRAW:
            return _mismatch(n, f"{termination} cannot end in a draw")
        return VALID
    if termination == Termination.BOARD_FULL and n != POINTS:
        return _mismatch(n, f"BOARD_FULL after {n} moves instead of {POINTS}")
    if result != Result.DRAW:
        return _mismatch(n, f"{termination} must be a draw, the result is {result}")
    return VALID


def _accepted_endings() -> frozenset[tuple[str, str, bool, int, bool]]:
    """``_judge_result``'s rules as a table: every (termination, result, a five on the final
    board, the number of moves odd (1) or even (0), the board full) it accepts. The rules read
    a number of moves only for its parity and whether it is ``POINTS``, so 1, 2 and ``POINTS``
    stand for every number (a full board has an odd number of moves)."""
    return frozenset(
        (termination.value, result.value, five, n & 1, n == POINTS)
        for termination in Termination
        for result in Result
        for five in (False, True)
        for n in (1, 2, POINTS)
        if _judge_result(n, five, result, termination).reason is None
    )


ACCEPTED_ENDINGS = _accepted_endings()
"""The endings ``replay`` accepts, keyed ``(termination value, result value, five on the final
board, n & 1, n == POINTS)`` for n moves with no five before the last one: the export's
one-pass reader (``profile.row_pass``) looks its games up here."""


# --- the verifier's fast path ----------------------------------------------------------------


def is_valid_bitboards(
    black: int, white: int, last: int, n: int, result: Result, termination: Termination
) -> bool:
    """``replay(moves, result, termination).valid`` for ``n >= 1`` moves that alternate from black,
    lie on the board and on ``n`` distinct points, given as each colour's bitboard
    (``lines.point_bit``) and the last move's bit. The caller checks those conditions (replay would
    report turn_order, out_of_bounds or occupied otherwise); what is left is the same as
    ``_decide``: a five before the last move, then the ending."""
    mover, other = (black, white) if n & 1 else (white, black)
    five = bits_have_five(mover) or bits_have_five(other)
    if five and (bits_have_five(mover ^ last) or bits_have_five(other)):
        return False  # moves_after_five: the five was there before the last move
    return _judge_result(n, five, result, termination).reason is None
