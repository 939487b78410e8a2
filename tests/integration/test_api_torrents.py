"""Torrents against a real server: published, superseded and zero-game months, parsed by torf,
every piece hash checked against the downloaded file, web seeds that really serve the file."""

from __future__ import annotations

import asyncio
import hashlib
import io
from pathlib import Path

import pytest
import torf

from gomoku_archive.db import mirror_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.web.keys import TORRENT_PIECES
from tests.integration.api_support import (
    Client,
    app_of,
    publish_bytes,
    publish_demo_month,
    random_bytes,
    serving,
)

BASE = "/api/v1/database"


@pytest.fixture
async def months(pool: Pool) -> None:
    await publish_demo_month(pool, Month(2026, 8), 20)
    await publish_demo_month(pool, Month(2026, 9), 0)
    await publish_bytes(pool, "2026-10", random_bytes(600_000, seed=3))
    await publish_bytes(pool, "2026-10", random_bytes(1_100_000, seed=4))  # rebuilt


@pytest.fixture
def api_data(months: None) -> None:
    """``api`` serves the months."""


def check_pieces(torrent: torf.Torrent, data: bytes) -> None:
    length = torrent.piece_size
    assert torrent.pieces == -(-len(data) // length)
    for index, digest in enumerate(torrent.hashes):
        assert digest == hashlib.sha1(data[index * length : (index + 1) * length]).digest()


async def test_every_file_has_a_torrent_that_matches_it(api: Client, tmp_path: Path) -> None:
    document = await (await api.get(BASE)).json()
    files = [m for m in document["months"] if m["file"]]
    files += [p for m in document["months"] for p in m["previousFiles"]]
    assert len(files) == 3, "two current files and one superseded"
    assert next(m for m in document["months"] if m["month"] == "2026-09")["torrentUrl"] is None
    for entry in files:
        response = await api.get(entry["torrentUrl"])
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/x-bittorrent"
        assert response.headers["Content-Disposition"] == (
            f'attachment; filename="{entry["file"]}.torrent"'
        )
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        body = await response.read()
        torrent = torf.Torrent.read_stream(io.BytesIO(body))
        data = await (await api.get(entry["downloadUrl"])).read()
        assert torrent.name == entry["file"]
        assert torrent.size == len(data) == entry["bytes"]
        assert torrent.creation_date is None
        check_pieces(torrent, data)
        # The web seed is the download URL itself, under the request's origin, and serves it.
        (seed,) = torrent.webseeds
        assert seed == str(api.make_url(entry["downloadUrl"]))
        assert (
            hashlib.sha256(await (await api.get(entry["downloadUrl"])).read()).hexdigest()
            == (entry["sha256"])
        )
        # torf checks the file on disk against the pieces too.
        path = tmp_path / entry["file"]
        path.write_bytes(data)
        assert torrent.verify(path)
        # Deterministic, and conditional like the other files.
        again = await api.get(entry["torrentUrl"])
        assert await again.read() == body
        etag = response.headers["ETag"]
        cached = await api.get(entry["torrentUrl"], headers={"If-None-Match": etag})
        assert cached.status == 304
        head = await api.head(entry["torrentUrl"])
        assert head.status == 200
        assert int(head.headers["Content-Length"]) == len(body)


async def test_unknown_files_have_no_torrent(api: Client) -> None:
    for name in ("gomoku-party-2026-10-0000000000000000.sgf.gz", "nope", "x.sgf.gz"):
        response = await api.get(f"{BASE}/files/{name}.torrent")
        assert response.status == 404
        assert (await response.json())["error"] == "not_found"


async def test_concurrent_requests_hash_once(api: Client, pool: Pool) -> None:
    document = await (await api.get(BASE)).json()
    url = document["months"][0]["torrentUrl"]
    bodies = await asyncio.gather(*(api.get(url) for _ in range(8)))
    assert len({await b.read() for b in bodies}) == 1
    cache = app_of(api)[TORRENT_PIECES]
    assert len(cache._hashes) == 1 and not cache._running


async def test_web_seed_under_public_base_url(db_dsn: str, pool: Pool, months: None) -> None:
    settings = Settings(database_url=db_dsn, public_base_url="https://gomokuparty.com")
    async with serving(db_dsn, pool, settings=settings) as api:
        document = await (await api.get(BASE)).json()
        entry = document["months"][0]
        body = await (await api.get(entry["torrentUrl"], headers={"Host": "x.example"})).read()
        torrent = torf.Torrent.read_stream(io.BytesIO(body))
        assert torrent.webseeds == ["https://gomokuparty.com" + entry["downloadUrl"]]


async def test_a_cdn_copy_read_anonymously_is_a_second_web_seed(
    db_dsn: str, pool: Pool, months: None
) -> None:
    settings = Settings(
        database_url=db_dsn,
        s3_bucket="archive-bucket",
        s3_prefix="db/",
        cdn_base_url="https://cdn.example.org",
    )
    async with serving(db_dsn, pool, settings=settings) as api:
        entry = (await (await api.get(BASE)).json())["months"][0]
        body = await (await api.get(entry["torrentUrl"])).read()
        assert len(torf.Torrent.read_stream(io.BytesIO(body)).webseeds) == 1, "not mirrored yet"
        async with pool.acquire() as conn:
            archive_id = await conn.fetchval(
                "SELECT id FROM archives WHERE file_name = $1", entry["file"]
            )
            await mirror_store.record_verified(
                conn,
                archive_id,
                store="aws",
                bucket="archive-bucket",
                key="db/" + entry["file"],
                etag='"e"',
                uploaded_bytes=entry["bytes"],
            )
        body = await (await api.get(entry["torrentUrl"])).read()
        webseeds = torf.Torrent.read_stream(io.BytesIO(body)).webseeds
        assert len(webseeds) == 1, "verified in the bucket, not yet through the CDN"
        cdn_url = f"https://cdn.example.org/db/{entry['file']}"
        async with pool.acquire() as conn:
            await mirror_store.record_cdn(conn, archive_id, cdn_url, None)
        body = await (await api.get(entry["torrentUrl"])).read()
        torrent = torf.Torrent.read_stream(io.BytesIO(body))
        assert torrent.webseeds == [str(api.make_url(entry["downloadUrl"])), cdn_url]


async def test_a_presigned_url_is_never_a_web_seed(db_dsn: str, pool: Pool, months: None) -> None:
    """It expires within hours; a torrent lives for years."""
    settings = Settings(database_url=db_dsn, s3_bucket="archive-bucket", s3_prefix="db/")
    async with serving(db_dsn, pool, settings=settings) as api:
        entry = (await (await api.get(BASE)).json())["months"][0]
        async with pool.acquire() as conn:
            archive_id = await conn.fetchval(
                "SELECT id FROM archives WHERE file_name = $1", entry["file"]
            )
            await mirror_store.record_verified(
                conn, archive_id, store="aws", bucket="archive-bucket", key="db/" + entry["file"],
                etag='"e"', uploaded_bytes=0,
            )  # fmt: skip
        body = await (await api.get(entry["torrentUrl"])).read()
        assert torf.Torrent.read_stream(io.BytesIO(body)).webseeds == [
            str(api.make_url(entry["downloadUrl"]))
        ]
