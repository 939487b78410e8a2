"""The manifest's served bytes and validators, rendered once per change."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from gomoku_archive.catalog.manifest import MonthSummary, build_manifest
from gomoku_archive.web.manifest_cache import render


def document(games: int) -> dict[str, object]:
    month = MonthSummary(
        month="2026-08",
        games=games,
        file_name="gomoku-party-2026-08-0123456789abcdef.sgf.gz",
        bytes=123,
        uncompressed_bytes=456,
        sha256="0123456789abcdef" * 4,
        published_at=datetime(2026, 9, 1, 0, 10, tzinfo=UTC),
        candidate_games=games + 1,
        excluded_games=1,
        exclusions={"aborted": 1},
        results={"FIVE": games},
    )
    return build_manifest([month])


def test_rendering_is_deterministic() -> None:
    a, b = render(document(5)), render(document(5))
    assert a.body == b.body
    assert a.gzip_body == b.gzip_body
    assert a.etag == b.etag
    assert a.gzip_etag == b.gzip_etag


def test_bodies_and_etags() -> None:
    snapshot = render(document(5))
    assert json.loads(snapshot.body) == document(5)
    assert gzip.decompress(snapshot.gzip_body) == snapshot.body
    assert not snapshot.etag.weak
    assert not snapshot.gzip_etag.weak
    assert snapshot.etag != snapshot.gzip_etag
    assert snapshot.archives == 1
    assert snapshot.body.decode("utf-8")  # UTF-8, no BOM
    assert not snapshot.body.startswith(b"\xef\xbb\xbf")


def test_any_change_changes_the_etag() -> None:
    assert render(document(5)).etag != render(document(6)).etag
