"""The ``gomoku-party-sgf-1`` profile's line writer: how one finished game becomes one SGF line.

``ROOT_PROPERTIES`` is the single description of the root node: the writer's line template,
the public profile page and the verifier are all built from it. The line is written in one
place: ``render_root`` writes every variable property of the root (from the template's own
fixed texts, its order checked at import) and ``move_node`` every move, and both the
reference (``game_parts``) and the export's one-pass reader (``profile.row_pass``) call them,
so the two cannot drift apart. Every value the writer emits is generated from a closed alphabet
(digits, a lowercase UUID, fixed words); the constant texts still go through ``escape_text``
once, at import. The profile's vocabulary and the pages' words are ``profile.vocabulary``'s.
"""

from __future__ import annotations

import string
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from gomoku_archive.gomoku.game import (
    BOARD_LETTERS,
    BOARD_SIZE,
    Color,
    Move,
    Result,
    Termination,
)
from gomoku_archive.profile.vocabulary import LONGEST_GAME, PROFILE_ID


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished, replay-validated game as the writer needs it."""

    game_id: uuid.UUID
    started_at: datetime
    """Timezone-aware."""
    finished_at: datetime
    """Timezone-aware, not before ``started_at``."""
    result: Result
    termination: Termination
    moves: Sequence[Move]
    time_control_seconds: int | None
    black_rating: int | None
    white_rating: int | None


@dataclass(frozen=True, slots=True)
class PropertyDoc:
    """One root property of the profile, in the order the writer emits it."""

    ident: str
    meaning: str
    value: str
    """The value's format, or the fixed value, in words for the documentation page."""
    example: str
    """The value as it appears in the example record (without brackets)."""
    extension: bool
    """True for the profile's own ``X..`` properties, False for standard FF[4] ones."""
    optional: bool = False
    """Omitted entirely when the game has no such data."""
    fixed: str | None = None
    """The value every game carries, for properties that never vary."""


ROOT_PROPERTIES: tuple[PropertyDoc, ...] = (
    PropertyDoc("FF", "SGF file format version", "Always 4", "4", False, fixed="4"),
    PropertyDoc("GM", "Game type: 4 is Gomoku and Renju in SGF", "Always 4", "4", False, fixed="4"),
    PropertyDoc("CA", "Character set", "Always UTF-8", "UTF-8", False, fixed="UTF-8"),
    PropertyDoc(
        "AP",
        "Application that wrote the record, as name:version",
        "Always GomokuParty:1.0",
        "GomokuParty:1.0",
        False,
        fixed="GomokuParty:1.0",
    ),
    PropertyDoc("SZ", "Board size", "Always 15", "15", False, fixed="15"),
    PropertyDoc(
        "RU",
        "Rules: 15 x 15, black first, five or more in a row wins (overlines count)",
        "Always Gomoku Freestyle",
        "Gomoku Freestyle",
        False,
        fixed="Gomoku Freestyle",
    ),
    PropertyDoc(
        "GN",
        "Game name: the game's UUID, unique in the archive",
        "Lowercase hyphenated UUID",
        "00000000-0000-4000-8000-000000000001",
        False,
    ),
    PropertyDoc(
        "PC",
        "Place the game was played",
        "Always https://gomokuparty.com",
        "https://gomokuparty.com",
        False,
        fixed="https://gomokuparty.com",
    ),
    PropertyDoc(
        "DT",
        "UTC date(s) the game was played, from its start to its finish",
        "YYYY-MM-DD; a game spanning several UTC dates lists every one in FF[4]'s shortened "
        "form, where a later date drops what it shares with the previous one "
        "(2026-07-31,08-01 or 2026-08-01,02)",
        "2026-08-12",
        False,
    ),
    PropertyDoc(
        "PB",
        "Black player: a fixed label, not a linkable pseudonym",
        "Always Black",
        "Black",
        False,
        fixed="Black",
    ),
    PropertyDoc(
        "PW",
        "White player: a fixed label, not a linkable pseudonym",
        "Always White",
        "White",
        False,
        fixed="White",
    ),
    PropertyDoc(
        "BR",
        "Black's Elo rating recorded with the game",
        "Integer (may be 0 or negative) followed by ' Elo'; omitted when unknown",
        "1200 Elo",
        False,
        optional=True,
    ),
    PropertyDoc(
        "WR",
        "White's Elo rating recorded with the game",
        "Integer (may be 0 or negative) followed by ' Elo'; omitted when unknown",
        "1210 Elo",
        False,
        optional=True,
    ),
    PropertyDoc(
        "RE",
        "Result",
        "One of B+, W+, B+R, W+R, B+T, W+T, Draw (see the result table)",
        "B+R",
        False,
    ),
    PropertyDoc(
        "SO",
        "Source of the record",
        "Always https://gomokuparty.com/database/",
        "https://gomokuparty.com/database/",
        False,
        fixed="https://gomokuparty.com/database/",
    ),
    PropertyDoc(
        "CP",
        "Copyright: the records are dedicated to the public domain",
        "Always CC0-1.0",
        "CC0-1.0",
        False,
        fixed="CC0-1.0",
    ),
    PropertyDoc(
        "XGP",
        "Profile this record follows",
        f"Always {PROFILE_ID}",
        PROFILE_ID,
        True,
        fixed=PROFILE_ID,
    ),
    PropertyDoc(
        "XRT",
        "Rating status: every archived game is rated",
        "Always rated",
        "rated",
        True,
        fixed="rated",
    ),
    PropertyDoc(
        "XTC",
        "The game's time control, in seconds",
        "Positive integer; omitted when the game has none",
        "60",
        True,
        optional=True,
    ),
    PropertyDoc(
        "XST",
        "UTC instant the game started",
        "YYYY-MM-DDTHH:MM:SSZ, sub-seconds truncated",
        "2026-08-12T12:00:00Z",
        True,
    ),
    PropertyDoc(
        "XET",
        "UTC instant the game finished; selects the archive month and orders the games",
        "YYYY-MM-DDTHH:MM:SSZ, sub-seconds truncated, not before XST and at most "
        f"{LONGEST_GAME.days} days after it",
        "2026-08-12T12:02:00Z",
        True,
    ),
    PropertyDoc(
        "XER",
        "How the game ended",
        "One of FIVE, RESIGNATION, TIMEOUT, BOARD_FULL, AGREEMENT (see the termination table)",
        "RESIGNATION",
        True,
    ),
)

