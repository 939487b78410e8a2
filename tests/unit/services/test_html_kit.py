"""The pages' small HTML kit: escaping, sizes, the chart."""

from __future__ import annotations

import re

import pytest

from services.html import bar_chart, h, human_bytes, table


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (10 * 1024 * 1024, "10.0 MiB"),
        (3 * 1024**3, "3.0 GiB"),
        (5 * 1024**5, "5120.0 TiB"),
    ],
)
def test_human_bytes(n: int, text: str) -> None:
    assert human_bytes(n) == text


def test_h_escapes_markup_and_quotes() -> None:
    assert h('<a href="x">&\'</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;"


def test_table_cells_are_placed_as_given() -> None:
    html = table(["A", "B"], [("1", "<b>2</b>")], id="t")
    assert '<table id="t">' in html
    assert "<td><b>2</b></td>" in html


def test_bar_chart_has_one_bar_and_title_per_month() -> None:
    points = [("2026-08", 10), ("2026-09", 0), ("<evil>", 5)]
    svg = bar_chart(points, label="Games")
    assert svg.count("<rect") == 3
    assert "2026-08: 10 games" in svg
    assert "<evil>" not in svg and "&lt;evil&gt;" in svg
    heights = [float(x) for x in re.findall(r'height="([0-9.]+)" class="bar"', svg)]
    assert heights[0] > heights[2] > heights[1] == 0


def test_an_empty_chart_says_so() -> None:
    assert "No months" in bar_chart([], label="Games")


def test_long_charts_label_at_most_eight_months() -> None:
    points = [(f"{2026 + i // 12}-{i % 12 + 1:02d}", i) for i in range(40)]
    svg = bar_chart(points, label="Games")
    assert svg.count("<rect") == 40
    assert svg.count('class="tick"') <= 9  # every fifth month, and the last one
