"""Archive and checksum downloads through the real app on a loopback port, against a real
PostgreSQL: every header, status and byte, with aiohttp's client and with curl."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import json
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from yarl import URL

from gomoku_archive.db import archive_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.http.conditions import format_http_date
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.storage.chunks import CHUNK_SIZE
from gomoku_archive.web.keys import DOWNLOAD_CACHE
from tests.integration.api_support import (
    Client,
    app_of,
    publish_bytes,
    publish_demo_month,
    random_bytes,
)
from tests.integration.conftest import ApiWarmUp
from tests.support import wait_filled

FILES = "/api/v1/database/files/"
BIG = 3 * CHUNK_SIZE + 12_345  # four chunks, the last one short


@dataclass
class Published:
    demo: ArchiveRow
    blob: ArchiveRow
    data: bytes


@pytest.fixture
async def published(pool: Pool) -> Published:
    demo = await publish_demo_month(pool, Month(2026, 8), 60)
    data = random_bytes(BIG, seed=11)
    blob = await publish_bytes(pool, "2026-09", data)
    return Published(demo, blob, data)


@pytest.fixture
def api_data(published: Published) -> None:
    """``api`` serves the published files."""


@pytest.fixture(params=["chunks", "file_cache"])
def api_settings(request: pytest.FixtureRequest, db_dsn: str, tmp_path: Path) -> Settings:
    """Every test runs twice: streamed from the chunks, and sent from the local file cache
    (filled by a first download of each file, ``api_warm_up``), which must answer exactly the
    same."""
    settings = Settings(database_url=db_dsn, redis_url="redis://127.0.0.1:1/0")
    if request.param == "chunks":
        return settings
    return replace(settings, download_cache_dir=tmp_path / "cache")


@pytest.fixture
def api_warm_up(api_settings: Settings, published: Published) -> ApiWarmUp | None:
    """With a file cache, one download of each file fills it before a test begins."""
    if api_settings.download_cache_dir is None:
        return None

    async def fill(client: Client) -> None:
        for row in (published.demo, published.blob):
            async with client.get(url_of(row)) as response:
                await response.read()
        cache = app_of(client)[DOWNLOAD_CACHE]
        await wait_filled(cache)
        assert cache.total == published.demo.bytes + published.blob.bytes

    return fill


def url_of(row: ArchiveRow) -> str:
    assert row.file_name is not None
    return FILES + row.file_name


async def curl(*args: str) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        "curl", "-sS", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out, err


# --- 200 and HEAD ----------------------------------------------------------------------------


async def test_a_real_archive_downloads_with_every_header(
    api: Client, published: Published
) -> None:
    row = published.demo
    response = await api.get(url_of(row))
    body = await response.read()
    assert response.status == 200
    h = response.headers
    assert h["Content-Type"] == "application/gzip"
    assert "Content-Encoding" not in h
    assert h["Content-Length"] == str(row.bytes) == str(len(body))
    assert h["Content-Disposition"] == f'attachment; filename="{row.file_name}"'
    assert h["ETag"] == f'"{row.sha256}"'
    assert h["Cache-Control"] == "public, max-age=31536000, immutable"
    assert h["Accept-Ranges"] == "bytes"
    assert row.published_at is not None
    assert h["Last-Modified"] == format_http_date(row.published_at)
    assert h["Access-Control-Allow-Origin"] == "*"
    exposed = {x.strip() for x in h["Access-Control-Expose-Headers"].split(",")}
    assert {"ETag", "Content-Length", "Content-Range"} <= exposed
    assert hashlib.sha256(body).hexdigest() == row.sha256
    lines = gzip.decompress(body).decode("utf-8").splitlines()
    assert len(lines) == row.games == 60
    assert all(line.startswith("(;FF[4]GM[4]") for line in lines)


async def test_head_has_the_same_headers_and_no_body(api: Client, published: Published) -> None:
    url = url_of(published.blob)
    get = await api.get(url)
    await get.read()
    head = await api.head(url)
    assert head.status == 200
    assert await head.read() == b""
    volatile = {"Date", "X-Request-ID"}
    assert {k: v for k, v in head.headers.items() if k not in volatile} == {
        k: v for k, v in get.headers.items() if k not in volatile
    }


async def test_a_multi_chunk_file_is_byte_exact(api: Client, published: Published) -> None:
    response = await api.get(url_of(published.blob))
    assert await response.read() == published.data


# --- conditional requests ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    ['"{sha}"', 'W/"{sha}"', '"other", "{sha}"', "*", ' "{sha}" , "x"'],
    ids=["exact", "weak", "list", "star", "spaces"],
)
async def test_if_none_match_gives_304(api: Client, published: Published, header: str) -> None:
    row = published.blob
    for method in ("GET", "HEAD"):
        response = await api.request(
            method, url_of(row), headers={"If-None-Match": header.format(sha=row.sha256)}
        )
        assert response.status == 304, method
        assert await response.read() == b""
        assert response.headers["ETag"] == f'"{row.sha256}"'
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert "Content-Length" not in response.headers or response.headers["Content-Length"] == "0"
        assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_if_none_match_with_other_tags_gives_the_file(
    api: Client, published: Published
) -> None:
    response = await api.get(url_of(published.blob), headers={"If-None-Match": '"x", W/"y"'})
    assert response.status == 200
    assert await response.read() == published.data


async def test_if_modified_since(api: Client, published: Published) -> None:
    row = published.blob
    assert row.published_at is not None
    same = format_http_date(row.published_at)
    before = "Thu, 01 Jan 2026 00:00:00 GMT"
    assert (await api.get(url_of(row), headers={"If-Modified-Since": same})).status == 304
    response = await api.get(url_of(row), headers={"If-Modified-Since": before})
    assert response.status == 200
    await response.read()
    # If-None-Match takes precedence: a non-matching tag means 200 whatever the date says.
    response = await api.get(
        url_of(row), headers={"If-Modified-Since": same, "If-None-Match": '"other"'}
    )
    assert response.status == 200
    await response.read()


async def test_if_match_that_fails_gives_412(api: Client, published: Published) -> None:
    response = await api.get(url_of(published.blob), headers={"If-Match": '"not-it"'})
    assert response.status == 412
    assert (await response.json())["error"] == "precondition_failed"
    ok = await api.get(url_of(published.blob), headers={"If-Match": f'"{published.blob.sha256}"'})
    assert ok.status == 200
    await ok.read()


# --- ranges -----------------------------------------------------------------------------------


async def test_a_range_inside_and_across_chunks_is_byte_exact(
    api: Client, published: Published
) -> None:
    data, row = published.data, published.blob
    start, end = CHUNK_SIZE - 1000, CHUNK_SIZE + 2345  # middle of chunk 0 into chunk 1
    response = await api.get(url_of(row), headers={"Range": f"bytes={start}-{end}"})
    assert response.status == 206
    assert response.headers["Content-Range"] == f"bytes {start}-{end}/{BIG}"
    assert response.headers["Content-Length"] == str(end - start + 1)
    assert response.headers["ETag"] == f'"{row.sha256}"'
    assert await response.read() == data[start : end + 1]


async def test_a_range_starts_at_its_own_chunk(
    api: Client, pool: Pool, published: Published
) -> None:
    """With chunks 0 and 1 gone, a range inside chunks 2-3 is still served: the stream starts
    at seq = start // CHUNK_SIZE and never reads the file from its beginning."""
    row = published.blob
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM archive_chunks WHERE archive_id = $1 AND seq < 2", row.id)
    start = 2 * CHUNK_SIZE + 777
    response = await api.get(url_of(row), headers={"Range": f"bytes={start}-"})
    assert response.status == 206
    assert response.headers["Content-Range"] == f"bytes {start}-{BIG - 1}/{BIG}"
    assert await response.read() == published.data[start:]


