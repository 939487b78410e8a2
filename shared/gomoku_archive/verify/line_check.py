"""The verifier's check of one game line: the profile's root properties present, in order and
well formed, no variation, comment, setup stone or pass, and a legal replay whose ending agrees
with RE and XER."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from gomoku_archive.gomoku.game import BOARD_SIZE, Color, Move, Reason, Result, Termination
from gomoku_archive.gomoku.lines import point_bit
from gomoku_archive.gomoku.replay import is_valid_bitboards, replay
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import RE_BY_OUTCOME, ROOT_PROPERTIES, escape_text, format_dates
from gomoku_archive.sgf import GameTree, Node, Property, SgfParseError, parse
from gomoku_archive.verify.report import Check

# --- one game ---------------------------------------------------------------------------------

# ASCII digits only, here and in every format below: \d (and int()) would also take the other
# scripts' decimal digits, such as Arabic-Indic or fullwidth ones.
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_PASSES = ("", "tt")  # FF[4] pass, and the FF[3] pass that boards up to 19 x 19 also accept
_SETUP = ("AB", "AW", "AE")
_MOVE_COLOURS = {"B": Color.BLACK, "W": Color.WHITE}
_LOWER = "abcdefghijklmnopqrstuvwxyz"
# Every two-lowercase-letter point, keyed as the parser's value tuple. Letters past "o" are off
# the board: such moves are read, and the replay reports them as out_of_bounds. "tt" is a pass.
_KNOWN_MOVES: dict[str, dict[tuple[str, ...], Move]] = {
    ident: {
        (a + b,): Move(colour, x, y)
        for x, a in enumerate(_LOWER)
        for y, b in enumerate(_LOWER)
        if a + b not in _PASSES
    }
    for ident, colour in _MOVE_COLOURS.items()
}
_NO_MOVES: dict[tuple[str, ...], Move] = {}
_PROFILE_ORDER = {prop.ident: index for index, prop in enumerate(ROOT_PROPERTIES)}
_REQUIRED = tuple(prop.ident for prop in ROOT_PROPERTIES if not prop.optional)
_FIXED = {prop.ident: prop.fixed for prop in ROOT_PROPERTIES if prop.fixed is not None}
_OUTCOMES_BY_RE: dict[str, dict[Termination, Result]] = {}
for (_termination, _result), _re_value in RE_BY_OUTCOME.items():
    _OUTCOMES_BY_RE.setdefault(_re_value, {})[_termination] = _result

VALUE_FORMATS: Mapping[str, tuple[re.Pattern[str], str]] = {
    "GN": (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "a UUID"),
    "DT": (
        re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(,([0-9]{4}-)?([0-9]{2}-)?[0-9]{2})*"),
        "an FF[4] date list",
    ),
    "BR": (re.compile(r"(0|-?[1-9][0-9]*) Elo"), "an integer followed by ' Elo'"),
    "WR": (re.compile(r"(0|-?[1-9][0-9]*) Elo"), "an integer followed by ' Elo'"),
    "RE": (re.compile("|".join(map(re.escape, _OUTCOMES_BY_RE))), "|".join(_OUTCOMES_BY_RE)),
    "XTC": (re.compile(r"[1-9][0-9]*"), "a positive whole number"),
    "XST": (_TIMESTAMP, "YYYY-MM-DDTHH:MM:SSZ"),
    "XET": (_TIMESTAMP, "YYYY-MM-DDTHH:MM:SSZ"),
    "XER": (re.compile("|".join(Termination)), "|".join(Termination)),
}
"""The format of every root property whose value varies (the others have a fixed value)."""


LONGER_THAN_A_GAME = (
    f"XST is more than {LONGEST_GAME.days} days before XET: a game lasts at most "
    f"{LONGEST_GAME.days} days (the exporter excludes a longer one as incomplete)"
)


def _timestamp(value: str) -> datetime | None:
    match = _TIMESTAMP.fullmatch(value)
    if match is None:
        return None
    try:
        year, month, day, hour, minute, second = map(int, match.groups())
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:  # e.g. month 13
        return None


def _value_problem(ident: str, value: str) -> str | None:
    fixed = _FIXED.get(ident)
    if fixed is not None:
        return None if value == fixed else f"{ident}[{value}] should be {ident}[{fixed}]"
    pattern, description = VALUE_FORMATS[ident]
    if pattern.fullmatch(value) is None:
        return f"{ident}[{value}] is not {description}"
    return None


def _instant(
    values: dict[str, str], ident: str, problems: list[tuple[Check, str]]
) -> datetime | None:
    """The instant of a well-formed XST or XET; one like month 13 is reported and dropped."""
    if ident not in values:
        return None
    instant = _timestamp(values[ident])
    if instant is None:
        problems.append((Check.PROPERTY_VALUE, f"{ident}[{values.pop(ident)}] is no real instant"))
    return instant


def dt_problem(value: str, first: date, last: date) -> str | None:
    """What is wrong with ``DT[value]`` for a game played from ``first`` to ``last`` (UTC dates,
    ``first <= last``), or None.

    The expected value lists every date, so it is only written out when ``value`` is long
    enough to hold it: each date after the first takes at least three characters (``,dd``). A
    far-future XET would otherwise make the check list millions of dates for one game.
    """
    days = (last - first).days + 1
    if days > 1 + len(value) // 3:
        return f"DT[{value}] should list the {days:,} dates from {first} to {last}"
    expected = format_dates(first, last)
    return None if value == expected else f"DT[{value}] should be DT[{expected}]"


@dataclass(slots=True)
class GameFacts:
    """What one game line says, and what is wrong with it on its own."""

    gn: str | None
    xet: str | None
    finished: datetime | None
    termination: str | None
    problems: list[tuple[Check, str]]
    result: Result | None = None
    """Who won, from RE and XER when they agree with each other."""
    values: Mapping[str, str] = field(default_factory=dict)
    """The root's values as read (``gomoku-archive games`` prints them)."""
    moves: tuple[Move, ...] = ()


