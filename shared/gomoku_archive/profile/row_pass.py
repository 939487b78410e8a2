"""The export's speed path for one candidate row: one pass that reads the moves column, replays
the game and formats its line, for the rows real play is made of.

Equivalent to the reference path, ``classify`` (``parse_moves``, ``replay``) then
``game_parts``, for every row it takes: ``pass_row`` gives the same line and the same facts, or
None, and then the caller takes the reference path, which decides the row's reason or its rare
shape (tests/unit/profile/test_row_pass.py holds the two equal on random and hostile rows). It
takes a row when:

- its status is ``FINISHED``, its board 15 x 15, and its (termination, result) one of the eight
  pairs a replay can accept (``writer.RE_BY_OUTCOME``);
- both times are ``datetime`` objects in ``datetime.UTC`` (what asyncpg returns in the pool's
  UTC sessions), the finish not before the start and at most ``LONGEST_GAME`` after it;
- the time control and the ratings are ints or None (a time control below 1 is published as
  absent, as ``classify`` does);
- the moves are jsonb's canonical text of on-board moves (``replay.read_jsonb``, the replay's
  own reader of that format), alternate from black, never share a point, and end as the
  replay's rules accept (``replay.ACCEPTED_ENDINGS``, its ``_judge_result`` as a table).

It owns no piece of the line: the root is the writer's ``render_root``, and the moves are the
writer's move nodes, found through a table keyed by the replay's ``JSONB_ITEMS``, so the
column is read in C and any other text fails a lookup. The nodes joined are the line's moves,
and every sixth character of them is a colour: one comparison with ``BWBW...`` checks the
turns. Each node's point is a bit of a pair bitboard (``gomoku.lines.PAIR_SHIFT``): the sum of
the moves' bits has one bit set per move exactly when no colour plays a point twice, and none
of black's bits is one of white's when they never share a point. Five in a row is then one or
two bitboard searches (the final position, and without the last stone: a five before the last
move is ``moves_after_five``), as in the verifier's fast path.

What it hands on is a ``PassedGame``, read by the names defined beside it (``LINE``,
``NODES``, ...), never by position.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter

from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Result
from gomoku_archive.gomoku.lines import PAIR_SHIFT, bits_have_five, point_bit
from gomoku_archive.gomoku.replay import ACCEPTED_ENDINGS, JSONB_ITEMS, read_jsonb
from gomoku_archive.profile.classify import CandidateColumns
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import LINE_END, RE_BY_OUTCOME, move_node, render_root

PassedGame = tuple[str, list[str], Result, str, "int | None", "int | None", "int | None", str, str]
"""What ``pass_row`` gives for a row it takes, as the reference path would have it; a plain
tuple (the cheapest to build, once a row), read only through the names below."""
LINE: Callable[[PassedGame], str] = itemgetter(0)
"""The game's line, ``game_line``'s text."""
NODES: Callable[[PassedGame], list[str]] = itemgetter(1)
"""Its move nodes, black's first (``game_parts`` without the root and ``)\\n``)."""
RESULT: Callable[[PassedGame], Result] = itemgetter(2)
TERMINATION: Callable[[PassedGame], str] = itemgetter(3)
"""The termination's value."""
TIME_CONTROL: Callable[[PassedGame], int | None] = itemgetter(4)
"""None when absent (a time control below 1 included)."""
BLACK_RATING: Callable[[PassedGame], int | None] = itemgetter(5)
WHITE_RATING: Callable[[PassedGame], int | None] = itemgetter(6)
ORDER_KEY: Callable[[PassedGame], tuple[str, str]] = itemgetter(7, 8)
"""The game's archive key: XET's text without its ``Z`` (``writer.second_text``) and the
game's UUID text; compared as a pair of strings they order as ``writer.order_key`` does."""


