"""The FF[4] property table (red-bean.com/sgf, properties.html and go.html): for each standard
property its class (which nodes it may appear in, what it may be mixed with) and its value type,
and the value checks that need no board.

Properties not in the table (private ones, FF[1]-FF[3] leftovers such as ``L`` or ``M``, other
games' own) are legal and kept; FF[4] asks readers to preserve them, so the checker says nothing
about them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from gomoku_archive.sgf.findings import shown
from gomoku_archive.sgf.points import whole_number


class PropClass(StrEnum):
    """FF[4] §2.2.1 property types."""

    MOVE = "move"
    SETUP = "setup"
    ROOT = "root"
    GAME_INFO = "game-info"
    NONE = "-"


class ValueType(StrEnum):
    """FF[4] value types, with the compositions the table uses spelled out."""

    NONE = "none"
    NUMBER = "number"
    REAL = "real"
    DOUBLE = "double"
    COLOR = "color"
    SIMPLETEXT = "simpletext"
    TEXT = "text"
    MOVE = "move"
    POINT_LIST = "list of point"
    POINT_ELIST = "elist of point"
    LABEL_LIST = "list of composed point ':' simpletext"
    POINT_PAIR_LIST = "list of composed point ':' point"
    SIZE = "number | composed number ':' number"
    APPLICATION = "composed simpletext ':' simpletext"
    FIGURE = "none | composed number ':' simpletext"


@dataclass(frozen=True, slots=True)
class PropSpec:
    """One row of the table."""

    name: str
    description: str
    kind: PropClass
    value: ValueType
    low: int | None = None
    """Smallest allowed number, for number values with an FF[4] range."""
    high: int | None = None


_M, _S, _R, _G, _N = (
    PropClass.MOVE,
    PropClass.SETUP,
    PropClass.ROOT,
    PropClass.GAME_INFO,
    PropClass.NONE,
)
_T = ValueType

PROPERTIES: dict[str, PropSpec] = {
    spec.name: spec
    for spec in (
        PropSpec("AB", "add black", _S, _T.POINT_LIST),
        PropSpec("AE", "add empty", _S, _T.POINT_LIST),
        PropSpec("AN", "annotation", _G, _T.SIMPLETEXT),
        PropSpec("AP", "application", _R, _T.APPLICATION),
        PropSpec("AR", "arrow", _N, _T.POINT_PAIR_LIST),
        PropSpec("AW", "add white", _S, _T.POINT_LIST),
        PropSpec("B", "black move", _M, _T.MOVE),
        PropSpec("BL", "black time left", _M, _T.REAL),
        PropSpec("BM", "bad move", _M, _T.DOUBLE),
        PropSpec("BR", "black rank", _G, _T.SIMPLETEXT),
        PropSpec("BT", "black team", _G, _T.SIMPLETEXT),
        PropSpec("C", "comment", _N, _T.TEXT),
        PropSpec("CA", "charset", _R, _T.SIMPLETEXT),
        PropSpec("CP", "copyright", _G, _T.SIMPLETEXT),
        PropSpec("CR", "circle", _N, _T.POINT_LIST),
        PropSpec("DD", "dim points", _N, _T.POINT_ELIST),
        PropSpec("DM", "even position", _N, _T.DOUBLE),
        PropSpec("DO", "doubtful move", _M, _T.NONE),
        PropSpec("DT", "date", _G, _T.SIMPLETEXT),
        PropSpec("EV", "event", _G, _T.SIMPLETEXT),
        PropSpec("FF", "file format", _R, _T.NUMBER, 1, 4),
        PropSpec("FG", "figure", _N, _T.FIGURE),
        PropSpec("GB", "good for black", _N, _T.DOUBLE),
        PropSpec("GC", "game comment", _G, _T.TEXT),
        PropSpec("GM", "game", _R, _T.NUMBER, 1),
        PropSpec("GN", "game name", _G, _T.SIMPLETEXT),
        PropSpec("GW", "good for white", _N, _T.DOUBLE),
        PropSpec("HA", "handicap", _G, _T.NUMBER),
        PropSpec("HO", "hotspot", _N, _T.DOUBLE),
        PropSpec("IT", "interesting move", _M, _T.NONE),
        PropSpec("KM", "komi", _G, _T.REAL),
        PropSpec("KO", "ko", _M, _T.NONE),
        PropSpec("LB", "label", _N, _T.LABEL_LIST),
        PropSpec("LN", "line", _N, _T.POINT_PAIR_LIST),
        PropSpec("MA", "mark", _N, _T.POINT_LIST),
        PropSpec("MN", "move number", _M, _T.NUMBER),
        PropSpec("N", "node name", _N, _T.SIMPLETEXT),
        PropSpec("OB", "overtime stones black", _M, _T.NUMBER),
        PropSpec("ON", "opening", _G, _T.SIMPLETEXT),
        PropSpec("OT", "overtime", _G, _T.SIMPLETEXT),
        PropSpec("OW", "overtime stones white", _M, _T.NUMBER),
        PropSpec("PB", "black player", _G, _T.SIMPLETEXT),
        PropSpec("PC", "place", _G, _T.SIMPLETEXT),
        PropSpec("PL", "player to play", _S, _T.COLOR),
        PropSpec("PM", "print move mode", _N, _T.NUMBER),
        PropSpec("PW", "white player", _G, _T.SIMPLETEXT),
        PropSpec("RE", "result", _G, _T.SIMPLETEXT),
        PropSpec("RO", "round", _G, _T.SIMPLETEXT),
        PropSpec("RU", "rules", _G, _T.SIMPLETEXT),
        PropSpec("SL", "selected", _N, _T.POINT_LIST),
        PropSpec("SO", "source", _G, _T.SIMPLETEXT),
        PropSpec("SQ", "square", _N, _T.POINT_LIST),
        PropSpec("ST", "style", _R, _T.NUMBER, 0, 3),
        PropSpec("SZ", "size", _R, _T.SIZE),
        PropSpec("TB", "black territory", _N, _T.POINT_ELIST),
        PropSpec("TE", "tesuji", _M, _T.DOUBLE),
        PropSpec("TM", "time limit", _G, _T.REAL),
        PropSpec("TR", "triangle", _N, _T.POINT_LIST),
        PropSpec("TW", "white territory", _N, _T.POINT_ELIST),
        PropSpec("UC", "unclear position", _N, _T.DOUBLE),
        PropSpec("US", "user", _G, _T.SIMPLETEXT),
        PropSpec("V", "value", _N, _T.REAL),
        PropSpec("VW", "view", _N, _T.POINT_ELIST),
        PropSpec("W", "white move", _M, _T.MOVE),
        PropSpec("WL", "white time left", _M, _T.REAL),
        PropSpec("WR", "white rank", _G, _T.SIMPLETEXT),
        PropSpec("WT", "white team", _G, _T.SIMPLETEXT),
    )
}

LIST_TYPES = frozenset({_T.POINT_LIST, _T.POINT_ELIST, _T.LABEL_LIST, _T.POINT_PAIR_LIST})
"""Value types that take one or more values; every other type takes exactly one."""

MOVE_ONLY = frozenset({"KO", "BM", "DO", "IT", "TE"})
"""Move properties that FF[4] calls illegal in a node without a B or W move."""

_SHAPES = {
    _T.NONE: re.compile(r""),
    _T.NUMBER: re.compile(r"[+-]?[0-9]+"),
    _T.REAL: re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?"),
    _T.DOUBLE: re.compile(r"[12]"),
    _T.COLOR: re.compile(r"[BW]"),
    _T.FIGURE: re.compile(r"(?:[+-]?[0-9]+:.*)?", re.DOTALL),
}
_SHAPE_NAMES = {
    _T.NONE: "an empty value",
    _T.NUMBER: "a whole number",
    _T.REAL: "a number",
    _T.DOUBLE: "1 or 2",
    _T.COLOR: "B or W",
    _T.FIGURE: "empty or 'flags:name'",
}

RESULT = re.compile(
    r"(?P<draw>0|Draw)|(?P<void>Void)|(?P<unknown>\?)"
    r"|(?P<winner>[BW])\+(?:(?P<resign>R|Resign)|(?P<time>T|Time)|(?P<forfeit>F|Forfeit)"
    r"|(?P<score>[0-9]+(?:\.[0-9]+)?))?"
)
"""FF[4]'s mandatory RE format: 0 or Draw, B+ or W+ with an optional score or reason, Void, ?."""


def value_count_problem(spec: PropSpec, values: tuple[str, ...]) -> str | None:
    """Why ``values`` has the wrong number of values for ``spec``, or None."""
    if spec.value in LIST_TYPES or len(values) == 1:
        return None
    return f"{spec.name} takes one value, not {len(values)}"


def value_shape_problem(spec: PropSpec, value: str) -> str | None:
    """Why a value does not fit a scalar type or its FF[4] range, or None. Text, point and
    size values are left to their own checks."""
    shape = _SHAPES.get(spec.value)
    if shape is None:
        return None
    if not shape.fullmatch(value):
        return f"{spec.name}[{shown(value)}] should be {_SHAPE_NAMES[spec.value]}"
    if spec.value is _T.NUMBER and (spec.low is not None or spec.high is not None):
        number = whole_number(value)
        if (spec.low is not None and number < spec.low) or (
            spec.high is not None and number > spec.high
        ):
            bounds = f"{spec.low}..{spec.high}" if spec.high is not None else f">= {spec.low}"
            return f"{spec.name}[{shown(value)}] is out of its FF[4] range {bounds}"
    return None
