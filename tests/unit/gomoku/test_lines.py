"""The one five-in-a-row detector against a naive scan, on boards of any size, and its two
representations (the line buffer and the verifier's bitboards) held equal on the profile's
board."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import BOARD_SIZE
from gomoku_archive.gomoku.lines import (
    BLACK,
    PAIR_SHIFT,
    WHITE,
    bits_have_five,
    has_five,
    line_layout,
    makes_five,
    point_bit,
)

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


def naive_run(stones: dict[tuple[int, int], int], x: int, y: int) -> int:
    """The longest run of one colour through (x, y), by walking the four directions."""
    colour = stones.get((x, y))
    if colour is None:
        return 0
    best = 0
    for dx, dy in DIRECTIONS:
        run = 1
        for sign in (1, -1):
            k = 1
            while stones.get((x + sign * k * dx, y + sign * k * dy)) == colour:
                run += 1
                k += 1
        best = max(best, run)
    return best


@st.composite
def boards(draw: st.DrawFn) -> tuple[int, int, dict[tuple[int, int], int]]:
    columns = draw(st.integers(1, 19))
    rows = draw(st.integers(1, 19))
    points = st.tuples(st.integers(0, columns - 1), st.integers(0, rows - 1))
    stones = draw(st.dictionaries(points, st.sampled_from((BLACK, WHITE)), max_size=columns * rows))
    return columns, rows, stones


@given(boards())
def test_the_detector_agrees_with_a_naive_scan(
    board: tuple[int, int, dict[tuple[int, int], int]],
) -> None:
    columns, rows, stones = board
    layout = line_layout(columns, rows)
    buffer = bytearray(layout.length)
    for (x, y), colour in stones.items():
        for cell in layout.cells[y * columns + x]:
            buffer[cell] = colour
    runs = {point: naive_run(stones, *point) for point in stones}
    assert has_five(buffer) == any(run >= 5 for run in runs.values())
    for (x, y), colour in stones.items():
        cells = layout.cells[y * columns + x]
        assert makes_five(buffer, cells, colour) == (runs[(x, y)] >= 5)


def test_every_point_has_four_cells_of_its_own() -> None:
    layout = line_layout(15, 15)
    cells = [cell for four in layout.cells for cell in four]
    assert len(layout.cells) == 225
    assert len(set(cells)) == len(cells) == 4 * 225
    assert min(cells) >= 4 and max(cells) < layout.length - 4


@st.composite
def profile_boards(draw: st.DrawFn) -> dict[tuple[int, int], int]:
    """Stones on the 15 x 15 board, crowded into a corner often enough that fives are common."""
    side = draw(st.sampled_from((6, 9, BOARD_SIZE)))
    points = st.tuples(st.integers(0, side - 1), st.integers(0, side - 1))
    return draw(st.dictionaries(points, st.sampled_from((BLACK, WHITE)), max_size=side * side))


@given(profile_boards())
def test_bitboards_and_the_line_buffer_find_the_same_fives(
    stones: dict[tuple[int, int], int],
) -> None:
    layout = line_layout(BOARD_SIZE, BOARD_SIZE)
    buffer = bytearray(layout.length)
    bits = {BLACK: 0, WHITE: 0}
    for (x, y), colour in stones.items():
        for cell in layout.cells[y * BOARD_SIZE + x]:
            buffer[cell] = colour
        bits[colour] |= point_bit(x, y)
    assert has_five(buffer) == (bits_have_five(bits[BLACK]) or bits_have_five(bits[WHITE]))


@given(profile_boards())
def test_a_pair_bitboard_has_five_when_either_colour_has(
    stones: dict[tuple[int, int], int],
) -> None:
    bits = {BLACK: 0, WHITE: 0}
    for (x, y), colour in stones.items():
        bits[colour] |= point_bit(x, y)
    pair = bits[BLACK] | bits[WHITE] << PAIR_SHIFT
    assert bits_have_five(pair) == (bits_have_five(bits[BLACK]) or bits_have_five(bits[WHITE]))


@pytest.mark.parametrize("x", range(BOARD_SIZE))
def test_no_run_crosses_from_black_to_white_in_a_pair_bitboard(x: int) -> None:
    # Black's bottom rows and white's top rows hold no five of their own; their bits are the
    # nearest a black and a white stone get in the pair.
    black = sum(point_bit(x, y) for y in range(11, BOARD_SIZE))
    white = sum(point_bit(x, y) for y in range(4)) | point_bit(BOARD_SIZE - 1, 0)
    assert not bits_have_five(black) and not bits_have_five(white)
    assert not bits_have_five(black | white << PAIR_SHIFT)


@pytest.mark.parametrize("step", [(1, 0), (0, 1), (1, 1), (1, -1)])
def test_bitboard_runs_do_not_wrap_around_the_edges(step: tuple[int, int]) -> None:
    for x in range(BOARD_SIZE):
        for y in range(BOARD_SIZE):
            run = [(x + k * step[0], y + k * step[1]) for k in range(5)]
            bits = sum(point_bit(px % BOARD_SIZE, py % BOARD_SIZE) for px, py in run)
            on_board = all(0 <= px < BOARD_SIZE and 0 <= py < BOARD_SIZE for px, py in run)
            assert bits_have_five(bits) is on_board, run
