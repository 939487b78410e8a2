"""``sync --base-url``: the service's origin, or the address of its page or manifest as a user
copies it from the browser, stand for the origin; any other path is one clear error saying
that the origin is wanted (the page's address made sync ask for
``/database/api/v1/database``, a 404 that said only "answered 404")."""

from __future__ import annotations

import pytest

from gomoku_archive.cli.sync_cmd import base_origin
from gomoku_archive.errors import ConfigError


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://gomokuparty.com", "https://gomokuparty.com"),
        ("https://gomokuparty.com/", "https://gomokuparty.com"),
        ("https://gomokuparty.com/database/", "https://gomokuparty.com"),
        ("https://gomokuparty.com/database", "https://gomokuparty.com"),
        ("https://gomokuparty.com/database/#2026-09", "https://gomokuparty.com"),
        ("https://gomokuparty.com/database/?utm_source=x", "https://gomokuparty.com"),
        ("https://gomokuparty.com/api/v1/database", "https://gomokuparty.com"),
        ("http://127.0.0.1:8080/database/", "http://127.0.0.1:8080"),
        ("http://[::1]:8080/database", "http://[::1]:8080"),
        ("HTTPS://GomokuParty.com/database/", "https://GomokuParty.com"),
    ],
)
def test_the_origin_and_the_service_s_pages_give_the_origin(given: str, origin: str) -> None:
    assert base_origin(given) == origin


@pytest.mark.parametrize(
    "given",
    [
        "https://gomokuparty.com/archive/",
        "https://gomokuparty.com/database/profile",
        "https://gomokuparty.com/database/files/",
        "https://gomokuparty.com/api/v1/database/files/x.sgf.gz",
    ],
)
def test_another_path_says_that_the_origin_is_wanted(given: str) -> None:
    with pytest.raises(ConfigError) as raised:
        base_origin(given)
    assert str(raised.value) == (
        "--base-url wants the archive service's origin, such as https://gomokuparty.com (no "
        f"path; its page's address, https://gomokuparty.com/database/, also does), got {given!r}"
    )


@pytest.mark.parametrize("given", ["gomokuparty.com", "ftp://gomokuparty.com/", "https://"])
def test_not_an_http_address(given: str) -> None:
    with pytest.raises(ConfigError, match="must be an http:// or https:// address"):
        base_origin(given)
