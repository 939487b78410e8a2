"""Points, board sizes and compressed point lists."""

from __future__ import annotations

import pytest

from gomoku_archive.sgf import BoardSize, parse_point, parse_size, point_name
from gomoku_archive.sgf.points import PointListError, SizeError, expand_point_value, is_pass


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ("aa", (0, 0)),  # top-left
        ("oa", (14, 0)),  # top-right of 15x15
        ("ao", (0, 14)),  # bottom-left of 15x15
        ("hh", (7, 7)),  # centre of 15x15
        ("im", (8, 12)),  # lower-right of 9 columns x 13 rows
        ("sa", (18, 0)),
        ("za", (25, 0)),
        ("Aa", (26, 0)),  # uppercase letters are 27..52
        ("ZZ", (51, 51)),
        ("a", None),
        ("aaa", None),
        ("a1", None),
        ("", None),
        ("é a", None),
    ],
)
def test_points_are_column_then_row_from_the_top_left(text: str, point: object) -> None:
    assert parse_point(text) == point
    if point is not None:
        assert isinstance(point, tuple)
        assert point_name(point) == text


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("19", BoardSize(19, 19)),
        ("9", BoardSize(9, 9)),
        ("9:13", BoardSize(9, 13)),
        ("13:9", BoardSize(13, 9)),
        ("1", BoardSize(1, 1)),
        ("+9", BoardSize(9, 9)),
        ("60", BoardSize(60, 60)),  # games other than Go may be bigger
    ],
)
def test_sizes_are_a_square_or_columns_then_rows(value: str, size: BoardSize) -> None:
    assert parse_size(value) == size


@pytest.mark.parametrize(
    ("value", "square_composed"),
    [
        ("9:9", True),
        ("19:19", True),
        ("0", False),
        ("-3", False),
        ("9:0", False),
        ("nine", False),
        ("9:x", False),
        ("9:9:9", False),
        (" 9", False),
        ("", False),
    ],
)
def test_bad_sizes_are_refused(value: str, square_composed: bool) -> None:
    with pytest.raises(SizeError) as caught:
        parse_size(value)
    assert caught.value.square_composed is square_composed


def test_a_huge_size_saturates_instead_of_failing() -> None:
    assert parse_size("9" * 5000).columns > 10**12


def test_points_inside_a_board() -> None:
    board = BoardSize(9, 13)
    assert (8, 12) in board
    assert (9, 12) not in board
    assert (8, 13) not in board
    assert (-1, 0) not in board
    assert "aa" not in board
    assert str(board) == "9x13"


@pytest.mark.parametrize(
    ("value", "size", "passes"),
    [
        ("", BoardSize(19, 19), True),
        ("", None, True),
        ("tt", BoardSize(19, 19), True),
        ("tt", BoardSize(9, 9), True),
        ("tt", BoardSize(19, 20), False),
        ("tt", BoardSize(21, 21), False),
        ("tt", None, False),
        ("aa", BoardSize(19, 19), False),
    ],
)
def test_passes(value: str, size: BoardSize | None, passes: bool) -> None:
    assert is_pass(value, size) is passes


def test_compressed_rectangles_expand_row_by_row() -> None:
    assert list(expand_point_value("aa:cb")) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert list(expand_point_value("dd")) == [(3, 3)]


@pytest.mark.parametrize(
    ("value", "rectangle"),
    [
        ("aa:aa", True),
        ("cc:aa", True),
        ("ca:ac", True),
        ("aa:", False),
        ("a:bb", False),
        ("aa:b", False),
        ("", False),
        ("aa:bb:cc", False),
    ],
)
def test_bad_point_list_values(value: str, rectangle: bool) -> None:
    with pytest.raises(PointListError) as caught:
        list(expand_point_value(value))
    assert caught.value.rectangle is rectangle
