"""The companion's rows, read from the archive's own lines: a game's row is a function of its
line (the fields the profile publishes), and of nothing else. Every path that builds a
companion goes through ``text_columns``: a month's build, from the lines its ranges write, and
the companion of a month published before companions existed, from its stored ``.sgf.gz``; so
both give the same file for the same games.

A line is matched whole by one pattern built from the writer's own root template
(``writer.root_template``), so the reader cannot drift from the writer. The values stay text
here (a rating's digits, XET without its ``Z``, the move nodes ``;B[hh];W[ih]``); the writer
turns each column into its type in one vectorised step (``export.companion.columns``)."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

from gomoku_archive.gomoku.game import BOARD_LETTERS, POINTS, Color, Result, Termination
from gomoku_archive.profile.writer import RE_BY_OUTCOME, root_template

WINNERS: dict[Result, str] = {
    Result.BLACK_WIN: "black",
    Result.WHITE_WIN: "white",
    Result.DRAW: "draw",
}
"""The ``winner`` column's words (``games`` prints the same ones as its ``result``)."""
WINNER_OF_RESULT: dict[str, str] = {
    re: WINNERS[result] for (_, result), re in RE_BY_OUTCOME.items()
}
"""RE -> winner: ``B+R`` -> ``black``, ``Draw`` -> ``draw``."""

_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
# Possessive quantifiers (``?+``, ``*+``, ``++``, ``{n}+``): what one takes is never given
# back, which changes no answer here (what follows each cannot start with what it takes) and
# spares the engine its backtracking records: with the moves' below, a quarter of a line's time.
_VALUES: dict[str, str] = {
    "GN": r"(?P<id>[0-9a-f]{8}+-[0-9a-f]{4}+-[0-9a-f]{4}+-[0-9a-f]{4}+-[0-9a-f]{12}+)",
    "DT": r"[0-9,-]++",
    "BR": r"(?:BR\[(?P<black_rating>0|-?[1-9][0-9]*+) Elo\])?+",
    "WR": r"(?:WR\[(?P<white_rating>0|-?[1-9][0-9]*+) Elo\])?+",
    "RE": "(?P<result>"
    + "|".join(map(re.escape, sorted(set(RE_BY_OUTCOME.values()), key=len, reverse=True)))
    + ")",
    "XTC": r"(?:XTC\[(?P<time_control>[1-9][0-9]*+)\])?+",
    "XST": rf"(?P<start>{_TIME})Z",
    "XET": rf"(?P<finish>{_TIME})Z",
    "XER": "(?P<termination>" + "|".join(t.value for t in Termination) + ")",
}
"""Each variable property of the root template, as the writer fills it: a whole optional
property (BR, WR, XTC) or the value between the brackets the template writes."""


def _root_pattern() -> re.Pattern[str]:
    parts = []
    for literal, field, _, _ in string.Formatter().parse(root_template()):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(_VALUES[field])
    return re.compile("".join(parts))


ROOT = _root_pattern()
"""A line's root node, the game tree's opening parenthesis included."""
_GROUPS = (
    "id",
    "black_rating",
    "white_rating",
    "result",
    "time_control",
    "start",
    "finish",
    "termination",
)
if tuple(ROOT.groupindex) != _GROUPS or ROOT.groups != len(_GROUPS):
    raise AssertionError(f"the root's values changed: {tuple(ROOT.groupindex)}")

_LETTER = f"[{BOARD_LETTERS[0]}-{BOARD_LETTERS[-1]}]"
_POINT = _LETTER * 2  # not ``{2}``: a repeat costs the engine more than a second class
_BLACK, _WHITE = (f";{c.value}\\[{_POINT}\\]" for c in (Color.BLACK, Color.WHITE))
LINE = re.compile(
    ROOT.pattern
    # 1 to 225 move nodes alternating from black, each on a point of the board; the game
    # tree's end and the line's.
    + f"(?P<moves>(?=;)(?:{_BLACK}{_WHITE}){{0,{POINTS // 2}}}+(?:{_BLACK})?+)\\)\\n?"
)
"""A whole game line: one pattern, matched once (faster than the root's and a check of the
nodes apart)."""


class NotALine(ValueError):
    """A line that is not a game of the profile (the archive's own lines always are)."""


@dataclass(frozen=True, slots=True)
class TextColumns:
    """Rows of the companion as columns of text, in the archive's order: every column of
    ``schema.COLUMNS`` but the three read from the moves, which ``moves`` holds as the line's
    move nodes. Ratings and time control are None when the line has none."""

    id: list[str]
    month: list[str]
    start: list[str]
    """``YYYY-MM-DDTHH:MM:SS``, UTC (XST without its ``Z``)."""
    finish: list[str]
    winner: list[str]
    result: list[str]
    termination: list[str]
    black_rating: list[str | None]
    white_rating: list[str | None]
    time_control: list[str | None]
    moves: list[str]
    """The move nodes, ``;B[hh];W[ih]...``: ``plies``, ``moves`` and ``sgf_moves`` come from
    them."""

    def __len__(self) -> int:
        return len(self.id)


def text_columns(lines: Iterable[str]) -> TextColumns:
    """The rows of ``lines`` (each a whole game line, its LF optional). Raises ``NotALine``
    for a line that is not one."""
    rows = []
    match = LINE.fullmatch
    for line in lines:
        found = match(line)
        if found is None:
            raise NotALine(f"not a game line of the profile: {line[:120]!r}")
        rows.append(found.groups())
    if not rows:
        return TextColumns([], [], [], [], [], [], [], [], [], [], [])
    # ``groups()`` in the root's order (checked above), then the move nodes.
    (ids, black, white, results, controls, starts, finishes, terminations, moves) = map(
        list, zip(*rows, strict=True)
    )
    return TextColumns(
        id=ids,
        month=[finish[:7] for finish in finishes],
        start=starts,
        finish=finishes,
        winner=list(map(WINNER_OF_RESULT.__getitem__, results)),
        result=results,
        termination=terminations,
        black_rating=black,
        white_rating=white,
        time_control=controls,
        moves=moves,
    )
