"""Replay of a Gomoku (GM[4]) record's main line with freestyle rules, for the checker.

The main line is the first variation at every branch. Black moves first and the colours
alternate (``PL`` says who is next; after setup stones without ``PL``, either may move first);
a stone goes on an empty point; five or more stones of one colour
in a row (overlines count) win and end the game. Setup properties (``AB``, ``AW``, ``AE``) place
or clear stones without taking a turn. Passes, malformed points and points off the board are
reported by the node checks; here they take a turn and place nothing.

The result ``RE`` must agree with the final position: a bare win ``B+``/``W+`` needs that
colour's five; a five on the board rules out a draw or a win for the other colour; and a win by
resignation, time or forfeit (``R``, ``T``, ``F``) cannot end on a move that made five, since the
five itself ended the game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from gomoku_archive.gomoku.lines import BLACK, WHITE, has_five, line_layout, makes_five
from gomoku_archive.sgf.findings import shown
from gomoku_archive.sgf.points import (
    BoardSize,
    PointListError,
    expand_point_value,
    is_pass,
    point_name,
)
from gomoku_archive.sgf.properties import RESULT
from gomoku_archive.sgf.tree import Node, Property

Report = Callable[[str, Property, int, str], None]
"""Called with (code, property, node number, message) for each problem found."""

_COLOUR_NAMES = {"B": "Black", "W": "White"}
_OTHER = {"B": "W", "W": "B"}
_STONES = {"B": BLACK, "W": WHITE}
_REASONS = {"resign": "resignation", "time": "time", "forfeit": "forfeit"}


@dataclass(frozen=True, slots=True)
class _Layout:
    """``gomoku.lines``' buffer for one board size, its cells looked up by point name."""

    size: int
    cells: dict[str, tuple[int, int, int, int]]
    """The four cells of every point name on the board (the first is the occupancy cell)."""


@lru_cache(maxsize=16)
def _layout(columns: int, rows: int) -> _Layout:
    lines = line_layout(columns, rows)
    return _Layout(
        lines.length,
        {
            point_name((x, y)): lines.cells[y * columns + x]
            for y in range(rows)
            for x in range(columns)
        },
    )


@dataclass(frozen=True, slots=True)
class _Five:
    colour: str
    point: str
    node: int


def _colour(move: Property) -> str:
    return move.ident if move.ident in _OTHER else move.name


class MainLineReplay:
    """The main line's nodes fed one at a time, in order, so a game of any length is replayed in
    the memory of one board (the checker streams games too large to hold as a tree).

    After each move the nine cells around its point in each of its four lines are searched for
    a five: four C-level searches per move. Moves after the first five are only counted: the
    next one is GK004, and none of them can change what the five says about RE."""

    def __init__(self, size: BoardSize, report: Report) -> None:
        self._size = size
        self._layout = _layout(size.columns, size.rows)
        self._board = bytearray(self._layout.size)
        self._report = report
        self._to_play: str | None = None
        """Who moves next: None before the first move, unless PL said."""
        self._to_play_from_pl = False
        self._setup = False
        """Whether setup stones were placed before the first move (then White may open)."""
        self._five: _Five | None = None
        self._moves_after_five = 0
        self._result: tuple[Property, int] | None = None

    def node(self, node: Node, node_number: int) -> None:
        board, index = self._board, self._layout.cells
        props = node.properties
        if len(props) == 1 and props[0].ident in _OTHER:
            move: Property | None = props[0]  # the usual ";B[hh]" node
        else:
            move, to_play_pl, result, setup = _read_node(node, board, index)
            self._setup = self._setup or setup
            if to_play_pl is not None:
                self._to_play, self._to_play_from_pl = to_play_pl, True
            if result is not None and self._result is None:
                self._result = result, node_number
        if move is None:
            return
        colour = _colour(move)
        # The turn order holds over the whole record, moves after a five included: the replay
        # engine, which decides the archive's games, checks it before anything else.
        self._check_turn(move, colour, node_number)
        five = self._five
        if five is not None:
            self._moves_after_five += 1
            if self._moves_after_five == 1:
                self._report(
                    "GK004",
                    move,
                    node_number,
                    f"{colour}[{shown(move.values[0])}] is played after "
                    f"{_COLOUR_NAMES[five.colour]}'s five at {five.point} (node {five.node}) "
                    "ended the game",
                )
            return
        value = move.values[0]
        cells = None if is_pass(value, self._size) else index.get(value)
        if cells is not None and board[cells[0]]:
            held = "black" if board[cells[0]] == _STONES["B"] else "white"
            message = (
                f"{colour}[{shown(value)}] is played on a point that already holds a {held} stone"
            )
            self._report("GK002", move, node_number, message)
            cells = None
        if cells is None:
            return  # a pass, not a point, off the board (the node checks say so), or occupied
        stone = _STONES[colour]
        board[cells[0]] = board[cells[1]] = board[cells[2]] = board[cells[3]] = stone
        if makes_five(board, cells, stone):
            self._five = _Five(colour, value, node_number)

    def _check_turn(self, move: Property, colour: str, node_number: int) -> None:
        """Report a move out of turn (GK001) or White opening (GK006); then the other colour
        is to play."""
        to_play = self._to_play
        if to_play is None and colour == "W" and not self._setup:
            self._report(
                "GK006",
                move,
                node_number,
                f"W[{shown(move.values[0])}] is the first move: freestyle Gomoku starts with "
                "Black (no PL or setup stones let White open)",
            )
        elif to_play is not None and colour != to_play:
            message = (
                f"PL[{to_play}] says {_COLOUR_NAMES[to_play]} is to play, but "
                f"{_COLOUR_NAMES[colour]} moves"
                if self._to_play_from_pl
                else f"{_COLOUR_NAMES[colour]} moves twice in a row"
            )
            self._report("GK001", move, node_number, message)
        self._to_play, self._to_play_from_pl = _OTHER[colour], False

    def moves(self, colours: str, values: list[str], node_number: int) -> bool:
        """``node`` for a run of plain move nodes (``colours[i]`` plays ``values[i]`` at node
        ``node_number + i``), taken only when none of them would be reported: the colours
        alternate from the one to play, every point is on the board, empty and played once, and
        no five is made before the last move. Otherwise it returns False with the board as it
        was, and the nodes come one by one."""
        if self._five is not None:
            return False  # the moves after a five are reported (GK004)
        first = colours[0]
        other = _OTHER[first]
        if self._to_play is None and first == "W" and not self._setup:
            return False  # White opens: GK006
        if (
            (self._to_play is not None and first != self._to_play)
            or colours[0::2].strip(first)
            or colours[1::2].strip(other)
        ):
            return False  # not alternating: GK001
        index = self._layout.cells
        points = set(values)
        if len(points) != len(values) or not points <= index.keys():
            return False  # a point played twice (GK002), or a pass or off the board
        cells = list(map(index.__getitem__, values))
        board = self._board
        placed = _place(board, cells, _STONES[first], _STONES[other])
        if placed < len(cells):
            _lift(board, cells[:placed])
            return False  # an occupied point: GK002
        if has_five(board):
            last = cells[-1]
            _lift(board, [last])
            five_before = has_five(board)
            board[last[0]] = board[last[1]] = board[last[2]] = board[last[3]] = _STONES[colours[-1]]
            if five_before:
                _lift(board, cells)
                return False  # a five before the last move (or from setup stones): replay it
            self._five = _Five(colours[-1], values[-1], node_number + len(values) - 1)
        self._to_play, self._to_play_from_pl = _OTHER[colours[-1]], False
        return True

    def finish(self) -> None:
        """Check RE against the final position; call once, after the last node."""
        if self._result is not None:
            prop, node_number = self._result
            last_move_made_five = self._five is not None and self._moves_after_five == 0
            _check_result(prop, node_number, self._five, last_move_made_five, self._report)


