"""Board sizes, points and compressed point lists, as FF[4] defines them for Go (GM[1]); this
project reads Gomoku (GM[4]) points the same way, since FF[4] gives GM[4] no point syntax of its
own and every Gomoku program writes Go-style points.

A point is two letters, column first, row second, counted from the top-left corner:
``a``..``z`` are 1..26 and ``A``..``Z`` are 27..52 (FF[4] allows boards up to 52x52). So ``aa``
is the top-left point, ``oa`` the top-right and ``ao`` the bottom-left of a 15x15 board, and
``hh`` its centre. Coordinates here are 0-based: ``(column, row)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gomoku_archive.sgf.findings import shown

MAX_LETTER_SIZE = 52
"""The largest board side a point can address (a-z, then A-Z)."""
GO_PASS_MAX_SIZE = 19
"""``tt`` is a pass, not a point, on boards up to 19x19 (FF[3] compatibility, FF[4] Go)."""

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_INDEX = {letter: index for index, letter in enumerate(_LETTERS)}
_NUMBER = re.compile(r"[+-]?[0-9]+")

Point = tuple[int, int]
"""(column, row), 0-based from the top-left."""


@dataclass(frozen=True, slots=True)
class BoardSize:
    """A board of ``columns`` x ``rows`` intersections."""

    columns: int
    rows: int

    def __contains__(self, point: object) -> bool:
        if not isinstance(point, tuple) or len(point) != 2:
            return False
        column, row = point
        return (
            isinstance(column, int)
            and isinstance(row, int)
            and 0 <= column < self.columns
            and 0 <= row < self.rows
        )

    def __str__(self) -> str:
        return f"{self.columns}x{self.rows}"


class SizeError(ValueError):
    """An ``SZ`` value that is not a board size; ``square_composed`` marks ``SZ[n:n]``."""

    def __init__(self, message: str, *, square_composed: bool = False) -> None:
        super().__init__(message)
        self.square_composed = square_composed


def parse_size(value: str) -> BoardSize:
    """Read an ``SZ`` value: ``n`` is an n x n square, ``c:r`` is c columns by r rows.

    Raises ``SizeError`` for anything else, including the composed form of a square
    (``SZ[9:9]``, which FF[4] forbids) and sizes below 1; the caller checks game-specific limits.
    """
    parts = value.split(":")
    if len(parts) > 2 or not all(_NUMBER.fullmatch(part) for part in parts):
        raise SizeError(f"SZ[{shown(value)}] is not a number or two numbers 'columns:rows'")
    numbers = [whole_number(part) for part in parts]
    if any(number < 1 for number in numbers):
        raise SizeError(f"SZ[{shown(value)}]: a board has at least one column and one row")
    if len(numbers) == 1:
        return BoardSize(numbers[0], numbers[0])
    columns, rows = numbers
    if columns == rows:
        raise SizeError(
            f"SZ[{shown(value)}] is a square written in composed form; "
            f"FF[4] requires SZ[{columns}]",
            square_composed=True,
        )
    return BoardSize(columns, rows)


def whole_number(text: str) -> int:
    """``int(text)`` for a matched FF[4] Number, saturated: Python refuses to convert more than a
    few thousand digits, and any number past 10**12 is out of every range here anyway."""
    digits = text.lstrip("+-")
    if len(digits) > 12:
        return -(10**13) if text.startswith("-") else 10**13
    return int(text)


def parse_point(value: str) -> Point | None:
    """The 0-based (column, row) of a two-letter point, or None if ``value`` is not one."""
    if len(value) != 2:
        return None
    column = _INDEX.get(value[0])
    row = _INDEX.get(value[1])
    if column is None or row is None:
        return None
    return column, row


def point_name(point: Point) -> str:
    """The two letters of a 0-based point (inverse of ``parse_point``)."""
    return _LETTERS[point[0]] + _LETTERS[point[1]]


def is_pass(value: str, size: BoardSize | None) -> bool:
    """Whether a move value is a Go pass: ``[]``, or ``[tt]`` on a board up to 19x19."""
    if value == "":
        return True
    return (
        value == "tt"
        and size is not None
        and size.columns <= GO_PASS_MAX_SIZE
        and size.rows <= GO_PASS_MAX_SIZE
    )


class PointListError(ValueError):
    """A value of a point list that is neither a point nor a valid ``ul:lr`` rectangle;
    ``rectangle`` is True when both corners are points but do not make a valid rectangle."""

    def __init__(self, message: str, *, rectangle: bool = False) -> None:
        super().__init__(message)
        self.rectangle = rectangle


def point_value_corners(value: str) -> tuple[Point, Point]:
    """The corners of one value of a (compressed) point list: ``aa`` is the point itself twice,
    ``aa:cc`` the rectangle given by its upper-left and lower-right corners (FF[4] §3.5.1).
    Raises ``PointListError`` for a malformed value, a 1x1 rectangle (FF[4]: list it as a single
    point) or corners given in another order."""
    first, colon, second = value.partition(":")
    upper_left = parse_point(first)
    if upper_left is None:
        raise PointListError(f"[{shown(value)}] is not a point")
    if not colon:
        return upper_left, upper_left
    lower_right = parse_point(second)
    if lower_right is None:
        raise PointListError(
            f"[{shown(value)}] is not a point or a rectangle 'upper-left:lower-right'"
        )
    if upper_left == lower_right:
        raise PointListError(
            f"[{shown(value)}] is a 1x1 rectangle; FF[4] requires [{first}]", rectangle=True
        )
    if upper_left[0] > lower_right[0] or upper_left[1] > lower_right[1]:
        raise PointListError(
            f"[{shown(value)}] does not give the upper-left corner first "
            "and the lower-right second",
            rectangle=True,
        )
    return upper_left, lower_right


def rectangle_points(upper_left: Point, lower_right: Point) -> Iterator[Point]:
    """Every point of a rectangle, row by row."""
    for row in range(upper_left[1], lower_right[1] + 1):
        for column in range(upper_left[0], lower_right[0] + 1):
            yield column, row


def expand_point_value(value: str) -> Iterator[Point]:
    """The points of one value of a (compressed) point list (see ``point_value_corners``)."""
    return rectangle_points(*point_value_corners(value))
