"""The bulk files against a real server with published, rebuilt and zero-game months:
``sha256sum -c --ignore-missing`` over downloads, ``wget -i list.txt``, the feed read by
feedparser, the manifest's version history, caching like the manifest's, and the origin rules."""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
from pathlib import Path

import feedparser
import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.http.origin import parse_networks
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from tests.integration.api_support import (
    ROOT,
    Client,
    code_block,
    publish_bytes,
    publish_demo_month,
    random_bytes,
    serving,
)

BASE = "/api/v1/database/"
IDENTITY = {"Accept-Encoding": "identity"}


@pytest.fixture
async def months(pool: Pool) -> None:
    await publish_demo_month(pool, Month(2026, 8), 30)
    await publish_demo_month(pool, Month(2026, 9), 0)  # zero games: listed, no file
    await publish_bytes(pool, "2026-10", random_bytes(70_000, seed=1))
    await asyncio.sleep(0.01)  # distinct publication instants, as real rebuilds have
    await publish_bytes(pool, "2026-10", random_bytes(300_000, seed=2))  # the rebuild


@pytest.fixture
def api_data(months: None) -> None:
    """``api`` serves the months."""


async def run(*argv: str, cwd: Path) -> tuple[int, str]:
    """A command in a subprocess without blocking the loop the server runs on."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await proc.communicate()
    return await proc.wait(), out.decode()


async def manifest(api: Client) -> dict[str, object]:
    response = await api.get(BASE.rstrip("/"))
    document: dict[str, object] = await response.json()
    return document


async def test_version_history_in_the_manifest(api: Client) -> None:
    months = {m["month"]: m for m in (await manifest(api))["months"]}  # type: ignore[attr-defined]
    assert [m for m in months] == ["2026-10", "2026-09", "2026-08"]
    assert months["2026-09"]["previousFiles"] == []
    assert months["2026-08"]["previousFiles"] == []
    (earlier,) = months["2026-10"]["previousFiles"]
    assert earlier["bytes"] == 70_000
    assert earlier["file"] != months["2026-10"]["file"]
    assert earlier["supersededAt"] >= earlier["publishedAt"]
    response = await api.get(earlier["downloadUrl"])
    assert response.status == 200, "an earlier file stays downloadable"
    assert len(await response.read()) == 70_000


async def test_sha256sums_checks_a_folder_of_downloads(api: Client, tmp_path: Path) -> None:
    response = await api.get(BASE + "sha256sums.txt", headers=IDENTITY)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Vary"] == "Accept-Encoding"
    text = await response.text()
    document = await manifest(api)
    current = [m for m in document["months"] if m["file"]]  # type: ignore[attr-defined]
    # Each month's archive, then its Parquet companion (the demo month's: the byte blobs of
    # 2026-10 are no export and have none).
    assert text.splitlines() == [
        line
        for m in current
        for line in [f"{m['sha256']}  {m['file']}"]
        + ([f"{m['parquet']['sha256']}  {m['parquet']['file']}"] if m["parquet"] else [])
    ]
    assert [m["parquet"] is not None for m in current] == [False, True]
    (tmp_path / "sha256sums.txt").write_text(text)
    # One file downloaded of two: --ignore-missing checks what is there.
    first = current[-1]
    (tmp_path / first["file"]).write_bytes(await (await api.get(first["downloadUrl"])).read())
    code, out = await run("sha256sum", "-c", "--ignore-missing", "sha256sums.txt", cwd=tmp_path)
    assert code == 0, out
    assert out.strip() == f"{first['file']}: OK"
    (tmp_path / first["file"]).write_bytes(b"tampered")
    code, out = await run("sha256sum", "-c", "--ignore-missing", "sha256sums.txt", cwd=tmp_path)
    assert code == 1, out


async def test_wget_fetches_the_lists(api: Client, tmp_path: Path) -> None:
    """``list.txt``'s archives and ``parquet.txt``'s companions, then every line of
    ``sha256sums.txt`` checks."""
    response = await api.get(BASE + "list.txt", headers=IDENTITY)
    assert response.status == 200
    assert "Host" in response.headers["Vary"], "without PUBLIC_BASE_URL the origin is the request's"
    urls = (await response.text()).splitlines()
    origin = str(api.make_url("")).rstrip("/")
    assert len(urls) == 2
    assert all(u.startswith(origin + "/api/v1/database/files/gomoku-party-") for u in urls)
    list_url = str(api.make_url(BASE + "list.txt"))
    sums_url = str(api.make_url(BASE + "sha256sums.txt"))
    code, out = await run("wget", "-q", "-O", "list.txt", list_url, cwd=tmp_path)
    assert code == 0, out
    code, out = await run("wget", "-q", "-i", "list.txt", cwd=tmp_path)
    assert code == 0, out
    parquet_url = str(api.make_url(BASE + "parquet.txt"))
    code, out = await run("wget", "-q", "-O", "parquet.txt", parquet_url, cwd=tmp_path)
    assert code == 0, out
    assert len((tmp_path / "parquet.txt").read_text().splitlines()) == 1
    code, out = await run("wget", "-q", "-i", "parquet.txt", cwd=tmp_path)
    assert code == 0, out
    code, out = await run("wget", "-q", "-O", "sha256sums.txt", sums_url, cwd=tmp_path)
    assert code == 0, out
    code, out = await run("sha256sum", "-c", "sha256sums.txt", cwd=tmp_path)
    assert code == 0, out
    assert out.count(": OK") == 3


async def test_the_feed_announces_publications_and_the_rebuild(api: Client) -> None:
    response = await api.get(BASE + "feed.atom")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/atom+xml; charset=utf-8"
    parsed = feedparser.parse(await response.read())
    assert not parsed.bozo, parsed.get("bozo_exception")
    document = await manifest(api)
    october = document["months"][0]  # type: ignore[index]
    titles = [e.title for e in parsed.entries]
    assert titles[0] == "2026-10 rebuilt: 1 game"
    assert sorted(titles[1:]) == ["2026-08: 30 games", "2026-09: 0 games", "2026-10: 1 game"]
    rebuilt = parsed.entries[0]
    assert rebuilt.id == f"tag:gomokuparty.com,2026:archive:{october['sha256']}"
    assert october["previousFiles"][0]["file"] in rebuilt.summary
    assert "games 1 (same)" in rebuilt.summary
    enclosure = next(link for link in rebuilt.links if link.rel == "enclosure")
    assert enclosure.href == str(api.make_url(october["downloadUrl"]))


@pytest.mark.parametrize("name", ["sha256sums.txt", "list.txt", "parquet.txt", "feed.atom"])
async def test_cached_like_the_manifest(api: Client, name: str) -> None:
    plain = await api.get(BASE + name, headers=IDENTITY)
    body = await plain.read()
    etag = plain.headers["ETag"]
    assert plain.headers["Cache-Control"] == "public, max-age=60"
    again = await api.get(BASE + name, headers={**IDENTITY, "If-None-Match": etag})
    assert again.status == 304
    assert again.headers["ETag"] == etag
    zipped = await api.get(BASE + name, headers={"Accept-Encoding": "gzip"}, auto_decompress=False)
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert zipped.headers["ETag"] != etag
    assert gzip.decompress(await zipped.read()) == body
    head = await api.head(BASE + name, headers=IDENTITY)
    assert head.status == 200
    assert head.headers["ETag"] == etag
    assert (await api.post(BASE + name)).status == 405


async def test_public_base_url_and_trusted_proxies(db_dsn: str, pool: Pool, months: None) -> None:
    fixed = Settings(database_url=db_dsn, public_base_url="https://gomokuparty.com")
    async with serving(db_dsn, pool, settings=fixed) as api:
        forged = {"X-Forwarded-Host": "evil.example", "Host": "other.example"}
        response = await api.get(BASE + "list.txt", headers={**IDENTITY, **forged})
        urls = (await response.text()).splitlines()
        assert all(u.startswith("https://gomokuparty.com/api/v1/database/files/") for u in urls)
        assert response.headers["Vary"] == "Accept-Encoding"
        feed = feedparser.parse(await (await api.get(BASE + "feed.atom")).read())
        assert feed.feed.links[0].href == "https://gomokuparty.com/api/v1/database/feed.atom"
    forwarded = {"X-Forwarded-Host": "mirror.example", "X-Forwarded-Proto": "https"}
    async with serving(db_dsn, pool) as api:  # nobody trusted: the headers are ignored
        text = await (await api.get(BASE + "list.txt", headers=forwarded)).text()
        assert "mirror.example" not in text
        assert text.startswith("http://127.0.0.1:")
    trusting = Settings(database_url=db_dsn, trusted_proxies=parse_networks("127.0.0.0/8"))
    async with serving(db_dsn, pool, settings=trusting) as api:
        text = await (await api.get(BASE + "list.txt", headers=forwarded)).text()
        assert text.startswith("https://mirror.example/api/v1/database/files/")


async def test_games_reads_a_downloaded_archive(api: Client, tmp_path: Path) -> None:
    """`gomoku-archive games` over a real export, downloaded from the API, gzip and plain."""
    august = next(m for m in (await manifest(api))["months"] if m["month"] == "2026-08")  # type: ignore[attr-defined]
    data = await (await api.get(august["downloadUrl"])).read()
    (tmp_path / august["file"]).write_bytes(data)
    (tmp_path / "plain.sgf").write_bytes(gzip.decompress(data))
    for name in (august["file"], "plain.sgf"):
        code, out = await run(
            sys.executable, "-m", "gomoku_archive.cli.main", "games", str(tmp_path / name), cwd=ROOT
        )
        assert code == 0, out
        games = [json.loads(line) for line in out.splitlines()]
        assert len(games) == august["games"] == 30
        assert sum(g["termination"] == "FIVE" for g in games) == august["results"]["FIVE"]
        assert all(0 <= x < 15 and 0 <= y < 15 for g in games for x, y in g["moves"])


async def test_the_page_examples_follow_the_origin(api: Client) -> None:
    response = await api.get("/database/")
    assert response.status == 200
    assert "Host" in response.headers["Vary"]
    page = await response.text()
    origin = str(api.make_url("")).rstrip("/")
    assert code_block(page, "wget").startswith(f"wget -N -i {origin}/api/v1/database/list.txt")
    assert "https://gomokuparty.com/api/v1/database/files/" not in page
