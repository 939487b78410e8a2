"""The service around the data: probes, metrics, request ids, error bodies, CORS, the OpenAPI
document, and behaviour while PostgreSQL refuses connections (Redis is never needed)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gomoku_archive.db import archive_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from tests.integration.api_support import (
    PG_ADMIN_DSN,
    Client,
    publish_bytes,
    random_bytes,
)

FILES = "/api/v1/database/files/"


@pytest.fixture
async def row(pool: Pool) -> ArchiveRow:
    return await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=21))


@pytest.fixture
def api_data(row: ArchiveRow) -> None:
    """``api`` serves the row."""


async def admin(*statements: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[s.name, tuple(sorted(s.labels.items()))] = s.value
    return found


async def test_probes(api: Client) -> None:
    health = await api.get("/healthz")
    assert health.status == 200
    assert await health.json() == {"status": "ok"}
    ready = await api.get("/readyz")
    assert ready.status == 200
    body = await ready.json()
    assert body["status"] == "ready"
    assert body["database"] == "ok"
    assert body["manifestListening"] is True
    assert ready.headers["Cache-Control"] == "no-store"


async def test_metrics(api: Client, row: ArchiveRow) -> None:
    assert row.file_name is not None
    for _ in range(3):
        await (await api.get(FILES + row.file_name)).read()
    not_found = await (await api.get(FILES + "nope")).read()
    await (await api.get("/api/v1/database")).read()
    response = await api.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    found = samples(await response.text())
    route = ("route", "/api/v1/database/files/{file}")
    assert found["gomoku_http_requests_total", (("method", "GET"), route, ("status", "200"))] == 3
    assert found["gomoku_http_requests_total", (("method", "GET"), route, ("status", "404"))] == 1
    assert found["gomoku_http_response_body_bytes_total", (route,)] == 3 * 300_000 + len(not_found)
    assert found["gomoku_http_request_duration_seconds_count", (route,)] == 4
    assert found["gomoku_downloads_in_flight", ()] == 0
    assert found["gomoku_published_archives", ()] == 1
    assert found["gomoku_manifest_refreshes_total", (("outcome", "ok"),)] >= 1
    assert ("gomoku_manifest_age_seconds", ()) in found


async def test_request_ids_are_honoured_or_made(api: Client) -> None:
    mine = await api.get("/healthz", headers={"X-Request-ID": "trace-42.a:b"})
    assert mine.headers["X-Request-ID"] == "trace-42.a:b"
    for hostile in ("x" * 200, "a b", "<script>", ""):
        made = await api.get("/healthz", headers={"X-Request-ID": hostile})
        assert made.headers["X-Request-ID"] != hostile
        assert len(made.headers["X-Request-ID"]) == 32
    fresh = {(await api.get("/healthz")).headers["X-Request-ID"] for _ in range(3)}
    assert len(fresh) == 3


async def test_unknown_routes_are_json_404s_with_cors_on_the_api(api: Client) -> None:
    response = await api.get("/api/v1/nothing")
    assert response.status == 404
    assert await response.json() == {"error": "not_found", "message": "no such resource"}
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    page = await api.get("/nothing")
    assert page.status == 404
    assert "Access-Control-Allow-Origin" not in page.headers


async def test_pages_are_cacheable_html_without_scripts(api: Client) -> None:
    for path, max_age in (("/database/", 60), ("/database/profile", 3600)):
        page = await api.get(path)
        assert page.status == 200
        body = await page.read()
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        assert page.headers["Cache-Control"] == f"public, max-age={max_age}"
        assert "script-src" not in page.headers["Content-Security-Policy"]
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        assert b"<script" not in body
        etag = page.headers["ETag"]
        again = await api.get(path, headers={"If-None-Match": etag})
        assert again.status == 304
        assert again.headers["ETag"] == etag
        head = await api.head(path)
        assert head.headers["Content-Length"] == page.headers["Content-Length"]
        # Sent gzip-coded to clients that accept it (aiohttp's client does), like the manifest.
        assert page.headers["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in page.headers["Vary"]
        plain = await api.get(path, headers={"Accept-Encoding": "identity"})
        assert "Content-Encoding" not in plain.headers
        assert await plain.read() == body
        assert plain.headers["ETag"] != etag


async def test_database_redirect(api: Client) -> None:
    response = await api.get("/database", allow_redirects=False)
    assert response.status == 301
    assert response.headers["Location"] == "/database/"


BROWSER = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "*/*;q=0.8"
}
NOT_FOUND = {"error": "not_found", "message": "no such resource"}


async def test_errors_are_pages_for_browsers_and_json_for_api_clients(api: Client) -> None:
    for path in ("/nothing", "/api/v1/nothing", FILES + "nope", "/database/nothing"):
        page = await api.get(path, headers=BROWSER)
        assert page.status == 404
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        assert page.headers["Vary"] == "Accept"
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        html = await page.text()
        assert '<h1 id="error" data-status="404">Not Found</h1>' in html
        assert 'href="/database/"' in html and "<script" not in html
        for accept in ("*/*", "application/json", "application/json, text/html;q=0.5"):
            plain = await api.get(path, headers={"Accept": accept})
            assert plain.status == 404
            assert plain.headers["Vary"] == "Accept"
            assert (await plain.json())["error"] == "not_found"
    refused = await api.post("/database/", headers=BROWSER)
    assert refused.status == 405
    assert refused.headers["Allow"] == "GET,HEAD"
    assert "Method Not Allowed" in await refused.text()


async def test_root_sends_browsers_to_the_database_page(api: Client) -> None:
    for method in ("GET", "HEAD"):
        response = await api.request(method, "/", headers=BROWSER, allow_redirects=False)
        assert response.status == 302
        assert response.headers["Location"] == "/database/"
        assert response.headers["Vary"] == "Accept"
    followed = await api.get("/", headers=BROWSER)
    assert followed.status == 200 and followed.url.path == "/database/"
    for accept in ("*/*", "application/json"):
        response = await api.get("/", headers={"Accept": accept}, allow_redirects=False)
        assert response.status == 404
        assert await response.json() == NOT_FOUND
    bare = await api.get("/", skip_auto_headers=["Accept"], allow_redirects=False)
    assert bare.status == 404
    assert await bare.json() == NOT_FOUND
    posted = await api.post("/", headers=BROWSER, allow_redirects=False)
    # Only a visit is redirected; / is a route like the others, so another method is 405.
    assert posted.status == 405 and posted.headers["Allow"] == "GET,HEAD"


async def test_an_unexpected_error_is_a_500_without_internals(
    api: Client, row: ArchiveRow, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise RuntimeError("secret table layout /etc/internal")

    monkeypatch.setattr(archive_store, "downloadable_archive", broken)
    assert row.file_name is not None
    response = await api.get(FILES + row.file_name, headers={"X-Request-ID": "boom-1"})
    assert response.status == 500
    text = await response.text()
    assert "secret" not in text
    assert await response.json() == {"error": "internal_error", "message": "internal error"}
    assert response.headers["X-Request-ID"] == "boom-1"
    page = await api.get(FILES + row.file_name, headers=BROWSER)
    assert page.status == 500
    text = await page.text()
    assert "Internal Server Error" in text and "secret" not in text


async def test_the_openapi_document_is_served(api: Client) -> None:
    response = await api.get("/api/v1/openapi.json")
    assert response.status == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    document = await response.json()
    assert document["openapi"].startswith("3.1")
    assert "/api/v1/database/files/{file}" in document["paths"]


async def test_while_postgresql_refuses_connections(
    api: Client, pool: Pool, row: ArchiveRow
) -> None:
    """Cached data keeps being served, the probes tell the truth, database reads are 503s."""
    assert row.file_name is not None
    async with pool.acquire() as conn:
        database = await conn.fetchval("SELECT current_database()")
    await admin(
        f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false',
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'",
    )
    await asyncio.sleep(0.2)
    try:
        manifest = await api.get("/api/v1/database")
        assert manifest.status == 200
        assert (await api.get("/database/")).status == 200
        assert (await api.get("/healthz")).status == 200
        ready = await api.get("/readyz")
        assert ready.status == 503
        assert (await ready.json())["database"] == "unreachable"
        download = await api.get(FILES + row.file_name)
        assert download.status == 503
        assert download.headers["Retry-After"] == "5"
        assert await download.json() == {
            "error": "unavailable",
            "message": "the archive database is unavailable; try again shortly",
        }
    finally:
        await admin(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
    # And everything comes back without a restart.
    for _ in range(50):
        if (await api.get("/readyz")).status == 200:
            break
        await asyncio.sleep(0.1)
    assert (await api.get("/readyz")).status == 200
    assert (await api.get(FILES + row.file_name)).status == 200
