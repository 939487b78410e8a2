"""The pages' reading examples are the docs' (docs/downloaders.md), and the page's URLs follow the
origin."""

from __future__ import annotations

import html
import re

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.web.pages.database import render_database_page
from gomoku_archive.web.pages.examples import SGFMILL_EXAMPLE, STDLIB_EXAMPLE
from gomoku_archive.web.pages.profile import render_profile_page
from tests.docs_pages import code_blocks, section


def test_the_docs_show_the_same_examples() -> None:
    reading = section("downloaders.md", "Reading the files")
    assert code_blocks(reading, "python") == [STDLIB_EXAMPLE, SGFMILL_EXAMPLE]


def text_of(page: bytes) -> str:
    """The page's text as a browser shows it (a code block's tokens are spans of their own)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.decode("utf-8")))


def test_both_pages_show_the_examples() -> None:
    for page in (render_database_page(build_manifest([])), render_profile_page()):
        text = text_of(page)
        assert STDLIB_EXAMPLE in text
        assert SGFMILL_EXAMPLE in text
        assert "counts rows from the bottom" in text.replace("\n", " ")


def test_the_database_page_uses_the_origin() -> None:
    page = render_database_page(build_manifest([]), "http://127.0.0.1:8080")
    assert "wget -N -i http://127.0.0.1:8080/api/v1/database/list.txt" in text_of(page)
    assert b'href="http://127.0.0.1:8080/api/v1/database/feed.atom"' in page
    assert b"https://gomokuparty.com/api" not in page
    default = text_of(render_database_page(build_manifest([])))
    assert "wget -N -i https://gomokuparty.com/api/v1/database/list.txt" in default