def check_game(tree: GameTree) -> GameFacts:
    """Check one game tree against the profile, without archive context (order, month)."""
    problems: list[tuple[Check, str]] = []
    if tree.variations:
        problems.append((Check.VARIATION, "the game tree has variations"))
    values = _check_root(tree.nodes[0], problems)
    moves = _read_moves(tree.nodes[1:], problems)
    return _judge(values, moves, problems, replayable=not tree.variations)


# The fast path reads a line of the profile's exact shape with one regex: the root properties in
# order (each fixed one with its value, each other one in its VALUE_FORMATS format, so the parser
# would read it unchanged and find no problem), then moves on the board that alternate from
# black, nothing else anywhere. Every format is ASCII already; re.ASCII says so once more.
_ROOT_SHAPE = "".join(
    re.escape(f"{prop.ident}[{escape_text(prop.fixed)}]")
    if prop.fixed is not None
    else f"(?:{prop.ident}\\[(?P<{prop.ident}>{VALUE_FORMATS[prop.ident][0].pattern})\\])"
    + ("?" if prop.optional else "")
    for prop in ROOT_PROPERTIES
)
_MOVE_SHAPE = r"\[[a-o][a-o]\]"
_LINE_SHAPE = re.compile(
    rf"\(;{_ROOT_SHAPE}(?P<moves>(?:;B{_MOVE_SHAPE};W{_MOVE_SHAPE})*(?:;B{_MOVE_SHAPE})?)\)",
    re.ASCII,
)
_MOVE_TEXT = re.compile(r";[BW]\[..\]", re.ASCII)
"""One move of a line that matched ``_LINE_SHAPE``, as its six characters (``;B[hh]``)."""
_MOVE_BY_TEXT = {
    f";{ident}[{point}]": move
    for ident, known in _KNOWN_MOVES.items()
    for (point,), move in known.items()
}
_BIT_BY_TEXT = {
    text: point_bit(move.x, move.y)
    for text, move in _MOVE_BY_TEXT.items()
    if move.x < BOARD_SIZE and move.y < BOARD_SIZE
}
_OUTCOMES = {
    (re_value, termination.value): (result, termination)
    for (termination, result), re_value in RE_BY_OUTCOME.items()
}
"""(RE, XER) -> (result, termination) for every pair that goes together."""


