"""Geometry of the pages' inline SVG figures: numbers and text only, no markup.

Each figure is a frozen dataclass computed here and drawn by the macro of the same name in
``templates/charts.html``. A new chart (a heatmap, a histogram) follows the same
pattern: a dataclass and a function here, a macro there with a ``<title>`` and a ``<desc>`` for
screen readers, and a table test of the geometry in ``tests/unit/web/test_charts.py``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any


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


# --- a month's statistics (the manifest's "stats" object) ---------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    """One colour's share of a stacked bar; ``kind`` is its CSS class."""

    x: float
    width: float
    kind: str
    title: str


@dataclass(frozen=True, slots=True)
class Legend:
    """Text at (x, y) anchored ``start``, ``middle`` or ``end`` (SVG's text-anchor)."""

    x: float
    y: float
    text: str
    anchor: str


@dataclass(frozen=True, slots=True)
class WinnersBar:
    """Black's, the draws' and white's shares of a month's games as one bar, left to right."""

    title: str
    description: str
    width: int
    height: int
    bar_y: float
    bar_height: float
    segments: tuple[Segment, ...]
    legend: tuple[Legend, ...]


_WINNERS = (("black", "Black won"), ("draw", "Drawn"), ("white", "White won"))


def plural(count: int, noun: str) -> str:
    """``1 game``, ``2 games``, ``1,000 games``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


def winners_bar(winners: Mapping[str, int], *, title: str) -> WinnersBar | None:
    """``winners``: the stats object's ``{black, white, draw}``; None without games."""
    total = sum(winners.get(key, 0) for key, _ in _WINNERS)
    if total == 0:
        return None
    width, height, bar_y, bar_h = 720, 64, 4, 30
    segments: list[Segment] = []
    x = 0.0
    for key, words in _WINNERS:
        count = winners.get(key, 0)
        share = width * count / total
        games = plural(count, "game")
        segments.append(Segment(x, share, key, f"{words}: {games} ({_share(count, total)})"))
        x += share
    black, draw, white = (winners.get(key, 0) for key, _ in _WINNERS)
    legend = (
        Legend(0, height - 8, f"Black {_share(black, total)}", "start"),
        Legend(width / 2, height - 8, f"Draws {_share(draw, total)}", "middle"),
        Legend(width, height - 8, f"White {_share(white, total)}", "end"),
    )
    description = (
        f"Of {plural(total, 'game')}, black won {black:,} ({_share(black, total)}), white won "
        f"{white:,} ({_share(white, total)}) and {draw:,} were drawn ({_share(draw, total)})."
    )
    return WinnersBar(title, description, width, height, bar_y, bar_h, tuple(segments), legend)


_LABEL_ROOM = 24


def length_chart(length: Mapping[str, Any], *, title: str) -> BarChart | None:
    """``length``: the stats object's ``{min, median, p90, max, histogram}``; one bar per bin,
    None without games."""
    bins: Sequence[Mapping[str, int]] = length["histogram"]
    games = sum(b["games"] for b in bins)
    if games == 0:
        return None
    chart = bar_chart(
        [(f"{b['from']}-{b['to']}", b["games"]) for b in bins],
        title=title,
        unit="games",
        series="bins",
    )
    assert chart is not None
    common = max(bins, key=lambda b: b["games"])
    mean = length.get("mean")
    description = (
        f"Moves per game in {plural(games, 'game')}, in bins of "
        f"{bins[0]['to'] - bins[0]['from'] + 1} moves: the shortest game has "
        f"{plural(length['min'], 'move')}, the median {length['median']}"
        + ("" if mean is None else f", the mean {mean}")
        + f", 90% of games have at most {length['p90']}, the longest {length['max']}. The most "
        f"common length is {common['from']} to {common['to']} moves, "
        f"{plural(common['games'], 'game')}."
    )
    # Room on the right for the last bin's label ("221-225"), centred under the last bar.
    return replace(chart, description=description, width=chart.width + _LABEL_ROOM)


