"""The public database page (``/database/``), rendered from the manifest document the API
serves, so the page and the JSON cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.html import bar_chart, h, human_bytes, page, template, thousands
from services.page_examples import SGFMILL_EXAMPLE, STDLIB_EXAMPLE
from services.page_profile import example_line

PLACEHOLDER_FILE = "gomoku-party-YYYY-MM-xxxxxxxxxxxxxxxx.sgf.gz"
PUBLIC_ORIGIN = "https://gomokuparty.com"
"""The production origin, for a page rendered without a request (tests, previews)."""
COLUMNS = 7


def _scope(scope: Mapping[str, Any]) -> str:
    rated = "rated" if scope.get("rated") else "unrated"
    size = scope.get("boardSize", 15)
    return h(
        f"completed {str(scope.get('mode', '')).lower()} {rated} games, "
        f"{str(scope.get('ruleset', '')).title()} rules on a {size} × {size} board"
    )


def _counts(counts: Mapping[str, int]) -> str:
    items = "".join(f"<li><code>{h(k)}</code>: {h(thousands(v))}</li>" for k, v in counts.items())
    return f"<ul>{items}</ul>"


def _month_rows(month: Mapping[str, Any]) -> str:
    name = month["month"]
    file = month.get("file")
    if file:
        size = f'<span title="{h(month["bytes"])} bytes">{h(human_bytes(month["bytes"]))}</span>'
        download = (
            f'<a href="{h(month["downloadUrl"])}" class="download" aria-label="Download {h(file)}">'
            f'<span class="long">{h(file)}</span><span class="short">Download</span></a>'
        )
        checksum = f'<a href="{h(month["checksumUrl"])}" class="checksum">sha256</a>'
        digest = f'<code title="{h(month["sha256"])}">{h(month["sha256"][:12])}…</code>'
    else:
        size, download, checksum, digest = "–", '<span class="muted">no games</span>', "–", "–"
    published = month["publishedAt"]
    cells = [
        f'<th scope="row">{h(name)}</th>',
        f'<td class="num games">{h(thousands(month["games"]))}</td>',
        f'<td class="num size">{size}</td>',
        f"<td>{download}</td>",
        f"<td>{checksum}</td>",
        f'<td class="wide-only">{digest}</td>',
        f'<td class="wide-only"><time datetime="{h(published)}">{h(published[:10])}</time></td>',
    ]
    summary = (
        f"{h(thousands(month['candidateGames']))} candidate games, "
        f"{h(thousands(month['excludedGames']))} excluded; published {h(published[:10])}"
    )
    details = (
        f"<details><summary>{summary}</summary>"
        f"<h3>Exclusion reasons</h3>{_counts(month['exclusions'])}"
        f"<h3>Results by termination</h3>{_counts(month['results'])}</details>"
    )
    return (
        f'<tr class="month" data-month="{h(name)}">{"".join(cells)}</tr>'
        f'<tr class="details" data-month="{h(name)}"><td colspan="{COLUMNS}">{details}</td></tr>'
    )


def _table(months: Sequence[Mapping[str, Any]]) -> str:
    if not months:
        return '<p class="muted">No months are published yet.</p>'
    head = "".join(
        f'<th scope="col"{cls}>{label}</th>'
        for label, cls in (
            ("Month", ""),
            ("Games", ' class="num"'),
            ("Size", ' class="num"'),
            ("Download", ""),
            ("Checksum", ""),
            ("SHA-256", ' class="wide-only"'),
            ("Published", ' class="wide-only"'),
        )
    )
    rows = "".join(_month_rows(m) for m in months)
    return (
        f'<div class="table-wrap"><table id="archives"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def render_database_page(manifest: Mapping[str, Any], origin: str = PUBLIC_ORIGIN) -> bytes:
    """The page; ``origin`` is where its examples' absolute URLs point (the public origin)."""
    months: Sequence[Mapping[str, Any]] = manifest["months"]
    newest = next((m for m in months if m.get("file")), None)
    file_name = newest["file"] if newest else PLACEHOLDER_FILE
    download = newest["downloadUrl"] if newest else f"/api/v1/database/files/{file_name}"
    base = origin
    chart_points = [(m["month"], int(m["games"])) for m in reversed(months)]
    count = len(months)
    main = template("database.html").substitute(
        total_games=h(thousands(manifest["totalGames"])),
        month_count=h(f"{count} month{'s' if count != 1 else ''}"),
        scope=_scope(manifest["scope"]),
        profile=h(manifest["profile"]),
        license=h(manifest["license"]),
        chart=bar_chart(chart_points, label="Games per month, oldest to newest"),
        table=_table(months),
        sample=h(example_line().rstrip("\n")),
        download_url=h(base + download),
        checksum_url=h(base + download + ".sha256"),
        checksum_name=h(file_name + ".sha256"),
        file_name=h(file_name),
        list_url=h(base + "/api/v1/database/list.txt"),
        sums_url=h(base + "/api/v1/database/sha256sums.txt"),
        feed_url=h(base + "/api/v1/database/feed.atom"),
        stdlib_example=h(STDLIB_EXAMPLE),
        sgfmill_example=h(SGFMILL_EXAMPLE),
    )
    return page(
        title="Gomoku Party open database",
        description="Monthly archives of every ranked freestyle Gomoku game, SGF, CC0.",
        main=main,
    )