def check_line_fast(text: str) -> GameFacts | None:
    """``check_game(parse(text)[0])`` for a valid game line of the profile's exact shape; None
    for any other line, which then takes the full parser.

    Equivalent by construction: ``_LINE_SHAPE`` only matches lines that the parser reads into
    the profile's root properties in order, each with a value ``_check_root`` accepts, and nodes
    of one plain move each; the rest is ``_judge`` for a game with no problem (instants real,
    XST not after XET nor more than ``LONGEST_GAME`` before it, DT right, RE going with XER,
    ``replay`` valid). Whenever one of those
    does not hold, the line is left to the full path. A property test holds the two equal on
    generated, exported and mutated lines."""
    match = _LINE_SHAPE.fullmatch(text)
    if match is None:
        return None
    found = match.groupdict()
    moves_text = found.pop("moves")
    values = {ident: value for ident, value in found.items() if value is not None}
    values.update(_FIXED)
    xst, xet = values["XST"], values["XET"]
    start, end = _fast_instant(xst), _fast_instant(xet)
    if start is None or end is None or start > end:
        return None
    if xst[:10] == xet[:10]:  # one day: format_dates gives date.isoformat(), XST's first 10
        if values["DT"] != xst[:10]:
            return None
    elif (
        end - start > LONGEST_GAME  # the 31-day rule: the full path reports it
        or dt_problem(values["DT"], start.date(), end.date()) is not None
    ):
        return None
    outcome = _OUTCOMES.get((values["RE"], values["XER"]))
    if outcome is None:
        return None
    played = _MOVE_TEXT.findall(moves_text)
    n = len(played)
    if not n:
        return None
    bit = _BIT_BY_TEXT.__getitem__
    # The bits are summed, so a point played twice carries into another bit: each colour's
    # count of bits equals its count of moves exactly when its points are distinct.
    black, white = sum(map(bit, played[0::2])), sum(map(bit, played[1::2]))
    if black.bit_count() != (n + 1) // 2 or white.bit_count() != n // 2 or black & white:
        return None  # a point played twice: occupied
    if not is_valid_bitboards(black, white, bit(played[-1]), n, *outcome):
        return None
    return GameFacts(
        gn=values["GN"],
        xet=xet,
        finished=end,
        termination=values["XER"],
        problems=[],
        result=outcome[0],
        values=values,
        moves=tuple(map(_MOVE_BY_TEXT.__getitem__, played)),
    )


def _fast_instant(value: str) -> datetime | None:
    """``_timestamp(value)`` for a value already known to be YYYY-MM-DDTHH:MM:SSZ."""
    try:
        return datetime(
            int(value[0:4]),
            int(value[5:7]),
            int(value[8:10]),
            int(value[11:13]),
            int(value[14:16]),
            int(value[17:19]),
            tzinfo=UTC,
        )
    except ValueError:  # e.g. month 13
        return None


def check_line(text: str) -> GameFacts:
    """One archive line (without its LF) checked as ``verify`` checks it: the fast path for the
    profile's exact shape, else the SGF parser and ``check_game``. A line that is not exactly one
    game tree gives facts with that problem and nothing else."""
    if not (text.startswith("(") and text.endswith(")")):
        return _unreadable(Check.NOT_ONE_GAME, "the line is not exactly one game tree")
    facts = check_line_fast(text)
    if facts is not None:
        return facts
    try:
        trees = parse(text)
    except SgfParseError as exc:
        return _unreadable(Check.SGF_SYNTAX, f"column {exc.column}: {exc.message}")
    if len(trees) != 1:
        return _unreadable(Check.NOT_ONE_GAME, f"the line holds {len(trees)} game trees")
    return check_game(trees[0])


def _unreadable(check: Check, message: str) -> GameFacts:
    return GameFacts(
        gn=None, xet=None, finished=None, termination=None, problems=[(check, message)]
    )


def _judge(
    values: dict[str, str],
    moves: list[Move] | None,
    problems: list[tuple[Check, str]],
    *,
    replayable: bool,
) -> GameFacts:
    """The checks that need the whole game: XST/XET and DT, RE against XER, and the replay."""
    start, end = _instant(values, "XST", problems), _instant(values, "XET", problems)
    if start is not None and end is not None:
        if start > end:
            # No DT can be right for a game that ends before it starts: one problem, not two.
            problems.append((Check.PROPERTY_VALUE, "XST is after XET"))
        elif end - start > LONGEST_GAME:
            # Nor for one no archive holds (the exporter's 31-day rule): one problem again.
            problems.append((Check.PROPERTY_VALUE, LONGER_THAN_A_GAME))
        elif "DT" in values:
            problem = dt_problem(values["DT"], start.date(), end.date())
            if problem is not None:
                problems.append((Check.PROPERTY_VALUE, problem))
    termination = values.get("XER")
    result = None
    if "RE" in values and termination is not None:
        result = _OUTCOMES_BY_RE[values["RE"]].get(Termination(termination))
        if result is None:
            problems.append(
                (Check.RESULT_MISMATCH, f"RE[{values['RE']}] cannot go with XER[{termination}]")
            )
    if moves is not None and replayable:
        # Without a consistent RE/XER only the moves can be judged: replay with a stand-in ending
        # and ignore what it says about the result.
        if result is not None and termination is not None:
            verdict = replay(moves, result, Termination(termination))
        else:
            verdict = replay(moves, Result.DRAW, Termination.AGREEMENT)
        if verdict.reason is Reason.RESULT_MISMATCH:
            if result is not None:
                problems.append((Check.RESULT_MISMATCH, f"RE/XER and board: {verdict.detail}"))
        elif verdict.reason is not None:
            problems.append((Check.ILLEGAL_MOVE, f"{verdict.reason.value}: {verdict.detail}"))
    return GameFacts(
        gn=values.get("GN"),
        xet=values.get("XET") if end is not None else None,
        finished=end,
        termination=termination,
        problems=problems,
        result=result,
        values=values,
        moves=tuple(moves or ()),
    )