RE_BY_OUTCOME: Mapping[tuple[Termination, Result], str] = {
    (Termination.FIVE, Result.BLACK_WIN): "B+",
    (Termination.FIVE, Result.WHITE_WIN): "W+",
    (Termination.RESIGNATION, Result.BLACK_WIN): "B+R",
    (Termination.RESIGNATION, Result.WHITE_WIN): "W+R",
    (Termination.TIMEOUT, Result.BLACK_WIN): "B+T",
    (Termination.TIMEOUT, Result.WHITE_WIN): "W+T",
    (Termination.BOARD_FULL, Result.DRAW): "Draw",
    (Termination.AGREEMENT, Result.DRAW): "Draw",
}
"""The RE value of every (termination, result) pair the replay accepts; no other pair exists."""

_NODES: Mapping[Color, tuple[str, ...]] = {
    color: tuple(
        f";{color.value}[{BOARD_LETTERS[point % BOARD_SIZE]}{BOARD_LETTERS[point // BOARD_SIZE]}]"
        for point in range(BOARD_SIZE * BOARD_SIZE)
    )
    for color in Color
}
"""``;B[hh]`` for every colour and point: a move costs one lookup (column letter first)."""


def escape_text(value: str) -> str:
    """Escape an SGF text value: backslash and closing bracket get a backslash.

    Line breaks are refused rather than escaped: the profile puts one game per line and has no
    multi-line values, so a line break here is a bug upstream.
    """
    if "\n" in value or "\r" in value:
        raise ValueError("SGF values in this profile cannot contain line breaks")
    return value.replace("\\", "\\\\").replace("]", "\\]")


def re_value(result: Result, termination: Termination) -> str:
    """The RE value for a result; a pair the replay would reject raises ``ValueError``."""
    try:
        return RE_BY_OUTCOME[termination, result]
    except KeyError:
        raise ValueError(f"{termination} cannot end with {result}") from None


def utc_seconds(instant: datetime) -> datetime:
    """``instant`` in UTC with its sub-seconds truncated (not rounded); it must be aware."""
    if instant.tzinfo is UTC:  # what asyncpg returns in a UTC session: no conversion needed
        return instant.replace(microsecond=0)
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("timestamps must be timezone-aware")
    return instant.astimezone(UTC).replace(microsecond=0)