@pytest.mark.parametrize(
    ("spec", "first", "last"),
    [
        ("bytes=0-0", 0, 0),
        ("bytes=-100", BIG - 100, BIG - 1),
        (f"bytes={BIG - 1}-", BIG - 1, BIG - 1),
        (f"bytes=10-{BIG * 10}", 10, BIG - 1),
        (f"bytes={CHUNK_SIZE}-{2 * CHUNK_SIZE - 1}", CHUNK_SIZE, 2 * CHUNK_SIZE - 1),
        ("bytes=0-", 0, BIG - 1),
    ],
)
async def test_single_ranges(
    api: Client, published: Published, spec: str, first: int, last: int
) -> None:
    response = await api.get(url_of(published.blob), headers={"Range": spec})
    assert response.status == 206
    assert response.headers["Content-Range"] == f"bytes {first}-{last}/{BIG}"
    assert await response.read() == published.data[first : last + 1]


@pytest.mark.parametrize(
    "spec", [f"bytes={BIG}-", f"bytes={BIG + 5}-{BIG + 9}", "bytes=-0", "bytes=9-3"]
)
async def test_unsatisfiable_ranges_give_416(api: Client, published: Published, spec: str) -> None:
    response = await api.get(url_of(published.blob), headers={"Range": spec})
    assert response.status == 416
    assert response.headers["Content-Range"] == f"bytes */{BIG}"
    assert (await response.json())["error"] == "range_not_satisfiable"


