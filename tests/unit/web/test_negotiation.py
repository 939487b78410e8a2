"""Which clients get an HTML page instead of JSON: browsers only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.http.negotiation import prefers_html, quality

CHROMIUM = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)
FIREFOX = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
SAFARI = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        (CHROMIUM, True),
        (FIREFOX, True),
        (SAFARI, True),
        ("text/html", True),
        ("TEXT/HTML", True),
        ("text/*", True),
        ("text/html;q=0.9, application/json;q=0.5", True),
        ("application/json;q=0.5, text/html;q=0.6", True),
        ("text/html; level=1, */*; q=0.1", True),
        (None, False),  # no field: any type is fine, and JSON has always been the answer
        ("", False),
        ("*/*", False),  # curl: a tie keeps JSON
        ("application/json", False),
        ("application/json, text/html;q=0.9", False),
        ("application/json, */*;q=0.8", False),
        ("application/*", False),
        ("text/html;q=0, */*", False),  # the most specific range counts: HTML refused
        ("text/html;q=0.5, application/json;q=0.5", False),
        ("image/png", False),
        ("text/html;q=2", False),  # an invalid qvalue drops its range
        ("text/html;q=0.12345", False),
        ("text/html;q=abc, */*;q=0.1", False),
        ("garbage, ,;;, text", False),
        ("*/html", False),  # not a media range
        ("text/html;q=1.000", True),
        ("text/html;q=0.001", True),
    ],
)
def test_prefers_html(accept: str | None, html: bool) -> None:
    assert prefers_html(accept) is html


@pytest.mark.parametrize(
    ("accept", "media_type", "q"),
    [
        (None, "text/html", 1.0),
        (FIREFOX, "text/html", 1.0),
        (FIREFOX, "application/json", 0.8),
        (FIREFOX, "application/xml", 0.9),
        ("text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "text/html", 0.7),
        ("text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "text/plain", 0.3),
        ("text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "image/png", 0.5),
        ("text/html", "application/json", 0.0),
    ],
)
def test_quality(accept: str | None, media_type: str, q: float) -> None:
    assert quality(accept, media_type) == q


@given(st.text())
def test_any_field_gets_an_answer(accept: str) -> None:
    assert prefers_html(accept) in (True, False)
    assert 0.0 <= quality(accept, "text/html") <= 1.0
