"""The public database page (``/database/``), rendered from the manifest document the API
serves, so the page and the JSON cannot disagree. The markup is ``templates/database.html``;
this module only derives the numbers it shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gomoku_archive.profile.vocabulary import REASON_LABELS, TERMINATION_LABELS
from gomoku_archive.verify.games_rows import FILTER_OPTIONS
from gomoku_archive.web.pages.charts import bar_chart, month_figures
from gomoku_archive.web.pages.examples import (
    GAMES_CSV,
    GAMES_JSONL,
    GAMES_RECIPES,
    QUERY_EXAMPLES,
    SGFMILL_EXAMPLE,
    STDLIB_EXAMPLE,
    with_origin,
)
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


FRONT_PAGE_MONTHS = 12
"""Months in /database/'s table: the page stays the same size however many years accumulate
(every month stays on its year's page, /database/YYYY/)."""


@dataclass(frozen=True, slots=True)
class Year:
    year: int
    months: int
    games: int


def years(months: Sequence[Mapping[str, Any]]) -> list[Year]:
    """The years that have published months, newest first."""
    found: dict[int, list[Mapping[str, Any]]] = {}
    for month in months:
        year = str(month["month"])[:4]
        if year.isdigit():  # always, in a manifest the export wrote
            found.setdefault(int(year), []).append(month)
    return [
        Year(year, len(ms), sum(int(m["games"]) for m in ms))
        for year, ms in sorted(found.items(), reverse=True)
    ]


def _labels() -> dict[str, Any]:
    return {
        "reason_labels": {r.value: text for r, text in REASON_LABELS.items()},
        "termination_labels": {t.value: text for t, text in TERMINATION_LABELS.items()},
    }


TOOLS_PATH = "/database/tools/"


def render_database_page(
    manifest: Mapping[str, Any], origin: str = PUBLIC_ORIGIN, wheel: str | None = None
) -> bytes:
    """The page; ``origin`` is where its examples' absolute URLs point (the public origin);
    ``wheel`` the name of the tool's wheel this server carries (None: the page names the
    package index)."""
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
    newest_stats, figures = None, {}
    for month in months:
        drawn = month_figures(month)
        if drawn is not None:
            newest_stats, figures = month, {month["month"]: drawn}
            break
    html = render(
        "database.html",
        totals=totals(months),
        scope=scope_text(manifest["scope"]),
        profile=manifest["profile"],
        license=manifest["license"],
        chart=chart,
        months=months[:FRONT_PAGE_MONTHS],
        older=len(months) > FRONT_PAGE_MONTHS,
        years=years(months),
        with_stats=False,
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
        wheel_url=f"{origin}{TOOLS_PATH}{wheel}" if wheel else None,
        # sync's default service is the public one; any other needs its address.
        base_url_option="" if origin == PUBLIC_ORIGIN else f" --base-url {origin}",
        games_filters=FILTER_OPTIONS,
        stdlib_example=STDLIB_EXAMPLE,
        sgfmill_example=SGFMILL_EXAMPLE,
        parquet_list_url=origin + "/api/v1/database/parquet.txt",
        query_examples={tool: with_origin(e, origin) for tool, e in QUERY_EXAMPLES.items()},
        games_csv=GAMES_CSV,
        games_jsonl=GAMES_JSONL,
        games_recipes=GAMES_RECIPES,
        **_labels(),
    )
    return html.encode("utf-8")


def render_year_page(manifest: Mapping[str, Any], year: int) -> bytes | None:
    """``/database/YYYY/``: that year's months with their statistics; None when it has none."""
    everything: Sequence[Mapping[str, Any]] = manifest["months"]
    months = [m for m in everything if str(m["month"]).startswith(f"{year:04d}-")]
    if not months:
        return None
    html = render(
        "database_year.html",
        year=year,
        years=years(everything),
        totals=totals(months),
        months=months,
        with_stats=True,
        figures={m["month"]: month_figures(m) for m in months},
        **_labels(),
    )
    return html.encode("utf-8")