@dataclass(frozen=True, slots=True)
class Cell:
    """The top-left corner of a point's square."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Shade:
    """The cells drawn at one shade; ``level`` 1 (palest) to ``HEAT_LEVELS`` (the peak)."""

    level: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class Letters:
    """One ``<text>`` whose every character has its own position (SVG's x and y lists)."""

    xs: tuple[int, ...]
    ys: tuple[int, ...]
    text: str
    anchor: str


@dataclass(frozen=True, slots=True)
class Swatch:
    """One square of a heatmap's colour scale: its shade and the counts it stands for."""

    x: int
    level: int
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class Scale:
    """The colour scale under a heatmap: a swatch per shade, palest on the left, between the
    lowest and the highest count."""

    y: int
    size: int
    swatches: tuple[Swatch, ...]
    low: Label
    high: Label


@dataclass(frozen=True, slots=True)
class Heatmap:
    """Counts per board point as shaded squares, columns a-o from the left and rows a-o from
    the top (the profile's coordinates); points never played stay blank. A colour scale under
    the board says what each shade counts."""

    title: str
    description: str
    size: int
    height: int
    cell: int
    origin: int
    """Where the first row and column start (the letters sit in the margin before it)."""
    columns: Letters
    rows: Letters
    shades: tuple[Shade, ...]
    scale: Scale


HEAT_LEVELS = 8
"""Shades of a heatmap (CSS classes h1 to h8). A count's shade grows with the square root of
its share of the peak, so that rarely played points stay visible beside the most played one."""


def heatmap(
    grid: Sequence[Sequence[int]], *, title: str, what: str, unit: str, top: int = 3
) -> Heatmap | None:
    """``grid``: rows from the top, each of columns from the left (``firstMoves``,
    ``allMoves``); ``what`` names the counts in the description ("Black's first move in
    2,000 games"), ``unit`` a count ("games", "stones"). None when every count is zero."""
    side = len(grid)
    counts = [(grid[y][x], x, y) for y in range(side) for x in range(side)]
    peak = max(count for count, _, _ in counts)
    if peak == 0:
        return None
    cell, origin = 20, 18
    levels: dict[int, list[Cell]] = {}
    for count, x, y in counts:
        if count:
            level = max(1, math.ceil(HEAT_LEVELS * math.sqrt(count / peak)))
            levels.setdefault(level, []).append(Cell(origin + x * cell, origin + y * cell))
    centres = tuple(origin + i * cell + cell // 2 for i in range(side))
    letters = LETTERS[:side]
    columns = Letters(centres, (origin - 5,) * side, letters, "middle")
    rows = Letters((origin - 5,) * side, tuple(c + 4 for c in centres), letters, "end")
    total = sum(count for count, _, _ in counts)
    ranked = sorted(counts, key=lambda c: (-c[0], c[2], c[1]))[:top]
    most = ", ".join(
        f"{LETTERS[x]}{LETTERS[y]} {count:,} ({_share(count, total)})"
        for count, x, y in ranked
        if count
    )
    played = sum(1 for count, _, _ in counts if count)
    description = (
        f"{what}, on the {side} × {side} board with columns a to {letters[-1]} from the left "
        f"and rows a to {letters[-1]} from the top; darker squares were played more often, "
        f"from the palest (1 {_singular(unit)}) to the darkest "
        f"({plural(peak, _singular(unit))}). "
        f"Most played (column, then row): {most}. {played} of {side * side} points were "
        f"played at least once ({plural(total, _singular(unit))} in all)."
    )
    shades = tuple(Shade(level, tuple(levels[level])) for level in sorted(levels))
    size = origin + side * cell + 2
    scale = heat_scale(peak, y=size + 6, left=origin, unit=unit)
    return Heatmap(
        title,
        description,
        size,
        size + 32,
        cell,
        origin,
        columns,
        rows,
        shades,
        scale,
    )


def level_bounds(level: int, peak: int) -> tuple[int, int]:
    """The counts drawn at ``level``: a count c has level ceil(LEVELS * sqrt(c / peak)), so
    the level's counts are those above peak * ((level - 1) / LEVELS)² up to peak *
    (level / LEVELS)²."""
    low = math.floor(peak * ((level - 1) / HEAT_LEVELS) ** 2) + 1
    high = math.floor(peak * (level / HEAT_LEVELS) ** 2)
    return low, high


def heat_scale(peak: int, *, y: int, left: int, unit: str) -> Scale:
    swatch = 14
    swatches: list[Swatch] = []
    for level in range(1, HEAT_LEVELS + 1):
        low, high = level_bounds(level, peak)
        if high >= low:  # a small peak leaves some levels without any count
            swatches.append(Swatch(left + 28 + len(swatches) * swatch, level, low, high))
    right = left + 28 + len(swatches) * swatch
    return Scale(
        y=y,
        size=swatch,
        swatches=tuple(swatches),
        low=Label(left + 24, y + 11, "1"),
        high=Label(right + 4, y + 11, plural(peak, _singular(unit))),
    )


def _singular(unit: str) -> str:
    return unit[:-1] if unit.endswith("s") else unit


@dataclass(frozen=True, slots=True)
class MonthFigures:
    """The four pictures of a month's statistics (a month without games or stats has none)."""

    winners: WinnersBar
    lengths: BarChart
    first_moves: Heatmap
    all_moves: Heatmap
    length_summary: str
    """``median 31 moves, mean 33.4``, beside the length chart."""


def month_figures(month: Mapping[str, Any]) -> MonthFigures | None:
    """The figures of a manifest month; None when it has no statistics or no games."""
    stats: Mapping[str, Any] | None = month.get("stats")
    if not stats:
        return None
    name = month["month"]
    games = sum(stats["winners"].values())
    winners = winners_bar(stats["winners"], title=f"{name}: who won")
    lengths = length_chart(stats["length"], title=f"{name}: game length in moves")
    first = heatmap(
        stats["firstMoves"],
        title=f"{name}: where black's first move was played",
        what=f"Black's first move in {plural(games, 'game')}",
        unit="games",
    )
    every = heatmap(
        stats["allMoves"],
        title=f"{name}: where all moves were played",
        what=f"Every move of both players in {plural(games, 'game')}",
        unit="stones",
    )
    if winners is None or lengths is None or first is None or every is None:
        return None
    return MonthFigures(winners, lengths, first, every, length_summary(stats["length"]))


def length_summary(length: Mapping[str, Any]) -> str:
    """The median and the mean of the month's game lengths, in words."""
    median, mean = length.get("median"), length.get("mean")
    words = [] if median is None else [f"median {plural(median, 'move')}"]
    if mean is not None:
        words.append(f"mean {mean}")
    return ", ".join(words)
