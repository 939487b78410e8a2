"""The pictures of a month's statistics: geometry from the manifest's stats object, drawn by
the macros in charts.html, on the database page."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from gomoku_archive.catalog.manifest import MonthSummary, build_manifest, stats_entry
from gomoku_archive.demo.examples import example_records
from gomoku_archive.profile.stats import EMPTY, StatsCounter
from gomoku_archive.web.pages.charts import (
    HEAT_LEVELS,
    heatmap,
    length_chart,
    length_summary,
    month_figures,
    winners_bar,
)
from gomoku_archive.web.pages.database import render_database_page, render_year_page
from gomoku_archive.web.pages.templating import environment
from tests.support import add_record


def draw(macro: str, figure: object, id: str = "c") -> str:
    template = environment().from_string(
        '{% import "charts.html" as charts %}{{ charts[macro](figure, id=id) }}'
    )
    return template.render(macro=macro, figure=figure, id=id)


def example_stats() -> dict[str, Any]:
    counter = StatsCounter()
    for record in example_records():
        add_record(counter, record)
    return stats_entry(counter.result())


def test_the_winners_bar_splits_its_width_by_share() -> None:
    bar = winners_bar({"black": 6, "white": 3, "draw": 1}, title="2026-09: who won")
    assert bar is not None
    assert [s.kind for s in bar.segments] == ["black", "draw", "white"]
    widths = [s.width for s in bar.segments]
    assert widths == pytest.approx([bar.width * 0.6, bar.width * 0.1, bar.width * 0.3])
    assert bar.segments[1].x == pytest.approx(widths[0])
    assert bar.segments[2].x + widths[2] == pytest.approx(bar.width)
    assert bar.segments[0].title == "Black won: 6 games (60.0%)"
    assert bar.segments[1].title == "Drawn: 1 game (10.0%)"
    assert [label.text for label in bar.legend] == ["Black 60.0%", "Draws 10.0%", "White 30.0%"]
    assert bar.description == (
        "Of 10 games, black won 6 (60.0%), white won 3 (30.0%) and 1 were drawn (10.0%)."
    )
    assert winners_bar({"black": 0, "white": 0, "draw": 0}, title="t") is None


def test_the_winners_bar_macro_reads_without_sight() -> None:
    bar = winners_bar({"black": 6, "white": 3, "draw": 1}, title="2026-09: <who> won")
    svg = draw("winners_bar", bar, id="w")
    assert 'role="img" aria-labelledby="w-title w-desc"' in svg
    assert '<title id="w-title">2026-09: &lt;who&gt; won</title>' in svg
    assert '<desc id="w-desc">Of 10 games' in svg
    assert svg.count("<rect") == 3 and "<title>White won: 3 games (30.0%)</title>" in svg


def test_the_length_chart_has_a_bar_per_bin_and_says_the_percentiles() -> None:
    stats = example_stats()
    chart = length_chart(stats["length"], title="2026-09: game length")
    assert chart is not None
    assert len(chart.bars) == 23
    assert [b.label for b in chart.bars][:2] == ["1-10", "11-20"]
    assert chart.bars[-1].label == "221-225"
    assert [b.value for b in chart.bars] == [b["games"] for b in stats["length"]["histogram"]]
    assert chart.bars[-1].x + chart.bars[-1].width < chart.width - 20  # room for its label
    length = stats["length"]
    assert (
        f"the shortest game has {length['min']} moves, the median {length['median']}, the mean "
        f"{length['mean']}, 90% of games have at most {length['p90']}, the longest "
        f"{length['max']}"
    ) in chart.description
    assert length_chart(stats_entry(EMPTY)["length"], title="t") is None


def test_the_heatmap_puts_each_count_on_its_point() -> None:
    grid = [[0] * 15 for _ in range(15)]
    grid[7][7] = 100  # hh
    grid[1][14] = 25  # ob: column o, row b
    grid[14][0] = 1  # ao
    figure = heatmap(grid, title="t", what="Black's first move in 126 games", unit="games")
    assert figure is not None
    levels = {cell: shade.level for shade in figure.shades for cell in shade.cells}
    o, c = figure.origin, figure.cell
    assert len(levels) == 3  # points never played are not drawn
    at = {(cell.x, cell.y): level for cell, level in levels.items()}
    assert at[(o + 7 * c, o + 7 * c)] == HEAT_LEVELS
    assert at[(o + 14 * c, o + 1 * c)] == 4  # sqrt(1/4) of the peak: half the shades
    assert at[(o, o + 14 * c)] == 1  # the palest shade, still visible
    assert figure.columns.text == figure.rows.text == "abcdefghijklmno"
    assert figure.columns.xs[0] == o + c // 2 and figure.rows.ys[-1] > figure.rows.ys[0]
    assert "Most played (column, then row): hh 100 (79.4%), ob 25 (19.8%), ao 1 (0.8%)." in (
        figure.description
    )
    assert "3 of 225 points were played at least once (126 games in all)" in figure.description
    assert heatmap([[0] * 15] * 15, title="t", what="w", unit="u") is None


def test_the_heatmap_macro_draws_one_path_per_shade() -> None:
    grid = [[0] * 15 for _ in range(15)]
    grid[0][0], grid[0][1] = 4, 4
    figure = heatmap(grid, title="First <moves>", what="w", unit="games")
    svg = draw("heatmap", figure, id="h")
    assert 'role="img" aria-labelledby="h-title h-desc"' in svg
    assert '<title id="h-title">First &lt;moves&gt;</title>' in svg and '<desc id="h-desc">' in svg
    (path,) = re.findall(r'<path class="h8" d="([^"]+)"', svg)
    assert path == "M18 18h20v20h-20zM38 18h20v20h-20z"
    assert ">abcdefghijklmno</text>" in svg


def summary(month: str, **changes: Any) -> MonthSummary:
    base = MonthSummary(
        month=month,
        games=200,
        file_name=f"gomoku-party-{month}-0123456789abcdef.sgf.gz",
        bytes=1234,
        uncompressed_bytes=5678,
        sha256="0123456789abcdef" * 4,
        published_at=datetime(2026, 10, 1, tzinfo=UTC),
        candidate_games=200,
        excluded_games=0,
        exclusions={},
        results={},
    )
    return replace(base, **changes)


def test_month_figures_need_stats_and_games() -> None:
    counter = StatsCounter()
    for record in example_records():
        add_record(counter, record)
    document = build_manifest(
        [
            summary("2026-10", stats=counter.result()),
            summary("2026-09", games=0, file_name=None, sha256=None, stats=EMPTY),
            summary("2026-08", stats=None),
        ]
    )
    with_stats, no_games, not_counted = document["months"]
    figures = month_figures(with_stats)
    assert figures is not None
    assert figures.winners.title == "2026-10: who won"
    assert month_figures(no_games) is None and month_figures(not_counted) is None


def test_the_year_page_draws_every_month_with_stats_and_the_front_page_the_newest() -> None:
    counter = StatsCounter()
    for record in example_records():
        add_record(counter, record)
    document = build_manifest(
        [
            summary("2026-10", games=0, file_name=None, sha256=None, stats=EMPTY),
            summary("2026-09", stats=counter.result()),
            summary("2026-08", stats=None),
        ]
    )
    front = render_database_page(document).decode()
    assert '<h2 id="stats">Statistics of 2026-09</h2>' in front
    figures = ("winners", "lengths", "first-moves", "all-moves")
    front_ids = re.findall(r'<svg class="[^"]*" id="([^"]+)"', front)
    assert [i for i in front_ids if i.startswith("stats-")] == [
        f"stats-newest-{f}" for f in figures
    ]
    # The front page links each month with statistics to its pictures on the year's page.
    assert 'href="/database/2026/#2026-09">Pictures of 2026-09</a>' in front
    page = (render_year_page(document, 2026) or b"").decode()
    ids = re.findall(r'<svg class="[^"]*" id="([^"]+)"', page)
    september = [i for i in ids if i.startswith("stats-2026-09-")]
    assert september == [f"stats-2026-09-{f}" for f in figures]
    assert not any(i.startswith(("stats-2026-10-", "stats-2026-08-")) for i in ids)
    assert len(set(ids)) == len(ids)
    for svg in re.findall(r"<svg class=\"(?:chart|heat)[^\"]*\".*?</svg>", page, re.S):
        assert 'role="img"' in svg and "<title id=" in svg and "<desc id=" in svg
    assert "Not counted yet" in page and "No games, so nothing to draw." in page
    assert "<script" not in page
    assert render_year_page(document, 2027) is None


def test_a_heatmap_has_a_colour_scale_that_covers_every_count() -> None:
    for peak in (1, 2, 7, 64, 1000, 12345):
        grid = [[0] * 15 for _ in range(15)]
        grid[7][7] = peak
        grid[0][0] = 1
        figure = heatmap(grid, title="t", what="w", unit="games")
        assert figure is not None
        swatches = figure.scale.swatches
        # Consecutive, from 1 to the peak, and each count's square has its swatch's shade.
        assert swatches[0].low == 1 and swatches[-1].high == peak
        assert all(a.high + 1 == b.low for a, b in itertools.pairwise(swatches))
        for count in {1, peak, (peak + 1) // 2}:
            level = next(s.level for s in swatches if s.low <= count <= s.high)
            assert level == max(1, math.ceil(HEAT_LEVELS * math.sqrt(count / peak)))
        assert figure.scale.high.text == f"{peak:,} game{'s' if peak != 1 else ''}"
        assert f"to the darkest ({peak:,} game{'s' if peak != 1 else ''})" in figure.description


def test_one_is_singular_and_the_mean_stands_beside_the_median() -> None:
    """ "1 moves" and "1 games" read wrong; the page gave the median length but not the mean."""
    length = {
        "min": 1, "median": 1, "mean": 1.0, "p90": 1, "max": 1,
        "histogram": [{"from": 1, "to": 10, "games": 1}],
    }  # fmt: skip
    chart = length_chart(length, title="t")
    assert chart is not None
    assert chart.description.startswith(
        "Moves per game in 1 game, in bins of 10 moves: the shortest game has 1 move, the "
        "median 1, the mean 1.0,"
    )
    assert chart.description.endswith("The most common length is 1 to 10 moves, 1 game.")
    assert length_summary({**length, "median": 31, "mean": 33.4}) == "median 31 moves, mean 33.4"
    assert length_summary({**length, "median": None, "mean": None}) == ""