async def test_several_ranges_are_answered_with_the_whole_file(
    api: Client, published: Published
) -> None:
    response = await api.get(url_of(published.blob), headers={"Range": "bytes=0-9,100-199"})
    assert response.status == 200
    assert "Content-Range" not in response.headers
    assert await response.read() == published.data


async def test_if_range(api: Client, published: Published) -> None:
    row = published.blob
    assert row.published_at is not None
    cases = {
        f'"{row.sha256}"': 206,
        format_http_date(row.published_at): 206,
        f'W/"{row.sha256}"': 200,  # weak tags never satisfy If-Range
        '"stale"': 200,
        "Thu, 01 Jan 2026 00:00:00 GMT": 200,
    }
    for value, status in cases.items():
        response = await api.get(url_of(row), headers={"Range": "bytes=5-9", "If-Range": value})
        body = await response.read()
        assert response.status == status, value
        assert body == (published.data[5:10] if status == 206 else published.data)


async def test_head_ignores_range(api: Client, published: Published) -> None:
    response = await api.head(url_of(published.blob), headers={"Range": "bytes=0-9"})
    assert response.status == 200
    assert response.headers["Content-Length"] == str(BIG)
    assert "Content-Range" not in response.headers


# --- the checksum file ------------------------------------------------------------------------


async def test_the_checksum_file(api: Client, published: Published) -> None:
    row = published.demo
    response = await api.get(url_of(row) + ".sha256")
    body = await response.read()
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body == f"{row.sha256}  {row.file_name}\n".encode()
    assert response.headers["Content-Length"] == str(len(body))
    disposition = f'attachment; filename="{row.file_name}.sha256"'
    assert response.headers["Content-Disposition"] == disposition
    etag = response.headers["ETag"]
    assert etag.startswith('"') and etag != f'"{row.sha256}"'
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    again = await api.get(url_of(row) + ".sha256", headers={"If-None-Match": etag})
    assert again.status == 304
    head = await api.head(url_of(row) + ".sha256")
    assert head.status == 200
    assert head.headers["Content-Length"] == str(len(body))


