"""The manifest endpoint and its cache against a real PostgreSQL: headers, 304s, gzip, and
freshness (NOTIFY, the TTL fallback, a lost LISTEN connection, a failing database)."""

from __future__ import annotations

import asyncio
import gzip
import json

import aiohttp
import pytest

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.profile.months import Month
from gomoku_archive.web.keys import MANIFEST, METRICS
from tests.integration.api_support import (
    Client,
    app_of,
    publish_bytes,
    publish_demo_month,
    random_bytes,
    serving,
    wait_for,
)

PATHS = ("/api/v1/database", "/api/v1/database/manifest.json")
IDENTITY = {"Accept-Encoding": "identity"}


@pytest.fixture
async def months(pool: Pool) -> None:
    await publish_demo_month(pool, Month(2026, 8), 40)
    await publish_demo_month(pool, Month(2026, 9), 0)  # a zero-game month: listed, no file
    await publish_bytes(pool, "2026-10", random_bytes(1000, seed=5))


@pytest.fixture
def api_data(months: None) -> None:
    """``api`` serves the months."""


async def expected_document(pool: Pool) -> dict[str, object]:
    async with pool.acquire() as conn:
        summaries = await archive_store.manifest_summaries(conn)
    return build_manifest(summaries)


async def test_the_manifest_is_the_published_rows(api: Client, pool: Pool) -> None:
    expected = await expected_document(pool)
    for path in PATHS:
        response = await api.get(path, headers=IDENTITY)
        assert response.status == 200
        h = response.headers
        assert h["Content-Type"] == "application/json; charset=utf-8"
        assert h["Cache-Control"] == "public, max-age=60"
        assert h["Vary"] == "Accept-Encoding"
        assert "Content-Encoding" not in h
        assert h["Access-Control-Allow-Origin"] == "*"
        assert "ETag" in h["Access-Control-Expose-Headers"]
        body = await response.read()
        assert h["Content-Length"] == str(len(body))
        assert json.loads(body) == expected
    document = json.loads(body)
    assert [m["month"] for m in document["months"]] == ["2026-10", "2026-09", "2026-08"]
    assert document["months"][1]["file"] is None
    assert document["totalGames"] == 41


async def test_both_paths_share_one_strong_etag_and_answer_304(api: Client) -> None:
    etags = set()
    for path in PATHS:
        response = await api.get(path, headers=IDENTITY)
        await response.read()
        etags.add(response.headers["ETag"])
    assert len(etags) == 1
    etag = etags.pop()
    assert etag.startswith('"') and etag.endswith('"')
    for path in PATHS:
        for method in ("GET", "HEAD"):
            for header in (etag, f"W/{etag}", f'"x", {etag}', "*"):
                response = await api.request(
                    method, path, headers={**IDENTITY, "If-None-Match": header}
                )
                assert response.status == 304, (path, method, header)
                assert await response.read() == b""
                assert response.headers["ETag"] == etag
                assert response.headers["Cache-Control"] == "public, max-age=60"
                assert response.headers["Vary"] == "Accept-Encoding"
    stale = await api.get(PATHS[0], headers={**IDENTITY, "If-None-Match": '"stale"'})
    assert stale.status == 200


async def test_head_has_the_headers_of_get(api: Client) -> None:
    get = await api.get(PATHS[0], headers=IDENTITY)
    body = await get.read()
    head = await api.head(PATHS[0], headers=IDENTITY)
    assert head.status == 200
    assert await head.read() == b""
    assert head.headers["Content-Length"] == str(len(body))
    assert head.headers["ETag"] == get.headers["ETag"]


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
async def test_the_plain_get_fast_path_answers_what_the_decision_does(
    api: Client, encoding: str
) -> None:
    """A GET without preconditions takes a short cut; a GET whose precondition holds goes
    through the RFC decision. Both must be the same 200."""
    async with aiohttp.ClientSession(auto_decompress=False) as raw:
        url = api.make_url(PATHS[0])
        async with raw.get(url, headers={"Accept-Encoding": encoding}) as fast:
            fast_body, fast_headers = await fast.read(), dict(fast.headers)
        conditional = {"Accept-Encoding": encoding, "If-None-Match": '"not-this-one"'}
        async with raw.get(url, headers=conditional) as decided:
            decided_body, decided_headers = await decided.read(), dict(decided.headers)
    assert fast.status == decided.status == 200
    assert fast_body == decided_body
    for varying in ("Date", "X-Request-ID"):
        fast_headers.pop(varying), decided_headers.pop(varying)
    assert list(fast_headers.items()) == list(decided_headers.items())


