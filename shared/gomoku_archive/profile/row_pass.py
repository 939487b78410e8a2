"""The export's speed path for one candidate row: one pass that reads the moves column, replays
the game and formats its line, for the rows real play is made of.

Equivalent to the reference path, ``classify`` (``parse_moves``, ``replay``) then
``game_parts``, for every row it takes: ``pass_row`` gives the same line and the same facts, or
None, and then the caller takes the reference path, which decides the row's reason or its rare
shape (tests/unit/test_row_pass.py holds the two equal on random and hostile rows). It takes a
row when:

- its status is ``FINISHED``, its board 15 x 15, and its (termination, result) one of the eight
  pairs a replay can accept (``writer.RE_BY_OUTCOME``);
- both times are ``datetime`` objects in ``datetime.UTC`` (what asyncpg returns in the pool's
  UTC sessions), the finish not before the start and at most ``LONGEST_GAME`` after it;
- the time control and the ratings are ints or None (a time control below 1 is published as
  absent, as ``classify`` does);
- the moves are jsonb's canonical text of on-board moves (what ``replay.parse_moves``' fast
  path accepts), alternate from black, never share a point, and end as the termination says.

How: every canonical move item is a key of one table that gives its move node (``;B[hh]``, the
writer's own string), so the text is split on ``}, {`` and mapped through the table in C, and
any other text fails a lookup. The nodes joined are the line's moves, and every sixth character
of them is a colour: one comparison with ``BWBW...`` checks the turns. Each node's point is a
bit of a pair bitboard (``gomoku.lines.PAIR_SHIFT``): the sum of the moves' bits has one bit
set per move exactly when no colour plays a point twice, and none of black's bits is one of
white's when they never share a point. Five in a row is then one or two bitboard searches (the
final position, and without the last stone), as in the verifier's fast path.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from datetime import UTC, datetime

from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Result, Termination
from gomoku_archive.gomoku.lines import PAIR_SHIFT, bits_have_five, point_bit
from gomoku_archive.profile.classify import CandidateColumns
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import (
    RE_BY_OUTCOME,
    format_dates,
    move_node,
    root_template,
)

PassedGame = tuple[str, list[str], Result, str, "int | None", "int | None", "int | None", str, str]
"""What ``pass_row`` gives for a row it takes, as the reference path would have it: the line;
its move nodes, black's first (``game_parts`` without the root and ``)\\n``); the result; the
termination's value; the time control (None when absent); the black and white ratings; and the
order key's two parts, XET's text without its ``Z`` and the game's UUID (compared as strings
they order as ``writer.order_key`` does: both have fixed widths, the year four digits)."""


@dataclass(frozen=True, slots=True)
class _Ending:
    """One (termination, result) pair a replay can accept, and what the pass needs of it."""

    result: Result
    termination: str
    five: bool
    """FIVE: the last move makes five; any other: no five on the board."""
    black_moves_last: bool
    """For FIVE, the result is the last mover's win: black's (odd plies) or white's."""
    full_board: bool
    """BOARD_FULL: all 225 points are played."""
    middle: str
    """The root's text between the ratings and XTC: RE and the fixed properties around it."""
    tail: str
    """The root's text after XET's 19 characters: XET's ``Z`` and XER."""


def _literals() -> tuple[str, ...]:
    """The root template's texts around its nine variable properties, which must come in the
    order this pass writes them."""
    parsed = list(string.Formatter().parse(root_template()))
    fields = tuple(field for _, field, _, _ in parsed if field is not None)
    if fields != ("GN", "DT", "BR", "WR", "RE", "XTC", "XST", "XET", "XER"):
        raise AssertionError(f"the root's variable properties changed: {fields}")
    return tuple(literal for literal, _, _, _ in parsed)


(
    _BEFORE_GN,
    _BEFORE_DT,
    _BEFORE_RATINGS,
    _BETWEEN_RATINGS,
    _BEFORE_RE,
    _BEFORE_XTC,
    _BEFORE_XST,
    _BEFORE_XET,
    _BEFORE_XER,
    _AFTER_XER,
) = _literals()
if _BETWEEN_RATINGS:
    raise AssertionError("the pass writes BR and WR side by side")