def _place(
    board: bytearray, cells: list[tuple[int, int, int, int]], first: int, second: int
) -> int:
    """Place alternating stones on the points of ``cells`` until one is occupied; returns how
    many were placed."""
    stone = first
    for placed, (a, b, c, d) in enumerate(cells):
        if board[a]:
            return placed
        board[a] = board[b] = board[c] = board[d] = stone
        stone = second if stone == first else first
    return len(cells)


def _lift(board: bytearray, cells: list[tuple[int, int, int, int]]) -> None:
    for a, b, c, d in cells:
        board[a] = board[b] = board[c] = board[d] = 0


def _read_node(
    node: Node, board: bytearray, index: dict[str, tuple[int, int, int, int]]
) -> tuple[Property | None, str | None, Property | None, bool]:
    """Apply a node's setup stones; return its single move (None if it has none, or B and W
    together, which is ND002), its PL colour, its RE, and whether it had setup stones."""
    moves: list[Property] = []
    to_play: str | None = None
    result: Property | None = None
    setup = False
    for prop in node.properties:
        name = prop.name
        if name in ("AB", "AW", "AE"):
            setup = True
            stone = _STONES.get(name[1], 0)
            for value in prop.values:
                try:
                    points = list(expand_point_value(value))
                except PointListError:
                    continue  # reported by the node checks
                for point in points:
                    cells = index.get(point_name(point))
                    if cells is not None:
                        for cell in cells:
                            board[cell] = stone
        elif name == "PL" and prop.values[0] in _OTHER:
            to_play = prop.values[0]
        elif name in _OTHER:
            moves.append(prop)
        elif name == "RE":
            result = prop
    return (moves[0] if len(moves) == 1 else None), to_play, result, setup


def _check_result(
    prop: Property, node_number: int, five: _Five | None, last_move_made_five: bool, report: Report
) -> None:
    found = RESULT.fullmatch(prop.values[0])
    if found is None:
        return  # VL003
    winner = found["winner"]
    written = f"RE[{shown(prop.values[0])}]"
    reason = next((_REASONS[key] for key in _REASONS if found[key]), None)
    problem: str | None = None
    if five is not None:
        maker = _COLOUR_NAMES[five.colour]
        where = f"{maker} made five at {five.point} (node {five.node})"
        if found["draw"]:
            problem = f"{written} is a draw, but {where}"
        elif winner is not None and winner != five.colour:
            problem = f"{written} names {_COLOUR_NAMES[winner]} the winner, but {where}"
        elif reason is not None and last_move_made_five:
            problem = (
                f"{written} gives a win by {reason}, but the last move made five: "
                f"the five ended the game (RE[{five.colour}+])"
            )
    elif winner is not None and reason is None and not found["score"]:
        problem = (
            f"{written} is a win on the board, but {_COLOUR_NAMES[winner]} "
            "has no five in the main line"
        )
    if problem is not None:
        report("GK005", prop, node_number, problem)
