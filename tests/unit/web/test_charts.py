"""Chart geometry (pure numbers) and the macros that draw it as SVG."""

from __future__ import annotations

import re

import pytest

from gomoku_archive.web.pages.charts import MAX_TICKS, bar_chart, board
from gomoku_archive.web.pages.templating import environment


def draw(macro: str, figure: object, id: str = "c") -> str:
    template = environment().from_string(
        '{% import "charts.html" as charts %}{{ charts[macro](figure, id=id) }}'
    )
    return template.render(macro=macro, figure=figure, id=id)


def test_an_empty_chart_is_none() -> None:
    assert bar_chart([], title="Games", unit="games", series="months") is None


def test_one_bar_per_point_scaled_to_the_peak() -> None:
    chart = bar_chart(
        [("2026-08", 10), ("2026-09", 0), ("2026-10", 5)], title="T", unit="games", series="months"
    )
    assert chart is not None
    heights = [bar.height for bar in chart.bars]
    assert heights[0] > heights[2] > heights[1] == 0
    assert heights[2] == pytest.approx(heights[0] / 2)
    bottoms = {round(bar.y + bar.height, 6) for bar in chart.bars}
    assert bottoms == {chart.baseline.y1}  # every bar stands on the baseline
    xs = [bar.x for bar in chart.bars]
    assert xs == sorted(xs)  # left to right, as given
    assert all(bar.x >= 0 and bar.x + bar.width <= chart.width for bar in chart.bars)
    assert chart.peak.text == "10 games"
    assert chart.description == (
        "3 months from 2026-08 to 2026-10; the highest is 2026-08 with 10 games, "
        "the last 2026-10 with 5 games."
    )


def test_all_zero_values_draw_flat_bars() -> None:
    chart = bar_chart([("a", 0), ("b", 0)], title="T", unit="games", series="months")
    assert chart is not None
    assert [bar.height for bar in chart.bars] == [0, 0]


@pytest.mark.parametrize(("points", "ticks"), [(1, 1), (8, 8), (9, 5), (16, 8), (40, 8), (121, 8)])
def test_at_most_eight_evenly_spaced_tick_labels_ending_at_the_last(
    points: int, ticks: int
) -> None:
    chart = bar_chart([(f"m{i}", i) for i in range(points)], title="T", unit="u", series="s")
    assert chart is not None
    assert len(chart.ticks) == ticks <= MAX_TICKS
    assert chart.ticks[-1].text == f"m{points - 1}"
    gaps = {round(b.x - a.x, 6) for a, b in zip(chart.ticks, chart.ticks[1:], strict=False)}
    assert len(gaps) <= 1


def test_the_bar_chart_macro_reads_without_sight_and_escapes() -> None:
    chart = bar_chart(
        [("2026-08", 1200), ("<script>", 5)], title="Games <per> month", unit="games", series="m"
    )
    svg = draw("bar_chart", chart, id="games")
    assert svg.count("<rect") == 2
    assert '<title id="games-title">Games &lt;per&gt; month</title>' in svg
    assert '<desc id="games-desc">' in svg
    assert 'aria-labelledby="games-title games-desc"' in svg
    assert "<title>2026-08: 1,200 games</title>" in svg
    assert "<script>" not in svg and "&lt;script&gt;: 5 games" in svg
    heights = [float(h) for h in re.findall(r'height="([0-9.]+)" class="bar"', svg)]
    assert heights[0] > heights[1] > 0


def test_the_board_puts_stones_on_intersections() -> None:
    figure = board(15, [(0, 0, "b", "corner"), (7, 7, "w", "<centre>")], title="Board")
    assert len(figure.lines) == 30
    assert len(figure.labels) == 30
    corner, centre = figure.stones
    assert (corner.cx, corner.cy) == (figure.lines[0].x1, figure.lines[1].y1)
    assert centre.cx == centre.cy == figure.size / 2
    svg = draw("board", figure, id="b")
    assert svg.count("<circle") == 2
    assert 'class="stone-w"><title>&lt;centre&gt;</title>' in svg
