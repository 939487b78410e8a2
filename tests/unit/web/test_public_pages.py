"""The public pages rendered from data alone: the database page follows the manifest, the
profile page covers every constant the writer and the export use."""

from __future__ import annotations

import html as html_module
import re
from dataclasses import replace
from datetime import UTC, datetime
from html.parser import HTMLParser

from markupsafe import escape

from gomoku_archive.catalog.manifest import MonthSummary, PreviousFile, build_manifest
from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.vocabulary import RE_VALUES
from gomoku_archive.profile.writer import ROOT_PROPERTIES
from gomoku_archive.web.pages.database import render_database_page
from gomoku_archive.web.pages.profile import example_line, render_profile_page

SPEC_EXAMPLE = (
    "(;FF[4]GM[4]CA[UTF-8]AP[GomokuParty:1.0]SZ[15]RU[Gomoku Freestyle]"
    "GN[00000000-0000-4000-8000-000000000001]PC[https://gomokuparty.com]DT[2026-08-12]PB[Black]"
    "PW[White]BR[1200 Elo]WR[1210 Elo]RE[B+R]SO[https://gomokuparty.com/database/]CP[CC0-1.0]"
    "XGP[gomoku-party-sgf-1]XRT[rated]XTC[60]XST[2026-08-12T12:00:00Z]"
    "XET[2026-08-12T12:02:00Z]XER[RESIGNATION];B[hh];W[ih];B[ii])"
)


def summary(month: str, games: int, *, file: bool = True) -> MonthSummary:
    sha = (month.replace("-", "") + "ab" * 32)[:64]
    return MonthSummary(
        month=month,
        games=games,
        file_name=f"gomoku-party-{month}-{sha[:16]}.sgf.gz" if file else None,
        bytes=games * 100 if file else 0,
        uncompressed_bytes=games * 400 if file else 0,
        sha256=sha if file else None,
        published_at=datetime(2026, 10, 1, 0, 5, tzinfo=UTC),
        candidate_games=games + 3,
        excluded_games=3,
        exclusions={"aborted": 2, "occupied": 1},
        results={"FIVE": games},
    )


class Cells(HTMLParser):
    """Rows of the archives table as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "month":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "a" and self._row is not None and a.get("href"):
            self.links.append(a["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_the_database_page_lists_the_manifest_newest_first() -> None:
    manifest = build_manifest(
        [summary("2026-08", 1200), summary("2026-09", 0, file=False), summary("2026-10", 7)]
    )
    html = render_database_page(manifest).decode("utf-8")
    cells = Cells()
    cells.feed(html)
    assert [r[0] for r in cells.rows] == ["2026-10", "2026-09", "2026-08"]
    assert [r[1] for r in cells.rows] == ["7", "0", "1,200"]
    assert 'data-unit="games">7<' in html  # a phone's card says "7 games" (base.html)
    assert cells.rows[1][4] == "no games"
    for month in manifest["months"]:
        if month["file"]:
            assert month["downloadUrl"] in cells.links
            assert month["checksumUrl"] in cells.links
    assert '<span class="total" id="total-games">1,207</span>' in html
    assert html.count('<tr class="details"') == 3
    assert "Aborted (<code>aborted</code>): 2" in html
    assert html.count('class="bar"') == 3
    assert "CC0" in html and "sha256sum -c" in text_of(html) and "gomoku-party-sgf-1" in html
    assert SPEC_EXAMPLE in text_of(html)


def text_of(page: str) -> str:
    """The page's text as a browser shows it (a code block's tokens are spans of their own)."""
    return html_module.unescape(re.sub(r"<[^>]+>", "", page))


def test_a_months_rebuild_reason_is_beside_its_row_as_text() -> None:
    """Like a known issue of the month: on the page, above the month's details, escaped; an
    earlier file's own reason in the list of earlier files."""
    earlier = PreviousFile(
        file_name="gomoku-party-2026-10-dddddddddddddddd.sgf.gz",
        sha256="d" * 64,
        bytes=700,
        games=7,
        candidate_games=10,
        excluded_games=3,
        published_at=datetime(2026, 11, 1, tzinfo=UTC),
        superseded_at=datetime(2026, 11, 20, tzinfo=UTC),
        rebuild_reason="first fix",
    )
    rebuilt = replace(
        summary("2026-10", 7),
        rebuild_reason='12 games <script>alert("x")</script> scored as wins',
        first_published_at=datetime(2026, 11, 20, tzinfo=UTC),
        previous=(earlier,),
    )
    html = render_database_page(build_manifest([rebuilt, summary("2026-09", 3)])).decode()
    assert "<script>alert" not in html
    assert html.count('class="rebuild-reason"') == 1
    assert (
        '<p class="rebuild-reason">Rebuilt on <time datetime="2026-11-20T00:00:00Z">2026-11-20'
        "</time>: 12 games &lt;script&gt;" in html
    )
    assert "published 2026-11-01, itself rebuilt because: first fix;" in " ".join(html.split())


def test_the_database_page_escapes_everything() -> None:
    manifest = build_manifest([summary("2026-08", 1)])
    manifest["months"][0]["month"] = "<script>alert(1)</script>"
    manifest["months"][0]["downloadUrl"] = '"><img src=x onerror=alert(1)>'
    html = render_database_page(manifest).decode("utf-8")
    assert "<script>" not in html
    assert "<img src=x" not in html


def test_an_empty_database_page() -> None:
    html = render_database_page(build_manifest([])).decode("utf-8")
    assert "No months are published yet" in html
    assert 'id="total-games">0<' in html


def test_the_example_is_the_published_profile_example() -> None:
    assert example_line() == SPEC_EXAMPLE + "\n"


def test_the_profile_page_documents_every_constant() -> None:
    html = render_profile_page().decode("utf-8")
    text = re.sub(r"<[^>]+>", " ", html)
    for prop in ROOT_PROPERTIES:
        assert f'id="prop-{prop.ident}"' in html, prop.ident
        assert str(escape(prop.meaning)) in html, prop.ident
    for ident in ("XGP", "XRT", "XTC", "XST", "XET", "XER"):
        assert f"{ident}[" in html
    for value in RE_VALUES:
        assert f"RE[{value.replace('+', '+')}]" in html
    for termination in Termination:
        assert f"<code>{termination.value}</code>" in html
    for reason in Reason:
        assert f"<code>{reason.value}</code>" in html
    assert "column first" in text.lower()
    assert SPEC_EXAMPLE in text_of(html)
    assert "<script" not in html