async def test_gzip_when_accepted_with_its_own_etag(api: Client) -> None:
    plain = await api.get(PATHS[0], headers=IDENTITY)
    plain_body = await plain.read()
    async with aiohttp.ClientSession(auto_decompress=False) as raw:
        url = api.make_url(PATHS[0])
        async with raw.get(url, headers={"Accept-Encoding": "gzip"}) as zipped:
            zipped_body = await zipped.read()
            assert zipped.status == 200
            assert zipped.headers["Content-Encoding"] == "gzip"
            assert zipped.headers["Vary"] == "Accept-Encoding"
            assert zipped.headers["Content-Length"] == str(len(zipped_body))
            gzip_etag = zipped.headers["ETag"]
        assert gzip.decompress(zipped_body) == plain_body
        assert len(zipped_body) < len(plain_body)
        assert gzip_etag != plain.headers["ETag"]
        async with raw.get(
            url, headers={"Accept-Encoding": "gzip", "If-None-Match": gzip_etag}
        ) as again:
            assert again.status == 304
        for refused in ("gzip;q=0", "br", "identity"):
            async with raw.get(url, headers={"Accept-Encoding": refused}) as response:
                assert "Content-Encoding" not in response.headers, refused
                assert await response.read() == plain_body


async def test_serving_does_not_query_the_database_per_request(
    api: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    real = archive_store.published_archives

    async def counting(conn: object) -> object:
        nonlocal calls
        calls += 1
        return await real(conn)  # type: ignore[arg-type]

    monkeypatch.setattr(archive_store, "published_archives", counting)
    for _ in range(25):
        for path in (*PATHS, "/database/"):
            response = await api.get(path)
            assert response.status == 200
            await response.read()
    assert calls == 0


async def test_a_publication_shows_up_through_notify(api: Client, pool: Pool) -> None:
    """The TTL is an hour here, so only the NOTIFY of the publish can refresh the copy."""
    first = await (await api.get(PATHS[0])).json()
    await publish_bytes(pool, "2026-11", random_bytes(700, seed=9))

    async def months() -> list[str]:
        return [m["month"] for m in (await (await api.get(PATHS[0])).json())["months"]]

    for _ in range(100):
        if (await months())[0] == "2026-11":
            break
        await asyncio.sleep(0.05)
    assert (await months())[0] == "2026-11"
    assert len(first["months"]) == 3
    page = await (await api.get("/database/")).text()  # the page reads the same cached copy
    assert 'data-month="2026-11"' in page


async def test_the_ttl_refreshes_changes_that_sent_no_notify(
    db_dsn: str, pool: Pool, months: None
) -> None:
    async with serving(db_dsn, pool, manifest_ttl=0.2) as api:
        async with pool.acquire() as conn:  # no pg_notify: only the TTL can notice
            await conn.execute(
                "UPDATE archives SET games = games + 1, candidate_games = candidate_games + 1 "
                "WHERE month = '2026-10'"
            )
        app = app_of(api)
        cache = app[MANIFEST]
        await wait_for(lambda: cache.snapshot.document["months"][0]["games"] == 2, within=5)
        document = await (await api.get(PATHS[0])).json()
        assert document["months"][0]["games"] == 2


async def test_a_lost_listen_connection_is_replaced(api: Client, pool: Pool) -> None:
    app = app_of(api)
    cache = app[MANIFEST]
    assert cache.listening

    async def listeners() -> list[int]:
        async with pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        return [r["pid"] for r in rows]

    [old] = await listeners()
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", old)
    for _ in range(100):  # the cache notices, reloads, and LISTENs on a new connection
        if (pids := await listeners()) and old not in pids:
            break
        await asyncio.sleep(0.05)
    assert len(pids) == 1
    assert old not in pids
    assert cache.listening
    await publish_bytes(pool, "2026-12", random_bytes(300, seed=10))
    await wait_for(lambda: cache.snapshot.document["months"][0]["month"] == "2026-12", within=5)


async def test_a_failing_database_keeps_the_last_good_copy(api: Client, pool: Pool) -> None:
    app = app_of(api)
    cache, metrics = app[MANIFEST], app[METRICS]
    before = await api.get(PATHS[0], headers=IDENTITY)
    good = await before.read()
    async with pool.acquire() as conn:
        await conn.execute("ALTER TABLE archives RENAME TO archives_away")
        await conn.execute("SELECT pg_notify('gomoku_archives', 'poke')")
    try:
        errors = metrics.manifest_refreshes.labels("error")
        await wait_for(lambda: errors._value.get() >= 1, within=5)
        assert cache.last_error is not None
        after = await api.get(PATHS[0], headers=IDENTITY)
        assert after.status == 200
        assert await after.read() == good
        assert after.headers["ETag"] == before.headers["ETag"]
        ready = await api.get("/readyz")  # the database itself still answers
        assert ready.status == 200
    finally:
        async with pool.acquire() as conn:
            await conn.execute("ALTER TABLE archives_away RENAME TO archives")
            await conn.execute("SELECT pg_notify('gomoku_archives', 'poke')")
    await wait_for(lambda: cache.last_error is None, within=5)
