"""A small, safe HTML kit for the server-rendered pages: every dynamic value goes through
``h()``; templates are ``string.Template`` files in ``services/templates`` whose placeholders
receive only HTML built here."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from html import escape
from importlib import resources
from string import Template


def h(value: object) -> str:
    """Text as HTML, quotes escaped too (safe in attributes)."""
    return escape(str(value), quote=True)


@functools.cache
def template(name: str) -> Template:
    text = resources.files("services").joinpath("templates", name).read_text("utf-8")
    return Template(text)


def page(*, title: str, description: str, main: str) -> bytes:
    """A whole document in the shared layout."""
    html = template("base.html").substitute(title=h(title), description=h(description), main=main)
    return html.encode("utf-8")


def thousands(n: int) -> str:
    return f"{n:,}"


def human_bytes(n: int) -> str:
    """Binary units, as ``ls -h`` and download managers show them."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, id: str = "") -> str:
    """A table whose cells are already HTML."""
    head = "".join(f'<th scope="col">{cell}</th>' for cell in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    ident = f' id="{h(id)}"' if id else ""
    return (
        f'<div class="table-wrap"><table{ident}><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def bar_chart(points: Sequence[tuple[str, int]], *, label: str) -> str:
    """An inline SVG bar chart, oldest month on the left; every bar has a tooltip title and
    the chart a text alternative, so it reads without colour or scripts."""
    if not points:
        return '<p class="muted">No months are published yet.</p>'
    width, height, top, bottom, left = 720, 260, 30, 36, 8
    plot_h = height - top - bottom
    step = (width - 2 * left) / len(points)
    bar_w = max(step * 0.7, 1.0)
    peak = max(count for _, count in points) or 1
    every = math.ceil(len(points) / 8)  # at most 8 axis labels: they stay legible on a phone
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{h(label)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{h(label)}</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - left}" y2="{top + plot_h}" '
        'class="axis"/>',
        f'<text x="{left}" y="{top - 8}" class="peak">{h(thousands(peak))} games</text>',
    ]
    for i, (month, count) in enumerate(points):
        bar_h = plot_h * count / peak
        x = left + i * step + (step - bar_w) / 2
        y = top + plot_h - bar_h
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{bar_h:.1f}" '
            f'class="bar"><title>{h(month)}: {h(thousands(count))} games</title></rect>'
        )
        if i % every == 0 or i == len(points) - 1:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{height - bottom + 16}" '
                f'class="tick">{h(month)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
