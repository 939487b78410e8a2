"""The vocabulary of a recorded freestyle game, shared by the replay engine, the profile writer
and the export: colours, results, terminations, moves and the reasons a game is excluded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

BOARD_SIZE = 15
"""Freestyle is played on 15 x 15 intersections; columns and rows count 0..14 from the top-left."""

POINTS = BOARD_SIZE * BOARD_SIZE
BOARD_LETTERS = "abcdefghijklmno"
"""SGF's coordinate letters for columns and rows 0..14: ``hh`` is the centre."""


class Color(StrEnum):
    BLACK = "B"
    WHITE = "W"

    @property
    def other(self) -> Color:
        return Color.WHITE if self is Color.BLACK else Color.BLACK


class Result(StrEnum):
    BLACK_WIN = "BLACK_WIN"
    WHITE_WIN = "WHITE_WIN"
    DRAW = "DRAW"


class Termination(StrEnum):
    FIVE = "FIVE"
    RESIGNATION = "RESIGNATION"
    TIMEOUT = "TIMEOUT"
    BOARD_FULL = "BOARD_FULL"
    AGREEMENT = "AGREEMENT"


class Reason(StrEnum):
    """Why a candidate game is excluded; members are in the order they are checked."""

    ABORTED = "aborted"
    INCOMPLETE = "incomplete"
    EMPTY = "empty"
    MALFORMED = "malformed"
    TURN_ORDER = "turn_order"
    OUT_OF_BOUNDS = "out_of_bounds"
    OCCUPIED = "occupied"
    MOVES_AFTER_FIVE = "moves_after_five"
    RESULT_MISMATCH = "result_mismatch"


@dataclass(frozen=True, slots=True)
class Move:
    color: Color
    x: int
    """Column, 0-based from the left."""
    y: int
    """Row, 0-based from the top."""
