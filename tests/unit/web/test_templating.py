"""The template engine: autoescaping everywhere, strict names, the filters' text."""

from __future__ import annotations

from datetime import UTC, datetime

import jinja2
import pytest
from markupsafe import Markup

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.web.pages.database import render_database_page, totals
from gomoku_archive.web.pages.handlers import error_page
from gomoku_archive.web.pages.templating import (
    code_tokens,
    duration,
    environment,
    human_bytes,
    instant,
    render,
    thousands,
)
from tests.unit.web.test_public_pages import summary

EVIL = '<script>alert("x")</script>'


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


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0"), (999, "999"), (1000, "1,000"), (10**6, "1,000,000")]
)
def test_thousands(n: int, text: str) -> None:
    assert thousands(n) == text


@pytest.mark.parametrize(("s", "text"), [(0.04, "0.0 s"), (119.9, "119.9 s"), (120, "2.0 min")])
def test_duration(s: float, text: str) -> None:
    assert duration(s) == text


def test_instant() -> None:
    assert instant(None) is None
    assert instant("not a time") == "not a time"
    assert instant("2026-11-02T08:00:00+00:00") == datetime(2026, 11, 2, 8, tzinfo=UTC)
    now = datetime.now(UTC)
    assert instant(now) is now


@pytest.mark.parametrize("name", ["x.html", "x.svg", "x.xml", None])
def test_autoescape_is_on(name: str | None) -> None:
    env = environment()
    assert env.autoescape is not False
    assert callable(env.autoescape) and env.autoescape(name)


def test_a_string_template_escapes_too() -> None:
    assert environment().from_string("{{ v }}").render(v=EVIL) == (
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
    )


def test_a_misspelt_name_fails_the_render() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("error.html", status=404, phrase="Not Found", code="not_found")


def test_a_month_and_a_file_with_markup_come_out_escaped() -> None:
    manifest = build_manifest([summary("2026-08", 3)])
    month = manifest["months"][0]
    month["month"] = EVIL
    month["file"] = EVIL
    month["sha256"] = EVIL * 2
    month["torrentUrl"] = 'javascript:alert(1)" onclick="x'
    html = render_database_page(manifest).decode()
    assert "<script>" not in html
    assert 'onclick="x' not in html
    assert 'id="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"' in html
    assert '<span class="long">&lt;script&gt;' in html


def test_totals_cover_every_month() -> None:
    manifest = build_manifest(
        [summary("2026-08", 1200), summary("2026-09", 0, file=False), summary("2026-10", 7)]
    )
    found = totals(manifest["months"])
    assert (found.games, found.months, found.files) == (1207, 3, 2)
    assert found.bytes == 120_700
    assert found.uncompressed_bytes == 482_800
    html = render_database_page(manifest).decode()
    assert 'id="total-bytes" title="120700 bytes">117.9 KiB<' in html
    assert 'id="total-uncompressed" title="482800 bytes">471.5 KiB<' in html


def test_every_month_row_is_an_anchor_with_a_self_link() -> None:
    manifest = build_manifest([summary("2026-08", 12), summary("2026-09", 0, file=False)])
    html = render_database_page(manifest).decode()
    for month in ("2026-08", "2026-09"):
        assert f'<tr class="month" id="{month}" data-month="{month}">' in html
        assert f'<a class="self" href="#{month}">{month}</a>' in html
    assert html.count('class="torrent"') == 1  # a zero-game month has no file, so no torrent


def test_the_error_page_uses_the_layout() -> None:
    html = error_page(404, "not_found", "no such resource").decode()
    assert "<title>404 Not Found · Gomoku Party open database</title>" in html
    assert '<h1 id="error" data-status="404">Not Found</h1>' in html
    assert "No such resource." in html
    assert 'href="/database/"' in html
    assert "<script" not in html
    other = error_page(503, "unavailable", "the archive database is unavailable").decode()
    assert "Service Unavailable" in other and "The archive database is unavailable." in other


@pytest.mark.parametrize(
    ("text", "sgf", "tokens"),
    [
        (
            "go sync --base-url http://h/x?a=b",
            False,
            [
                ("text", "go"),
                ("text", " "),
                ("text", "sync"),
                ("text", " "),
                ("whole", "--base-url"),
                ("text", " "),
                ("whole", "http://h/x?a=b"),
            ],
        ),
        (
            "    x = f(y)\n",
            False,
            [
                ("text", "    "),
                ("text", "x"),
                ("text", " "),
                ("text", "="),
                ("text", " "),
                ("whole", "f(y)"),
                ("text", "\n"),
            ],
        ),
        (
            "(;FF[4]RU[Go Free];B[hh])",
            True,
            [
                ("whole", "(;FF[4]"),
                ("break", ""),
                ("whole", "RU[Go Free]"),
                ("break", ""),
                ("whole", ";B[hh])"),
            ],
        ),
        ("", False, []),
    ],
)
def test_code_is_cut_into_words_and_whole_tokens(
    text: str, sgf: bool, tokens: list[tuple[str, str]]
) -> None:
    assert code_tokens(text, sgf) == tokens
    assert "".join(token for _, token in code_tokens(text, sgf)) == text


def test_code_captured_by_a_template_stays_escaped_once() -> None:
    captured = Markup("curl -O http://h/?a=1&amp;b=&lt;2&gt;")
    tokens = code_tokens(captured)
    assert all(isinstance(token, Markup) for _, token in tokens)
    assert tokens[-1] == ("whole", Markup("http://h/?a=1&amp;b=&lt;2&gt;"))
    block = environment().from_string(
        '{% from "code.html" import code %}{% set c %}curl {{ url }}{% endset %}{{ code(c, "x") }}'
        "{{ code(plain) }}"
    )
    html = block.render(url="http://h/?a=1&b=<2>", plain="a <b> --c")
    assert html == (
        '<pre id="x" tabindex="0">curl <span class="t">http://h/?a=1&amp;b=&lt;2&gt;</span></pre>'
        '<pre tabindex="0">a <span class="t">&lt;b&gt;</span> <span class="t">--c</span></pre>'
    )