_CLOCK: tuple[str, ...] = tuple(f"T{h:02d}:{m:02d}:" for h in range(24) for m in range(60))
"""``THH:MM:`` of every minute of a day, by ``hour * 60 + minute``."""
_SECONDS: tuple[str, ...] = tuple(f"{s:02d}" for s in range(60))
_UTC_MARK = "Z"
"""The end of XST's and XET's text: the instant is in UTC."""
_DAYS: dict[int, str] = {}
"""A date's ordinal -> ``YYYY-MM-DD`` (``date.isoformat``), for the dates seen lately."""
_DAYS_KEPT = 4096


def day_text(instant: date) -> str:
    """``instant``'s date as ``YYYY-MM-DD`` (a ``datetime`` gives its own date): the same
    string object for every time of a date until the table of recent dates is cleared, so two
    instants of one date compare with ``is``."""
    ordinal = instant.toordinal()
    text = _DAYS.get(ordinal)
    if text is None:
        if len(_DAYS) >= _DAYS_KEPT:
            _DAYS.clear()
        text = _DAYS[ordinal] = date.fromordinal(ordinal).isoformat()
    return text


def second_text(instant: datetime, day: str) -> str:
    """XST's or XET's text without its final ``Z`` (``YYYY-MM-DDTHH:MM:SS``, sub-seconds
    truncated) for an instant in UTC whose ``day_text`` is ``day``. Compared as strings, these
    texts order as the instants' whole seconds do: every part has a fixed width, the year four
    digits."""
    return f"{day}{_CLOCK[instant.hour * 60 + instant.minute]}{_SECONDS[instant.second]}"


