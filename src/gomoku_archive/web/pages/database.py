"""The public database page (``/database/``), rendered from the manifest document the API
serves, so the page and the JSON cannot disagree. The markup is ``templates/database.html``;
this module only derives the numbers it shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gomoku_archive.web.pages.charts import bar_chart, month_figures
from gomoku_archive.web.pages.examples import SGFMILL_EXAMPLE, STDLIB_EXAMPLE
from gomoku_archive.web.pages.profile import example_line
from gomoku_archive.web.pages.templating import render

PLACEHOLDER_FILE = "gomoku-party-YYYY-MM-xxxxxxxxxxxxxxxx.sgf.gz"
PUBLIC_ORIGIN = "https://gomokuparty.com"
"""The production origin, for a page rendered without a request (tests, previews)."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Across the manifest's months (current files; superseded ones are history)."""

    games: int
    months: int
    files: int
    bytes: int
    uncompressed_bytes: int


def totals(months: Sequence[Mapping[str, Any]]) -> Totals:
    return Totals(
        games=sum(int(m["games"]) for m in months),
        months=len(months),
        files=sum(1 for m in months if m.get("file")),
        bytes=sum(int(m["bytes"]) for m in months),
        uncompressed_bytes=sum(int(m.get("uncompressedBytes", 0)) for m in months),
    )


def scope_text(scope: Mapping[str, Any]) -> str:
    rated = "rated" if scope.get("rated") else "unrated"
    size = scope.get("boardSize", 15)
    return (
        f"completed {str(scope.get('mode', '')).lower()} {rated} games, "
        f"{str(scope.get('ruleset', '')).title()} rules on a {size} × {size} board"
    )


def render_database_page(manifest: Mapping[str, Any], origin: str = PUBLIC_ORIGIN) -> bytes:
    """The page; ``origin`` is where its examples' absolute URLs point (the public origin)."""
    months: Sequence[Mapping[str, Any]] = manifest["months"]
    newest = next((m for m in months if m.get("file")), None)
    file_name = newest["file"] if newest else PLACEHOLDER_FILE
    download = origin + (newest["downloadUrl"] if newest else f"/api/v1/database/files/{file_name}")
    chart = bar_chart(
        [(m["month"], int(m["games"])) for m in reversed(months)],
        title="Games per month, oldest to newest",
        unit="games",
        series="months",
    )
    figures = {m["month"]: month_figures(m) for m in months}
    newest_stats = next((m for m in months if figures[m["month"]]), None)
    html = render(
        "database.html",
        totals=totals(months),
        scope=scope_text(manifest["scope"]),
        profile=manifest["profile"],
        license=manifest["license"],
        chart=chart,
        months=months,
        figures=figures,
        newest_stats=newest_stats,
        sample=example_line().rstrip("\n"),
        download_url=download,
        checksum_url=download + ".sha256",
        checksum_name=file_name + ".sha256",
        file_name=file_name,
        list_url=origin + "/api/v1/database/list.txt",
        sums_url=origin + "/api/v1/database/sha256sums.txt",
        feed_url=origin + "/api/v1/database/feed.atom",
        stdlib_example=STDLIB_EXAMPLE,
        sgfmill_example=SGFMILL_EXAMPLE,
    )
    return html.encode("utf-8")
