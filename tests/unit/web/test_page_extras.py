"""What the pages add for downloaders and mirrors, without a server: the manifest's last change
(Last-Modified), the favicon's bytes, robots.txt, and a human label for every exclusion reason
and termination."""

from __future__ import annotations

import struct
import zlib
from datetime import UTC, datetime

from gomoku_archive.catalog.manifest import last_changed
from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.vocabulary import REASON_LABELS, TERMINATION_LABELS
from gomoku_archive.web.pages.favicon import SIZE, favicon_ico
from gomoku_archive.web.pages.handlers import ROBOTS


def test_last_changed_is_the_newest_publication_or_rebuild() -> None:
    document = {
        "months": [
            {"publishedAt": "2026-11-01T00:10:00.123456+00:00", "previousFiles": []},
            {
                "publishedAt": "2026-10-01T00:10:00+00:00",
                "previousFiles": [{"supersededAt": "2026-11-03T08:00:00.5+00:00"}],
            },
        ]
    }
    assert last_changed(document) == datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
    assert last_changed({"months": []}) is None


def test_the_favicon_is_an_ico_holding_a_png() -> None:
    body = favicon_ico()
    assert struct.unpack("<HHH", body[:6]) == (0, 1, 1)
    width, height, _, _, planes, bits, size, offset = struct.unpack("<BBBBHHII", body[6:22])
    assert (width, height, planes, bits) == (SIZE, SIZE, 1, 32)
    png = body[offset : offset + size]
    assert offset + size == len(body)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    ihdr = png[8:33]
    assert ihdr[4:8] == b"IHDR"
    assert struct.unpack(">II", ihdr[8:16]) == (SIZE, SIZE)
    assert zlib.crc32(ihdr[4:21]) == struct.unpack(">I", ihdr[21:25])[0]


def test_robots_allows_the_public_pages_and_keeps_crawlers_out_of_ops() -> None:
    lines = ROBOTS.decode().splitlines()
    assert "User-agent: *" in lines
    assert "Disallow: /ops/" in lines
    assert "Allow: /database/" in lines


def test_every_reason_and_termination_has_a_label() -> None:
    assert set(REASON_LABELS) == set(Reason)
    assert set(TERMINATION_LABELS) == set(Termination)
    labels = [*REASON_LABELS.values(), *TERMINATION_LABELS.values()]
    assert all(label and "_" not in label for label in labels)