def format_timestamp(instant: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC, sub-seconds truncated (the XST and XET format)."""
    if instant.tzinfo is not UTC:
        instant = utc_seconds(instant)
    return second_text(instant, day_text(instant)) + _UTC_MARK


def format_dates(first: date, last: date) -> str:
    """The DT value for a game played from UTC date ``first`` to ``last``, inclusive.

    Every date is listed; each after the first drops what it shares with the previous one, as
    FF[4] shortens date lists: ``2026-07-31,08-01``, ``2026-08-01,02``, ``2026-12-31,2027-01-01``.
    """
    if last == first:  # most games: one date, date.isoformat() is YYYY-MM-DD
        return first.isoformat()
    if last < first:
        raise ValueError("a game cannot finish before it starts")
    parts = [f"{first.year:04d}-{first.month:02d}-{first.day:02d}"]
    previous = first
    # Each next day is made only while one is due: the day after 9999-12-31 does not exist.
    while previous < last:
        day = previous + timedelta(days=1)
        if day.year != previous.year:
            parts.append(f"{day.year:04d}-{day.month:02d}-{day.day:02d}")
        elif day.month != previous.month:
            parts.append(f"{day.month:02d}-{day.day:02d}")
        else:
            parts.append(f"{day.day:02d}")
        previous = day
    return ",".join(parts)


def _build_template() -> str:
    """The root node as a ``str.format`` template: fixed values inlined, the rest by ident."""
    parts = ["(;"]
    for prop in ROOT_PROPERTIES:
        if prop.fixed is not None:
            text = escape_text(prop.fixed).replace("{", "{{").replace("}", "}}")
            parts.append(f"{prop.ident}[{text}]")
        elif prop.optional:
            parts.append("{" + prop.ident + "}")  # the whole property, or nothing
        else:
            parts.append(f"{prop.ident}[{{{prop.ident}}}]")
    return "".join(parts)


_ROOT_TEMPLATE = _build_template()


def root_template() -> str:
    """The root node as a ``str.format`` template: the fixed values written out, ``{BR}``,
    ``{WR}`` and ``{XTC}`` for a whole optional property, ``{ident}`` for another value."""
    return _ROOT_TEMPLATE


def _root_texts() -> tuple[str, ...]:
    """The template's fixed texts around its variable properties, which must be the ones
    ``render_root`` fills, in its order."""
    parsed = list(string.Formatter().parse(_ROOT_TEMPLATE))
    fields = tuple(field for _, field, _, _ in parsed if field is not None)
    if fields != ("GN", "DT", "BR", "WR", "RE", "XTC", "XST", "XET", "XER"):
        raise AssertionError(f"render_root does not fill the root's variable properties {fields}")
    return tuple(literal for literal, _, _, _ in parsed)


(
    _BEFORE_GN,
    _BEFORE_DT,
    _BEFORE_BR,
    _BEFORE_WR,
    _BEFORE_RE,
    _BEFORE_XTC,
    _BEFORE_XST,
    _BEFORE_XET,
    _BEFORE_XER,
    _AFTER_XER,
) = _root_texts()
_AFTER_XST = _UTC_MARK + _BEFORE_XET
_AFTER_XET = _UTC_MARK + _BEFORE_XER
LINE_END = ")\n"
"""What ends every line: the game tree's closing parenthesis and a line feed."""


def render_root(
    game_name: str,
    started: datetime,
    finished: datetime,
    black: int | None,
    white: int | None,
    time_control: int | None,
    re: str,
    xer: str,
    moves: str = "",
    end: str = "",
) -> tuple[str, str]:
    """The root node of a game followed by ``moves`` and ``end`` (the export's one-pass reader
    writes its whole line here: its joined move nodes and ``LINE_END``), and XET's text without
    its ``Z`` (``second_text``: the first part of the game's archive key). The one place the
    root's variable properties are written; ``game_parts`` and the one-pass reader
    (``profile.row_pass``) both call it, with values they have checked: ``game_name`` the UUID's
    text; ``started`` and ``finished`` instants in ``datetime.UTC``, the finish not before the
    start (sub-seconds are dropped); the ratings ints or None; the time control a positive int
    or None; ``re`` the RE value and ``xer`` the termination's."""
    days = _DAYS  # day_text's table, read here first: most games' dates are in it
    start_day = days.get(started.toordinal()) or day_text(started)
    end_day = days.get(finished.toordinal()) or day_text(finished)
    xst = second_text(started, start_day)
    xet = second_text(finished, end_day)
    # One date (most games): day_text gave the same object, the text format_dates would give.
    dt = end_day if start_day is end_day else format_dates(started.date(), finished.date())
    br = "" if black is None else f"BR[{black} Elo]"
    wr = "" if white is None else f"WR[{white} Elo]"
    xtc = "" if time_control is None else f"XTC[{time_control}]"
    line = (
        f"{_BEFORE_GN}{game_name}{_BEFORE_DT}{dt}{_BEFORE_BR}{br}{_BEFORE_WR}{wr}{_BEFORE_RE}{re}"
        f"{_BEFORE_XTC}{xtc}{_BEFORE_XST}{xst}{_AFTER_XST}{xet}{_AFTER_XET}{xer}{_AFTER_XER}"
        f"{moves}{end}"
    )
    return line, xet


def _integer(value: int | None, what: str) -> int | None:
    if value is not None and type(value) is not int:  # bool is an int subclass, not a rating
        raise ValueError(f"{what} must be an integer")
    return value


def move_node(color: Color, point: int) -> str:
    """The move node of ``color`` at board index ``point`` (``y * 15 + x``): ``;B[hh]``. The
    same string object every time, so its hash is computed once."""
    return _NODES[color][point]


def game_line(record: GameRecord) -> str:
    """The record as one SGF game tree on one line, ending with a line feed."""
    return "".join(game_parts(record))


def game_parts(record: GameRecord) -> list[str]:
    """The pieces ``game_line`` joins: the root node, one ``move_node`` per move, and
    ``)\n``. The export joins them itself and hands them to its statistics, which count the
    shared move nodes rather than recompute every move's point."""
    started = utc_seconds(record.started_at)
    finished = utc_seconds(record.finished_at)
    if record.finished_at < record.started_at:
        raise ValueError("a game cannot finish before it starts")
    if not record.moves:
        raise ValueError("a game without moves is never archived")
    tc = record.time_control_seconds
    if tc is not None and (type(tc) is not int or tc <= 0):
        raise ValueError("the time control must be a positive number of seconds")
    root, _ = render_root(
        str(record.game_id),  # str(UUID) is lowercase and hyphenated
        started,
        finished,
        _integer(record.black_rating, "the black rating"),
        _integer(record.white_rating, "the white rating"),
        tc,
        re_value(record.result, record.termination),
        record.termination.value,
    )
    parts = [root]
    nodes = _NODES
    size = BOARD_SIZE
    for move in record.moves:
        x, y = move.x, move.y
        if not (0 <= x < size and 0 <= y < size):
            raise ValueError(f"move ({x}, {y}) is off the 15 x 15 board")
        parts.append(nodes[move.color][y * size + x])
    parts.append(LINE_END)
    return parts


def order_key(record: GameRecord) -> tuple[datetime, str]:
    """Archive order: finish time in whole UTC seconds, then the lowercase game UUID."""
    return utc_seconds(record.finished_at), str(record.game_id)
