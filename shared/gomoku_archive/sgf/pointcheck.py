"""Checks of the points in one node of a Go or Gomoku game: every move, setup stone and markup
point must be a point (two letters) inside that game's board, setup lists may not pass or name a
point twice, and compressed rectangles must be well formed. Go passes (``[]``, and ``[tt]`` on
boards up to 19x19) are moves, not points; Gomoku has no pass."""

from __future__ import annotations

from collections.abc import Callable

from gomoku_archive.sgf.findings import shown
from gomoku_archive.sgf.points import (
    BoardSize,
    Point,
    PointListError,
    is_pass,
    parse_point,
    point_value_corners,
    rectangle_points,
)
from gomoku_archive.sgf.properties import PropSpec, ValueType
from gomoku_archive.sgf.tree import Node, Property

Problem = Callable[[str, Property | Node, str], None]
"""Receives (code, where, message) for a problem in the node being checked."""

_SETUP_STONES = frozenset({"AB", "AW", "AE"})


def check_points(
    props: list[tuple[Property, PropSpec]], size: BoardSize | None, gomoku: bool, problem: Problem
) -> None:
    """Report PT001-PT005, GK003 and the VL001 shape errors of composed points among one node's
    standard properties (with their table rows). ``size`` None (an unusable SZ) skips only the
    bounds checks."""
    setup_points: set[Point] = set()
    for prop, spec in props:
        if spec.value is ValueType.MOVE:
            _check_move(prop, size, gomoku, problem)
        elif spec.value in (ValueType.POINT_LIST, ValueType.POINT_ELIST):
            if spec.value is ValueType.POINT_ELIST and prop.values == ("",):
                continue  # an empty elist clears the setting
            setup = prop.name in _SETUP_STONES
            _check_list(prop, size, setup, setup_points if setup else set(), problem)
        elif spec.value in (ValueType.LABEL_LIST, ValueType.POINT_PAIR_LIST):
            _check_composed(prop, size, spec.value is ValueType.POINT_PAIR_LIST, problem)


def _check_move(prop: Property, size: BoardSize | None, gomoku: bool, problem: Problem) -> None:
    value = prop.values[0]
    if is_pass(value, size):
        if gomoku:
            problem(
                "GK003", prop, f"{prop.name}[{shown(value)}] is a pass; Gomoku has no pass move"
            )
        return
    point = parse_point(value)
    if point is None:
        problem(
            "PT002", prop, f"{prop.name}[{shown(value)}] is not a move: two letters, or [] to pass"
        )
    elif size is not None and point not in size:
        problem("PT001", prop, f"{prop.name}[{shown(value)}] is outside the {size} board")


def _check_list(
    prop: Property, size: BoardSize | None, setup: bool, seen: set[Point], problem: Problem
) -> None:
    for value in prop.values:
        if setup and is_pass(value, size):
            problem(
                "PT003", prop, f"{prop.name}[{shown(value)}] is a pass value in a setup property"
            )
            continue
        try:
            upper_left, lower_right = point_value_corners(value)
        except PointListError as error:
            problem("PT004" if error.rectangle else "PT002", prop, f"{prop.name}{error}")
            continue
        if size is not None and (upper_left not in size or lower_right not in size):
            problem("PT001", prop, f"{prop.name}[{shown(value)}] is outside the {size} board")
            continue
        # Stop at the first repeat: every value then costs at most one lookup plus the points it
        # adds, and a board has at most 52 x 52 distinct points, so no list can make this slow.
        for point in rectangle_points(upper_left, lower_right):
            if point in seen:
                problem(
                    "PT005",
                    prop,
                    f"{prop.name}[{shown(value)}] repeats a point already listed in this node",
                )
                break
            seen.add(point)


def _check_composed(
    prop: Property, size: BoardSize | None, two_points: bool, problem: Problem
) -> None:
    shape = "'point:point'" if two_points else "'point:text'"
    for value in prop.values:
        first, colon, second = value.partition(":")
        if not colon:
            problem("VL001", prop, f"{prop.name}[{shown(value)}] should be {shape}")
            continue
        parts = (first, second) if two_points else (first,)
        points = [parse_point(part) for part in parts]
        if any(point is None for point in points):
            problem(
                "PT002",
                prop,
                f"{prop.name}[{shown(value)}] should be {shape} with two-letter points",
            )
        elif size is not None and any(point not in size for point in points):
            problem("PT001", prop, f"{prop.name}[{shown(value)}] is outside the {size} board")
        elif two_points and first == second:
            problem("VL001", prop, f"{prop.name}[{shown(value)}] starts and ends on the same point")
