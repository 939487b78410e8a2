"""Five in a row: the project's one home of the detector, in its two representations. The line
buffer serves the export's replay and ``sgf check``'s Gomoku rules; bitboards serve the
verifier's fast path (``verify.line_check``), where a game is checked from each colour's stones at
once. A property test holds the two equal (tests/unit/gomoku/test_lines.py).

The line buffer: every line of a board (rows, columns and both diagonal directions) is laid end
to end in one ``bytearray``, each followed by an empty separator cell, with four empty cells at
both ends. A point has one cell in each of its four lines and a stone writes all four, found in
a table built once per board size; nothing is allocated per move. Five (or more) of one colour
anywhere is then one C-level ``bytes in bytearray`` search, and five through one point a search
of the nine cells around each of its four cells, with no bounds checked in Python: separators
stop a run from crossing into the next line, and the end cells keep a slice inside the buffer."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gomoku_archive.gomoku.game import BOARD_SIZE

BLACK, WHITE = 1, 2
"""Cell values of a black and a white stone; 0 is empty."""
FIVES = {BLACK: bytes([BLACK]) * 5, WHITE: bytes([WHITE]) * 5}
BLACK_FIVE, WHITE_FIVE = FIVES[BLACK], FIVES[WHITE]
_END = 4
"""Empty cells before the first line and after the last: a slice four cells either side of any
cell stays inside the buffer."""


@dataclass(frozen=True, slots=True)
class LineLayout:
    """Where each point of a ``columns`` x ``rows`` board sits in the line buffer."""

    columns: int
    rows: int
    length: int
    """The buffer's length, end cells included."""
    cells: tuple[tuple[int, int, int, int], ...]
    """The four cells of point ``y * columns + x``: its row, column, diagonal and
    anti-diagonal."""


@lru_cache(maxsize=16)
def line_layout(columns: int, rows: int) -> LineLayout:
    lines = (
        [[(x, y) for x in range(columns)] for y in range(rows)]
        + [[(x, y) for y in range(rows)] for x in range(columns)]
        + [
            [(y + d, y) for y in range(rows) if 0 <= y + d < columns]
            for d in range(1 - rows, columns)
        ]
        + [
            [(s - y, y) for y in range(rows) if 0 <= s - y < columns]
            for s in range(columns + rows - 1)
        ]
    )
    cells: list[list[int]] = [[] for _ in range(columns * rows)]
    position = _END
    for line in lines:
        for x, y in line:
            cells[y * columns + x].append(position)
            position += 1
        position += 1  # the separator
    return LineLayout(
        columns, rows, position + _END, tuple((c[0], c[1], c[2], c[3]) for c in cells)
    )


def has_five(board: bytearray) -> bool:
    """Whether either colour has five (or more) in a row anywhere."""
    return BLACK_FIVE in board or WHITE_FIVE in board


def makes_five(board: bytearray, cells: tuple[int, int, int, int], stone: int) -> bool:
    """Whether the ``stone`` on the point of ``cells`` is part of five (or more) in a row."""
    five = FIVES[stone]
    return any(five in board[cell - _END : cell + _END + 1] for cell in cells)


# --- bitboards ---------------------------------------------------------------------------------

BIT_STRIDE = BOARD_SIZE + 1
"""A bitboard is an int holding bit ``y * 16 + x`` for each stone at (x, y). Column 15 is never
set, so a run along a row or a diagonal stops there instead of wrapping into the next row."""
_FIVE_STEPS = (1, BIT_STRIDE - 1, BIT_STRIDE, BIT_STRIDE + 1)
"""Bit distance to the next point along a row, an anti-diagonal, a column and a diagonal."""


PAIR_SHIFT = 320
"""A pair bitboard holds both colours in one int: black's bitboard, and white's shifted up by
``PAIR_SHIFT`` bits. Black's bits lie below 15 * 16 = 240 and a run of five spans at most
4 * 17 = 68 bits, so no run can start among black's bits and reach white's (240 + 68 < 320):
``bits_have_five`` of a pair bitboard is whether either colour has five."""


def point_bit(x: int, y: int) -> int:
    """The bitboard bit of the on-board point (x, y)."""
    return 1 << (y * BIT_STRIDE + x)


def bits_have_five(bits: int) -> bool:
    """Whether the stones of a bitboard hold five (or more) in a row in any direction."""
    for step in _FIVE_STEPS:
        pairs = bits & (bits >> step)  # bit p: stones at p and p + step
        if pairs & (pairs >> 2 * step) & (bits >> 4 * step):  # ... and p + 2..4 steps
            return True
    return False