def _node_extras(prop: Property, problems: list[tuple[Check, str]], where: str) -> bool:
    """Report comments, setup stones and FF[3]-style identifiers; True when ``prop`` was one."""
    name = prop.name
    if name == "C":
        problems.append((Check.COMMENT, f"{where} has a comment"))
    elif name in _SETUP:
        problems.append((Check.SETUP, f"{where} has setup stones ({prop.ident})"))
    elif prop.ident != name:
        problems.append((Check.UNEXPECTED_PROPERTY, f"{where}: {prop.ident} is not FF[4]"))
    else:
        return False
    return True


def _check_root(root: Node, problems: list[tuple[Check, str]]) -> dict[str, str]:
    """Check the root's properties; returns the value of each well-formed profile property."""
    values: dict[str, str] = {}
    seen: list[str] = []
    for prop in root.properties:
        ident = prop.ident
        if ident not in _PROFILE_ORDER:
            if not _node_extras(prop, problems, "the root"):
                problems.append((Check.UNEXPECTED_PROPERTY, f"{ident} is not a root property"))
            continue
        if ident in seen:
            problems.append((Check.REPEATED_PROPERTY, f"{ident} appears twice"))
            continue
        seen.append(ident)
        if len(prop.values) != 1:
            problems.append((Check.PROPERTY_VALUE, f"{ident} has {len(prop.values)} values"))
            continue
        problem = _value_problem(ident, prop.values[0])
        if problem is None:
            values[ident] = prop.values[0]
        else:
            problems.append((Check.PROPERTY_VALUE, problem))
    problems.extend(
        (Check.MISSING_PROPERTY, f"the root has no {ident}")
        for ident in _REQUIRED
        if ident not in seen
    )
    for before, after in itertools.pairwise(seen):
        if _PROFILE_ORDER[after] < _PROFILE_ORDER[before]:
            problems.append((Check.PROPERTY_ORDER, f"{after} comes after {before}"))
            break
    return values


def _read_moves(nodes: tuple[Node, ...], problems: list[tuple[Check, str]]) -> list[Move] | None:
    """The moves of the non-root nodes, or None when one cannot be read as a single move."""
    moves: list[Move] = []
    readable = True
    known = _KNOWN_MOVES
    for ply, node in enumerate(nodes, 1):
        properties = node.properties
        if len(properties) == 1:  # the fast path: one B or W with one ordinary point
            move = known.get(properties[0].ident, _NO_MOVES).get(properties[0].values)
            if move is not None:
                moves.append(move)
                continue
        readable = _read_odd_node(ply, properties, problems, moves) and readable
    return moves if readable else None


def _read_odd_node(
    ply: int, properties: tuple[Property, ...], problems: list[tuple[Check, str]], moves: list[Move]
) -> bool:
    """Report what is wrong with a node that is not a plain move; True if it still is one."""
    where = f"node {ply + 1}"
    played = []
    for prop in properties:
        if _node_extras(prop, problems, where):
            continue
        if prop.ident in _MOVE_COLOURS:
            played.append(prop)
        else:
            problems.append((Check.UNEXPECTED_PROPERTY, f"{where} has {prop.ident}"))
    if len(played) != 1 or len(played[0].values) != 1:
        problems.append((Check.MOVE_NODE, f"{where} does not hold exactly one B or W move"))
        return False
    value = played[0].values[0]
    if value in _PASSES:
        problems.append((Check.PASS_MOVE, f"move {ply} is a pass"))
        return False
    move = _KNOWN_MOVES[played[0].ident].get((value,))
    if move is None:
        problems.append((Check.MOVE_NODE, f"move {ply}: {value!r} is not a coordinate"))
        return False
    moves.append(move)
    return True