async def test_curl_and_sha256sum_verify_a_download(
    api: Client, published: Published, tmp_path: Path
) -> None:
    row = published.demo
    assert row.file_name is not None
    for suffix in ("", ".sha256"):
        target = tmp_path / (row.file_name + suffix)
        code, _, err = await curl("-f", "-o", str(target), str(api.make_url(url_of(row) + suffix)))
        assert code == 0, err
    check = await asyncio.create_subprocess_exec(
        "sha256sum",
        "-c",
        row.file_name + ".sha256",
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out, _ = await check.communicate()
    assert check.returncode == 0, out
    assert f"{row.file_name}: OK".encode() in out


async def test_curl_ranges_etags_and_dates(
    api: Client, published: Published, tmp_path: Path
) -> None:
    row, data = published.blob, published.data
    url = str(api.make_url(url_of(row)))
    code, body, err = await curl("-f", "-r", f"{CHUNK_SIZE - 10}-{CHUNK_SIZE + 9}", url)
    assert code == 0, err
    assert body == data[CHUNK_SIZE - 10 : CHUNK_SIZE + 10]
    # curl's own conditional download: it saves the ETag, then asks with If-None-Match.
    etag_file = tmp_path / "etag"
    code, _, err = await curl("-f", "--etag-save", str(etag_file), "-o", str(tmp_path / "f"), url)
    assert code == 0, err
    assert etag_file.read_text().strip() == f'"{row.sha256}"'
    code, out, err = await curl(
        "--etag-compare", str(etag_file), "-o", "/dev/null", "-w", "%{http_code}", url
    )
    assert (code, out) == (0, b"304"), err
    # -z with a file: If-Modified-Since from the file's mtime (now, after publication).
    code, out, err = await curl(
        "-z", str(tmp_path / "f"), "-o", "/dev/null", "-w", "%{http_code}", url
    )
    assert (code, out) == (0, b"304"), err
    code, out, _ = await curl("-I", "-w", "%{http_code}", url)
    assert out.endswith(b"200")
    assert f"content-length: {BIG}".encode() in out.lower()


# --- the Parquet companion: served like its archive ---------------------------------------


async def companion_of(pool: Pool, row: ArchiveRow) -> ArchiveRow:
    async with pool.acquire() as conn:
        (summary,) = [
            s for s in await archive_store.manifest_summaries(conn) if s.month == row.month
        ]
        assert summary.parquet is not None
        found = await archive_store.downloadable_archive(conn, summary.parquet.file_name)
    assert found is not None
    return found


async def test_a_companion_downloads_like_its_archive(
    api: Client, pool: Pool, published: Published
) -> None:
    """What DuckDB asks (HEAD, then single and suffix ranges), and what every client gets."""
    companion = await companion_of(pool, published.demo)
    url = url_of(companion)
    whole = await api.get(url)
    data = await whole.read()
    h = whole.headers
    assert whole.status == 200
    assert h["Content-Type"] == "application/vnd.apache.parquet"
    assert h["Content-Length"] == str(companion.bytes) == str(len(data))
    assert h["ETag"] == f'"{companion.sha256}"'
    assert h["Cache-Control"] == "public, max-age=31536000, immutable"
    assert h["Accept-Ranges"] == "bytes"
    assert h["Content-Disposition"] == f'attachment; filename="{companion.file_name}"'
    assert hashlib.sha256(data).hexdigest() == companion.sha256
    assert pq.read_table(io.BytesIO(data)).num_rows == published.demo.games == 60
    head = await api.head(url)
    assert (head.status, await head.read()) == (200, b"")
    assert head.headers["Content-Length"] == str(companion.bytes)
    first = await api.get(url, headers={"Range": "bytes=0-3"})
    assert (first.status, await first.read()) == (206, b"PAR1")
    assert first.headers["Content-Range"] == f"bytes 0-3/{companion.bytes}"
    tail = await api.get(url, headers={"Range": "bytes=-8"})
    assert (tail.status, await tail.read()) == (206, data[-8:])
    assert data[-4:] == b"PAR1"
    matching = await api.get(url, headers={"Range": "bytes=4-9", "If-Range": h["ETag"]})
    assert (matching.status, await matching.read()) == (206, data[4:10])
    other = await api.get(url, headers={"Range": "bytes=4-9", "If-Range": '"other"'})
    assert (other.status, len(await other.read())) == (200, companion.bytes)
    cached = await api.get(url, headers={"If-None-Match": h["ETag"]})
    assert cached.status == 304
    checksum = await api.get(url + ".sha256")
    assert await checksum.text() == f"{companion.sha256}  {companion.file_name}\n"
    mirrored = await api.get("/database/files/" + str(companion.file_name))
    assert await mirrored.read() == data
    index = await (await api.get("/database/files/")).text()
    assert (
        f'href="{companion.file_name}"' in index and f'href="{companion.file_name}.sha256"' in index
    )
    torrent = await api.get(url + ".torrent")
    assert torrent.status == 404, "torrents are the archives'"


# --- what is not served ----------------------------------------------------------------------


async def test_superseded_files_stay_downloadable(
    api: Client, pool: Pool, published: Published
) -> None:
    old = published.blob
    new_data = random_bytes(5000, seed=12)
    new = await publish_bytes(pool, "2026-09", new_data)
    assert new.file_name != old.file_name
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT file_name, state FROM archives WHERE month = '2026-09'")
    states = {r["file_name"]: r["state"] for r in rows}
    assert states == {old.file_name: "superseded", new.file_name: "published"}
    assert await (await api.get(url_of(old))).read() == published.data
    assert await (await api.get(url_of(new))).read() == new_data


async def test_unknown_building_and_failed_files_are_404(
    api: Client, pool: Pool, published: Published
) -> None:
    never = "gomoku-party-2026-08-0123456789abcdef.sgf.gz"
    async with pool.acquire() as conn:
        building = await archive_store.start_building(conn, "2026-10")
        await archive_store.write_chunks(conn, building, 0, [b"x" * 10])
        failed = await archive_store.start_building(conn, "2026-11")
        await archive_store.mark_failed(conn, failed, "boom")
        # Rows not yet published (or failed) have no file name; force one onto each to be
        # sure the state, not only the name, keeps them private.
        await conn.execute(
            "UPDATE archives SET file_name = 'gomoku-party-2026-10-aaaaaaaaaaaaaaaa.sgf.gz', "
            "sha256 = repeat('a', 64), bytes = 10 WHERE id = $1",
            building,
        )
        await conn.execute(
            "UPDATE archives SET file_name = 'gomoku-party-2026-11-bbbbbbbbbbbbbbbb.sgf.gz', "
            "sha256 = repeat('b', 64), bytes = 10 WHERE id = $1",
            failed,
        )
    for name in (
        never,
        "gomoku-party-2026-10-aaaaaaaaaaaaaaaa.sgf.gz",
        "gomoku-party-2026-11-bbbbbbbbbbbbbbbb.sgf.gz",
    ):
        for suffix in ("", ".sha256"):
            for method in ("GET", "HEAD"):
                response = await api.request(method, FILES + name + suffix)
                assert response.status == 404, (name, suffix, method)
                if method == "GET":
                    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
                    assert await response.json() == {
                        "error": "not_found",
                        "message": "no such archive file",
                    }


HOSTILE = [
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "gomoku-party-2026-08-0123456789abcdef.sgf.gz%2F..%2Fx",
    "gomoku-party-2026-08-0123456789abcdef.sgf.gz%00",
    "gomoku-party-2026-08-0123456789ABCDEF.sgf.gz",
    "gomoku-party-2026-13-0123456789abcdef.sgf.gz",
    "gomoku-party-2026-08-0123456789abcdef.sgf.gz.sha256.sha256",
    "gomoku-party-2026-08-0123456789abcdef0.sgf.gz",
    "%20gomoku-party-2026-08-0123456789abcdef.sgf.gz",
    "gomoku-party-2026-08-0123456789abcdef.sgf.gz%0A",
    "%C3%A9.sgf.gz",
    "a" * 4000,
    "gomoku-party-2026-08-" + "0" * 3000 + ".sgf.gz",
    "%2F",
]


@pytest.mark.parametrize("name", HOSTILE, ids=lambda n: n[:40])
async def test_hostile_names_are_404_without_a_query(
    api: Client, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    async def no_query(*args: object) -> None:
        raise AssertionError("a malformed name reached the database")

    monkeypatch.setattr(archive_store, "downloadable_archive", no_query)
    response = await api.get(URL(FILES + name, encoded=True))
    assert response.status == 404
    assert (await response.json())["error"] == "not_found"


async def test_literal_dot_segments_never_escape(api: Client, published: Published) -> None:
    base = str(api.make_url("/"))
    for path in (
        "api/v1/database/files/../../../../etc/passwd",
        "api/v1/database/files/./../files/x",
        "api/v1/database/files//etc/passwd",
    ):
        code, out, err = await curl(
            "--path-as-is", "-o", "/dev/null", "-w", "%{http_code}", base + path
        )
        assert code == 0, err
        assert out == b"404", path


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_other_methods_are_405_with_allow(
    api: Client, published: Published, method: str
) -> None:
    for path in (
        url_of(published.blob),
        url_of(published.blob) + ".sha256",
        "/api/v1/database",
        "/api/v1/database/manifest.json",
        "/database/",
        "/database/profile",
    ):
        response = await api.request(method, path, data=b"{}")
        assert response.status == 405, (method, path)
        assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD"}
        assert json.loads(await response.read())["error"] == "method_not_allowed"
