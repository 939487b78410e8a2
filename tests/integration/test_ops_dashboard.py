"""``/ops/`` in the real app (``create_app``) against the real Redis and PostgreSQL: off without
``OPS_TOKEN``, 401 without the token, the dashboard and its JSON, the browser session, and the
rebuild action with its cross-site protections."""

from __future__ import annotations

import dataclasses
import gzip
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
import structlog
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from gomoku_archive.db.pool import Pool
from gomoku_archive.http.origin import parse_networks
from gomoku_archive.jobs.queue_view import QueuedJob
from gomoku_archive.queue.connection import connect
from gomoku_archive.queue.snapshot import HEALTH_CHECK_KEY, read_snapshot
from gomoku_archive.settings import Settings
from gomoku_archive.web.app import create_app

Client = TestClient[web.Request, web.Application]
TOKEN = "test-ops-token-of-at-least-32-characters"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
CSRF_RE = re.compile(r'name="csrf" value="([0-9a-f]+)"')


@asynccontextmanager
async def ops_client(settings: Settings, pool: Pool) -> AsyncIterator[Client]:
    app = create_app(settings, pool=pool)
    async with TestClient(TestServer(app)) as client:
        yield client


async def queued(redis_url: str) -> list[QueuedJob]:
    client = await connect(redis_url)
    try:
        return list((await read_snapshot(client)).queued)
    finally:
        await client.aclose(close_connection_pool=True)


async def sign_in(client: Client) -> str:
    """Sign in through the form; returns the page's CSRF token."""
    response = await client.post("/ops/login", data={"token": TOKEN}, allow_redirects=False)
    assert response.status == 303
    page = await client.get("/ops/")
    assert page.status == 200
    match = CSRF_RE.search(await page.text())
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/ops/"),
        ("GET", "/ops/api/status"),
        ("POST", "/ops/rebuild"),
        ("POST", "/ops/login"),
    ],
)
async def test_ops_is_off_without_a_token(
    settings: Settings, pool: Pool, method: str, path: str
) -> None:
    async with ops_client(replace(settings, ops_token=None), pool) as client:
        response = await client.request(method, path, headers=BEARER)
        assert response.status == 404


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "missing"),
        ({"Authorization": "Bearer not-the-token"}, "wrong_token"),
        ({"Authorization": f"Bearer {TOKEN}x"}, "wrong_token"),
        ({"Cookie": "gomoku_ops_session=v1.1.abc.def"}, "bad_session"),
    ],
)
@pytest.mark.parametrize("path", ["/ops/", "/ops/api/status"])
async def test_ops_refuses_without_the_token(
    settings: Settings, pool: Pool, headers: dict[str, str], reason: str, path: str
) -> None:
    async with ops_client(settings, pool) as client:
        with structlog.testing.capture_logs() as logs:
            response = await client.get(path, headers=headers)
        assert response.status == 401
        body = await response.text()
    assert "months" not in body
    if path.startswith("/ops/api/") or "Authorization" in headers:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    else:
        assert 'action="/ops/login"' in body  # a browser gets the sign-in form
    [line] = [e for e in logs if e["event"] == "ops_auth_failed"]
    assert line["reason"] == reason
    assert line["path"] == path
    assert TOKEN not in repr(logs)


async def test_the_dashboard(settings: Settings, pool: Pool) -> None:
    async with ops_client(settings, pool) as client:
        response = await client.get("/ops/", headers=BEARER)
        assert response.status == 200
        html = await response.text()
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert 'id="months"' in html
    for month in ("2026-08", "2026-09"):
        assert f"<td>{month}</td>" in html
    assert 'state-missing">missing' in html
    assert 'id="no-worker"' in html  # no worker has reported into this Redis database
    assert "Redis unreachable" not in html
    assert html.count("<main>") == 1  # one main landmark (axe: landmark-one-main, region)