_Z = "Z"
"""``format_timestamp`` ends with it; the pass writes the 19 characters before it from tables
(``_day_text``, ``_HOURS_MINUTES``, ``_SECONDS``)."""
_AFTER_XST = _Z + _BEFORE_XET

_ENDINGS: dict[tuple[str, str], _Ending] = {
    (termination.value, result.value): _Ending(
        result=result,
        termination=termination.value,
        five=termination is Termination.FIVE,
        black_moves_last=result is Result.BLACK_WIN,
        full_board=termination is Termination.BOARD_FULL,
        middle=_BEFORE_RE + re + _BEFORE_XTC,
        tail=_Z + _BEFORE_XER + termination.value + _AFTER_XER,
    )
    for (termination, result), re in RE_BY_OUTCOME.items()
}

_NODE_OF_ITEM: dict[str, str] = {
    f'"x": {p % BOARD_SIZE}, "y": {p // BOARD_SIZE}, "color": "{color.value}"': move_node(color, p)
    for color in Color
    for p in range(POINTS)
}
"""jsonb's text of an on-board move item between its braces (keys by length, ``, `` and ``: ``;
``replay._JSONB_ITEM``) -> the move's node."""
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
_OPEN, _SEPARATOR, _CLOSE = "[{", "}, {", "}]"

_HOURS_MINUTES = tuple(f"T{h:02d}:{m:02d}:" for h in range(24) for m in range(60))
_SECONDS = tuple(f"{s:02d}" for s in range(60))
_DAYS: dict[int, str] = {}
"""A date's ordinal -> ``YYYY-MM-DD`` (``date.isoformat``), for the dates seen lately."""
_DAYS_KEPT = 4096


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
    if time_control is None:
        xtc = ""
    elif type(time_control) is int:
        if time_control > 0:
            xtc = f"XTC[{time_control}]"
        else:
            xtc, time_control = "", None
    else:
        return None
    if black is None:
        br = ""
    elif type(black) is int:
        br = f"BR[{black} Elo]"
    else:
        return None
    if white is None:
        wr = ""
    elif type(white) is int:
        wr = f"WR[{white} Elo]"
    else:
        return None
    if type(moves) is not str or moves[:2] != _OPEN or moves[-2:] != _CLOSE:
        return None
    try:
        nodes = list(map(_NODE_OF_ITEM.__getitem__, moves[2:-2].split(_SEPARATOR)))
    except KeyError:
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
    if bits_have_five(board):
        if not ending.five or (n & 1 == 1) != ending.black_moves_last:
            return None
        if bits_have_five(board ^ _BIT_OF_NODE[nodes[-1]]):
            return None
    elif ending.five or (ending.full_board and n != POINTS):
        return None
    start_day, end_day = _day_text(started), _day_text(finished)
    xst = f"{start_day}{_HOURS_MINUTES[started.hour * 60 + started.minute]}"
    xet = f"{end_day}{_HOURS_MINUTES[finished.hour * 60 + finished.minute]}"
    xst, xet = xst + _SECONDS[started.second], xet + _SECONDS[finished.second]
    dt = end_day if start_day is end_day else format_dates(started.date(), finished.date())
    gn = str(game_id)
    line = (
        f"{_BEFORE_GN}{gn}{_BEFORE_DT}{dt}{_BEFORE_RATINGS}{br}{wr}{ending.middle}{xtc}"
        f"{_BEFORE_XST}{xst}{_AFTER_XST}{xet}{ending.tail}{movetext})\n"
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


def _day_text(instant: datetime) -> str:
    """``instant``'s date as ``YYYY-MM-DD``: the same string object for every time of a date
    (until the table is cleared)."""
    ordinal = instant.toordinal()
    text = _DAYS.get(ordinal)
    if text is None:
        if len(_DAYS) >= _DAYS_KEPT:
            _DAYS.clear()
        text = _DAYS[ordinal] = instant.date().isoformat()
    return text
