"""Geometry of the pages' inline SVG figures: numbers and text only, no markup.

Each figure is a frozen dataclass computed here and drawn by the macro of the same name in
``services/templates/charts.html``. A new chart (a heatmap, a histogram) follows the same
pattern: a dataclass and a function here, a macro there with a ``<title>`` and a ``<desc>`` for
screen readers, and a table test of the geometry in ``tests/unit/services/test_charts.py``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True)
class Label:
    """Text placed at (x, y), anchored as the macro's CSS class says."""

    x: float
    y: float
    text: str


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value: int


@dataclass(frozen=True, slots=True)
class BarChart:
    """Vertical bars over a baseline, oldest on the left; every bar has a tooltip title."""

    title: str
    description: str
    unit: str
    width: int
    height: int
    baseline: Line
    peak: Label
    bars: tuple[Bar, ...]
    ticks: tuple[Label, ...]


MAX_TICKS = 8
"""At most this many axis labels, evenly spaced and ending at the last bar: they stay legible
on a phone."""


def bar_chart(
    points: Sequence[tuple[str, int]], *, title: str, unit: str, series: str
) -> BarChart | None:
    """``points``: (label, value) left to right; ``unit`` names the values (``games``) and
    ``series`` the labels (``months``) in the description. None when there is nothing to draw."""
    if not points:
        return None
    width, height, top, bottom, left = 720, 260, 30, 36, 8
    plot_h = height - top - bottom
    step = (width - 2 * left) / len(points)
    bar_w = max(step * 0.7, 1.0)
    peak = max(value for _, value in points) or 1
    every = math.ceil(len(points) / MAX_TICKS)
    bars: list[Bar] = []
    ticks: list[Label] = []
    for i, (label, value) in enumerate(points):
        bar_h = plot_h * value / peak
        x = left + i * step + (step - bar_w) / 2
        bars.append(Bar(x, top + plot_h - bar_h, bar_w, bar_h, label, value))
        if (len(points) - 1 - i) % every == 0:  # counted from the newest, which is labelled
            ticks.append(Label(x + bar_w / 2, height - bottom + 16, label))
    return BarChart(
        title=title,
        description=_describe(points, unit, series),
        unit=unit,
        width=width,
        height=height,
        baseline=Line(left, top + plot_h, width - left, top + plot_h),
        peak=Label(left, top - 8, f"{peak:,} {unit}"),
        bars=tuple(bars),
        ticks=tuple(ticks),
    )


def _describe(points: Sequence[tuple[str, int]], unit: str, series: str) -> str:
    """The chart in one sentence, for screen readers (each bar's title has its own value)."""
    first, last = points[0][0], points[-1][0]
    top_label, top_value = max(points, key=lambda p: p[1])
    span = f"{len(points)} {series} from {first} to {last}" if len(points) > 1 else first
    return (
        f"{span}; the highest is {top_label} with {top_value:,} {unit}, "
        f"the last {last} with {points[-1][1]:,} {unit}."
    )


@dataclass(frozen=True, slots=True)
class Stone:
    cx: float
    cy: float
    colour: str
    """``b`` or ``w`` (the CSS class ``stone-b`` or ``stone-w``)."""
    title: str


@dataclass(frozen=True, slots=True)
class Board:
    """A Gomoku board with letters on two edges and a few stones."""

    title: str
    size: int
    lines: tuple[Line, ...]
    labels: tuple[Label, ...]
    stones: tuple[Stone, ...]


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def board(
    side: int, stones: Sequence[tuple[int, int, str, str]], *, title: str, cell: int = 20
) -> Board:
    """``stones``: (column, row, colour ``b``/``w``, title), column and row from the top-left."""
    margin = 26
    size = margin * 2 + cell * (side - 1)
    end = margin + cell * (side - 1)
    lines: list[Line] = []
    labels: list[Label] = []
    for i in range(side):
        p = margin + i * cell
        lines.append(Line(p, margin, p, end))
        lines.append(Line(margin, p, end, p))
        labels.append(Label(p, margin - 10, LETTERS[i]))
        labels.append(Label(margin - 14, p + 4, LETTERS[i]))
    placed = tuple(
        Stone(margin + x * cell, margin + y * cell, colour, text) for x, y, colour, text in stones
    )
    return Board(title, size, tuple(lines), tuple(labels), placed)