async def test_the_dashboard_is_compressed_and_shows_the_health_record_once(
    settings: Settings, pool: Pool
) -> None:
    record = "Dec-02 08:00:00 j_complete=7 j_failed=1 j_retried=2 j_ongoing=0 queued=3"
    client_redis = await connect(settings.redis_url)
    try:
        await client_redis.set(HEALTH_CHECK_KEY, record, ex=60)
    finally:
        await client_redis.aclose(close_connection_pool=True)
    async with ops_client(settings, pool) as client:
        response = await client.get(
            "/ops/", headers={**BEARER, "Accept-Encoding": "gzip"}, auto_decompress=False
        )
        assert response.status == 200
        assert response.headers["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in response.headers["Vary"]
        raw = await response.read()
    html = gzip.decompress(raw).decode()
    assert len(raw) * 3 < len(html)
    health = re.search(r'<p id="health"[^>]*>(.*?)</p>', html, re.S)
    assert health is not None
    shown = re.sub(r"<[^>]+>", "", health.group(1))
    assert "jobs completed 7, failed 1, retried 2, running 0, queued 3" in shown
    assert "j_complete" not in shown  # the record is shown once, as words, not twice


async def test_the_status_json(settings: Settings, pool: Pool) -> None:
    async with ops_client(settings, pool) as client:
        response = await client.get("/ops/api/status", headers=BEARER)
        assert response.status == 200
        document: dict[str, Any] = await response.json()
    assert document["redis"] == {"ok": True, "error": None}
    assert document["database"] == {"ok": True, "error": None}
    assert document["jobs"]["queued"] == []
    months = {m["month"]: m["state"] for m in document["months"]}
    assert months["2026-08"] == "missing"


async def test_sign_in_rebuild_and_sign_out(settings: Settings, pool: Pool) -> None:
    async with ops_client(settings, pool) as client:
        login = await client.post("/ops/login", data={"token": TOKEN}, allow_redirects=False)
        assert login.status == 303
        cookie = login.headers["Set-Cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert "Path=/ops/" in cookie
        assert TOKEN not in cookie
        csrf = await sign_in(client)

        # The first post only asks: a confirmation page that works without JavaScript.
        ask = await client.post("/ops/rebuild", data={"month": "2026-08", "csrf": csrf})
        assert ask.status == 200
        question = await ask.text()
        assert "<h1>Rebuild 2026-08?</h1>" in question
        assert 'name="confirm" value="yes"' in question
        assert 'name="reason" value="" maxlength="200" required' in question
        assert "<main>" in question
        assert await queued(settings.redis_url) == []

        # The form asks why; a confirmation without a reason (or with one that is not plain
        # text) queues nothing and asks again, keeping what was typed.
        for typed, message in [
            ("", "say why, in one line"),
            ("  ", "say why, in one line"),
            ("<i>x</i>\u202e", "direction override"),
            ("y" * 201, "at most 200 characters"),
        ]:
            refused = await client.post(
                "/ops/rebuild",
                data={"month": "2026-08", "csrf": csrf, "confirm": "yes", "reason": typed},
                allow_redirects=False,
            )
            assert refused.status == 400
            again = await refused.text()
            assert message in again and 'id="rebuild-reason"' in again
            assert "<i>x</i>" not in again
        assert await queued(settings.redis_url) == []

        with structlog.testing.capture_logs() as logs:
            rebuild = await client.post(
                "/ops/rebuild",
                data={
                    "month": "2026-08",
                    "csrf": csrf,
                    "confirm": "yes",
                    "reason": " 12 <b>games</b>\r\nscored as wins ",
                },
                allow_redirects=False,
            )
        assert rebuild.status == 303
        assert rebuild.headers["Location"] == "/ops/"
        page = await (await client.get("/ops/")).text()
        [job] = await queued(settings.redis_url)
        assert job.function == "export_month"
        assert job.kwargs == {
            "month": "2026-08",
            "force": True,
            "reason": "12 <b>games</b> scored as wins",
        }
        assert "reason=12 &lt;b&gt;games&lt;/b&gt; scored as wins" in page  # the queued job
        assert job.job_id.startswith("export:2026-08:force:")
        assert f"Rebuild of 2026-08 queued as {job.job_id}." in page
        assert 'id="queued"' in page
        assert job.job_id in page
        assert 'state-queued">queued' in page
        assert [e["job_id"] for e in logs if e["event"] == "ops_rebuild_requested"] == [job.job_id]
        # The message is shown once.
        assert "queued as" not in await (await client.get("/ops/")).text()

        # A second click while the first rebuild waits does not queue a second one.
        again = await client.post(
            "/ops/rebuild",
            data={"month": "2026-08", "csrf": csrf, "confirm": "yes", "reason": "again"},
        )
        assert "was already queued" in await again.text()
        assert len(await queued(settings.redis_url)) == 1

        out = await client.post("/ops/logout", data={"csrf": csrf}, allow_redirects=False)
        assert out.status == 303
        assert (await client.get("/ops/")).status == 401


async def test_a_wrong_token_in_the_form_is_refused_and_logged(
    settings: Settings, pool: Pool
) -> None:
    async with ops_client(settings, pool) as client:
        with structlog.testing.capture_logs() as logs:
            response = await client.post("/ops/login", data={"token": "guess"})
        assert response.status == 401
        assert "Set-Cookie" not in response.headers
    assert [e["reason"] for e in logs if e["event"] == "ops_auth_failed"] == ["wrong_token"]
    assert "guess" not in repr(logs)


async def test_repeated_wrong_tokens_are_slowed_down(settings: Settings, pool: Pool) -> None:
    """Five wrong tokens a minute from one client, by form or by bearer header: the next wrong
    one gets 429 with Retry-After. The right token and a valid session are never refused."""
    async with ops_client(settings, pool) as client:
        session_csrf = await sign_in(client)
        assert session_csrf
        for attempt in range(5):
            guess = {"token": f"guess-{attempt}"}
            assert (await client.post("/ops/login", data=guess)).status == 401
        refused = await client.post("/ops/login", data={"token": "guess-5"})
        assert refused.status == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        wrong_bearer = await client.get(
            "/ops/api/status", headers={"Authorization": "Bearer guess-6"}
        )
        assert wrong_bearer.status == 429
        assert (await wrong_bearer.json())["error"] == "too_many_requests"
        # The operators are not locked out by someone else's guesses.
        assert (await client.get("/ops/")).status == 200, "a valid session still gets in"
        right = await client.get("/ops/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status == 200
        signed_in = await client.post("/ops/login", data={"token": TOKEN}, allow_redirects=False)
        assert signed_in.status == 303


async def test_behind_a_trusted_proxy_each_client_has_its_own_count(
    settings: Settings, pool: Pool
) -> None:
    """All clients share the proxy's address; the throttle counts the forwarded one."""
    behind = dataclasses.replace(settings, trusted_proxies=parse_networks("127.0.0.1, ::1"))
    async with ops_client(behind, pool) as client:
        guesser = {"X-Forwarded-For": "198.51.100.66"}
        for attempt in range(6):
            await client.post("/ops/login", data={"token": f"guess-{attempt}"}, headers=guesser)
        assert (await client.post("/ops/login", data={"token": "x"}, headers=guesser)).status == 429
        other = {"X-Forwarded-For": "203.0.113.5"}
        assert (await client.post("/ops/login", data={"token": "y"}, headers=other)).status == 401
    async with ops_client(settings, pool) as client:
        # Not a trusted proxy: the header is a claim, and the peer's address is counted.
        for attempt in range(5):
            spoofed = {"X-Forwarded-For": f"192.0.2.{attempt}"}
            await client.post("/ops/login", data={"token": f"g{attempt}"}, headers=spoofed)
        fresh = {"X-Forwarded-For": "192.0.2.99"}
        assert (await client.post("/ops/login", data={"token": "z"}, headers=fresh)).status == 429


@pytest.mark.parametrize(
    ("headers", "send_csrf"),
    [
        ({}, False),  # no form token
        ({}, "0" * 64),  # a wrong form token
        ({}, "\u00e9"),  # one that is not ASCII (compare_digest refuses such a str)
        ({"Origin": "https://evil.example"}, True),
        ({"Origin": "null"}, True),
        ({"Sec-Fetch-Site": "cross-site"}, True),
        ({"Sec-Fetch-Site": "same-site"}, True),
    ],
)
async def test_rebuild_refuses_cross_site_requests(
    settings: Settings, pool: Pool, headers: dict[str, str], send_csrf: bool | str
) -> None:
    async with ops_client(settings, pool) as client:
        csrf = await sign_in(client)
        data = {"month": "2026-08"}
        if send_csrf:
            data["csrf"] = csrf if send_csrf is True else send_csrf
        with structlog.testing.capture_logs() as logs:
            response = await client.post(
                "/ops/rebuild", data=data, headers=headers, allow_redirects=False
            )
        assert response.status == 403
    assert await queued(settings.redis_url) == []
    assert [e["event"] for e in logs if e["event"].startswith("ops_")] == ["ops_csrf_rejected"]


async def test_sign_in_refuses_cross_site_posts(settings: Settings, pool: Pool) -> None:
    async with ops_client(settings, pool) as client:
        response = await client.post(
            "/ops/login", data={"token": TOKEN}, headers={"Origin": "https://evil.example"}
        )
        assert response.status == 403
        assert "Set-Cookie" not in response.headers


async def test_rebuild_for_api_clients(settings: Settings, pool: Pool) -> None:
    async with ops_client(settings, pool) as client:
        ok = await client.post("/ops/rebuild", data={"month": "2026-09"}, headers=BEARER)
        assert ok.status == 202
        body = await ok.json()
        assert body["result"] == "queued"
        assert body["jobId"].startswith("export:2026-09:force:")
        assert body["alreadyQueued"] is False
        assert body["reason"] is None  # scripts may leave it out, as `rebuild` may
        for month, message in [
            ("2026-07", "before the first published month"),
            ("2099-01", "not closed yet"),
            ("2026-9", "month must look like"),
        ]:
            bad = await client.post("/ops/rebuild", data={"month": month}, headers=BEARER)
            assert bad.status == 400
            assert message in (await bad.json())["message"]
        missing = await client.post("/ops/rebuild", headers=BEARER)
        assert missing.status == 400
        too_long = {"month": "2026-10", "reason": "z" * 201}
        refused = await client.post("/ops/rebuild", data=too_long, headers=BEARER)
        assert refused.status == 400
        assert (await refused.json())["error"] == "invalid_reason"
        why = {"month": "2026-10", "reason": "late games"}
        with_reason = await (await client.post("/ops/rebuild", data=why, headers=BEARER)).json()
        assert with_reason["reason"] == "late games"
    jobs = {j.job_id: j.kwargs for j in await queued(settings.redis_url)}
    assert jobs == {
        body["jobId"]: {"month": "2026-09", "force": True},
        with_reason["jobId"]: {"month": "2026-10", "force": True, "reason": "late games"},
    }


async def test_the_dashboard_without_redis(settings: Settings, pool: Pool) -> None:
    down = replace(settings, redis_url="redis://127.0.0.1:1/0")
    async with ops_client(down, pool) as client:
        page = await client.get("/ops/", headers=BEARER)
        assert page.status == 200
        html = await page.text()
        assert 'id="redis-down"' in html
        notice = re.search(r'<p[^>]*id="redis-down"[^>]*>(.*?)</p>', html, re.S)
        assert notice is not None
        assert ".." not in notice.group(1)  # the error's own full stop is not doubled
        assert 'id="months"' in html
        assert 'state-missing">missing' in html
        status = await (await client.get("/ops/api/status", headers=BEARER)).json()
        assert status["redis"]["ok"] is False
        assert "cannot reach Redis" in status["redis"]["error"]
        assert status["months"]
        rebuild = await client.post("/ops/rebuild", data={"month": "2026-08"}, headers=BEARER)
        assert rebuild.status == 503
        # The public API does not notice.
        assert (await client.get("/api/v1/database")).status == 200
