"""The pages' reading and querying examples are the docs' (docs/downloaders.md), the page's URLs
follow the origin, and the Parquet companion's columns are documented on the profile page and in
the docs as the schema has them."""

from __future__ import annotations

import html
import re

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.companion.schema import COLUMNS, SCHEMA_ID
from gomoku_archive.web.pages.database import PUBLIC_ORIGIN, render_database_page
from gomoku_archive.web.pages.examples import (
    GAMES_RECIPES,
    QUERY_EXAMPLES,
    SGFMILL_EXAMPLE,
    STDLIB_EXAMPLE,
    with_origin,
)
from gomoku_archive.web.pages.profile import render_profile_page
from tests.docs_pages import between_markers, code_blocks, section


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


def test_the_docs_show_the_query_examples_with_the_public_origin() -> None:
    section = between_markers("downloaders.md", "query-in-place")
    shown = code_blocks(section, "sql") + code_blocks(section, "python")
    assert shown == [with_origin(e, PUBLIC_ORIGIN) for e in QUERY_EXAMPLES.values()]


def test_the_database_page_shows_the_query_examples_and_recipes_at_its_origin() -> None:
    raw = render_database_page(build_manifest([]), "http://127.0.0.1:8080")
    text, page = text_of(raw), html.unescape(raw.decode())
    for example in QUERY_EXAMPLES.values():
        assert with_origin(example, "http://127.0.0.1:8080") in text
    for recipe in GAMES_RECIPES.values():
        assert recipe in text
    assert 'id="query"' in page and 'id="typed"' in page
    assert 'href="#query"' in page and 'href="#typed"' in page
    assert "downloaders' guide" not in page, "a visitor has no repository: the page says it all"


def test_the_profile_page_documents_every_column() -> None:
    page = html.unescape(render_profile_page().decode())
    assert 'id="parquet"' in page and SCHEMA_ID in page
    for column in COLUMNS:
        assert f'<code id="column-{column.name}">{column.name}</code>' in page
        assert column.meaning in page
        for tool_type in (column.types.parquet, column.types.duckdb, column.types.polars):
            assert tool_type in page


def test_the_docs_schema_table_is_the_schema() -> None:
    table = between_markers("downloaders.md", "parquet-schema")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    expected = [
        f"| `{c.name}` | {c.source} | {c.meaning}{' (may be null)' if c.nullable else ''} | "
        f"`{c.example}` | {c.types.parquet} | {c.types.duckdb} | {c.types.polars} | "
        f"{c.types.pandas} |"
        for c in COLUMNS
    ]
    assert rows == expected
