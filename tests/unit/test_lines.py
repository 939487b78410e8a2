"""The one five-in-a-row detector against a naive scan, on boards of any size."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.gomoku.lines import BLACK, WHITE, has_five, line_layout, makes_five

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
    buffer = layout.empty_board()
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