@dataclass(frozen=True, slots=True)
class _Ending:
    """One (termination, result) pair a replay can accept, as the pass writes it."""

    result: Result
    termination: str
    re: str
    """The RE value (``writer.RE_BY_OUTCOME``)."""
    accepted: frozenset[tuple[bool, int, bool]]
    """The boards the replay accepts for it (``replay.ACCEPTED_ENDINGS``): (a five on the final
    board, the number of moves odd (1) or even (0), the board full)."""


_ENDINGS: dict[tuple[str, str], _Ending] = {
    (termination.value, result.value): _Ending(
        result,
        termination.value,
        re,
        frozenset(
            (five, odd, full)
            for t, r, five, odd, full in ACCEPTED_ENDINGS
            if (t, r) == (termination.value, result.value)
        ),
    )
    for (termination, result), re in RE_BY_OUTCOME.items()
}
_NODE_OF_ITEM: dict[str, str] = {
    item: move_node(move.color, move.y * BOARD_SIZE + move.x) for item, move in JSONB_ITEMS.items()
}
"""jsonb's text of an on-board move item (``replay.JSONB_ITEMS``' keys) -> the move's node."""
_BIT_OF_NODE: dict[str, int] = {
    move_node(color, p): point_bit(p % BOARD_SIZE, p // BOARD_SIZE)
    << (PAIR_SHIFT if color is Color.WHITE else 0)
    for color in Color
    for p in range(POINTS)
}
"""A move node -> its point's bit in the pair bitboard."""
_NODE_LENGTH = len(move_node(Color.BLACK, 0))
_ALTERNATING = (Color.BLACK.value + Color.WHITE.value) * (POINTS // 2 + 1)
_TURNS: tuple[str, ...] = tuple(_ALTERNATING[:n] for n in range(POINTS + 1))
"""The colour letters of n moves from black: ``BWB`` for 3."""


def pass_row(row: CandidateColumns) -> PassedGame | None:
    """The row's line and facts when the speed path takes it (see the module docstring); None
    when the reference path must decide. ``row``: the candidate's columns in ``Candidate``'s
    field order. Never raises."""
    (
        game_id,
        status,
        board_size,
        started,
        finished,
        result,
        termination,
        moves,
        time_control,
        black,
        white,
    ) = row
    if status != "FINISHED" or board_size != BOARD_SIZE:
        return None
    if type(result) is not str or type(termination) is not str:
        return None
    ending = _ENDINGS.get((termination, result))
    if ending is None:
        return None
    if type(started) is not datetime or type(finished) is not datetime:
        return None
    if started.tzinfo is not UTC or finished.tzinfo is not UTC:
        return None
    if finished < started or finished - started > LONGEST_GAME:
        return None
    if time_control is not None:
        if type(time_control) is not int:
            return None
        if time_control <= 0:
            time_control = None
    if black is not None and type(black) is not int:
        return None
    if white is not None and type(white) is not int:
        return None
    if type(moves) is not str:
        return None
    nodes = read_jsonb(moves, _NODE_OF_ITEM)
    if nodes is None:
        return None
    n = len(nodes)
    if n > POINTS:
        return None
    movetext = "".join(nodes)
    if movetext[1::_NODE_LENGTH] != _TURNS[n]:
        return None
    board = sum(map(_BIT_OF_NODE.__getitem__, nodes))
    if board.bit_count() != n or board & (board >> PAIR_SHIFT):
        return None
    five = bits_have_five(board)
    if five and bits_have_five(board ^ _BIT_OF_NODE[nodes[-1]]):
        return None  # a five before the last move
    if (five, n & 1, n == POINTS) not in ending.accepted:
        return None
    gn = str(game_id)
    line, xet = render_root(
        gn,
        started,
        finished,
        black,
        white,
        time_control,
        ending.re,
        ending.termination,
        movetext,
        LINE_END,
    )
    return (
        line,
        nodes,
        ending.result,
        ending.termination,
        time_control,
        black,
        white,
        xet,
        gn,
    )
