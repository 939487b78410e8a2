"""Credentials that are not ASCII, sent as raw bytes over a real socket (aiohttp's client
refuses to send them): a ``Bearer`` value, a session cookie or a form token that is not valid
UTF-8, or is UTF-8 but not ASCII, is a wrong credential like any other: 401 (no 500, no error
line, no traceback), logged as ``ops_auth_failed``, and counted by the failed sign-in throttle,
which answers 429 after five."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import structlog
from aiohttp.test_utils import TestServer

from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.web.app import create_app
from gomoku_archive.web.ops.auth import FLASH_COOKIE, SESSION_COOKIE

TOKEN = "test-ops-token-of-at-least-32-characters"
ROUTES = [("GET", "/ops/"), ("GET", "/ops/api/status"), ("POST", "/ops/rebuild")]
NOT_ASCII = [
    pytest.param(b"\xff\xfe\x80-not-utf-8", id="not-utf-8"),
    pytest.param("tést-ønly-ütf-8".encode(), id="utf-8-not-ascii"),
    pytest.param(TOKEN.encode() + b"\xe9", id="the-token-then-latin-1"),
]
THROTTLE_LIMIT = 5


@asynccontextmanager
async def ops_server(settings: Settings, pool: Pool) -> AsyncIterator[TestServer]:
    async with TestServer(create_app(settings, pool=pool)) as server:
        yield server


async def exchange(server: TestServer, method: str, path: str, headers: bytes) -> int:
    """One request written by hand (``headers``: raw header lines, each ending in CRLF); the
    response's status."""
    body = b"month=2026-08" if method == "POST" else b""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".encode()
            + headers
            + b"Content-Type: application/x-www-form-urlencoded\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=60)
    finally:
        writer.close()
        await writer.wait_closed()
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert match is not None, answer[:200]
    return int(match.group(1))


def assert_no_error_lines(logs: list[dict[str, object]]) -> None:
    assert [e for e in logs if e.get("log_level") in ("error", "critical")] == [], logs
    assert "Traceback" not in repr(logs)


@pytest.mark.parametrize("value", NOT_ASCII)
@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_bearer_that_is_not_ascii_is_a_counted_401(
    settings: Settings, pool: Pool, method: str, path: str, value: bytes
) -> None:
    header = b"Authorization: Bearer " + value + b"\r\n"
    async with ops_server(settings, pool) as server:
        with structlog.testing.capture_logs() as logs:
            answers = [
                await exchange(server, method, path, header) for _ in range(THROTTLE_LIMIT + 1)
            ]
    assert answers == [401] * THROTTLE_LIMIT + [429]
    failures = [e for e in logs if e["event"] == "ops_auth_failed"]
    assert [e["reason"] for e in failures] == ["wrong_token"] * THROTTLE_LIMIT
    assert [e["event"] for e in logs if e["event"] == "ops_auth_throttled"] == [
        "ops_auth_throttled"
    ]
    assert_no_error_lines(logs)


@pytest.mark.parametrize("value", NOT_ASCII)
@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_session_cookie_that_is_not_ascii_is_a_counted_401(
    settings: Settings, pool: Pool, method: str, path: str, value: bytes
) -> None:
    """A forged session whose signature is not ASCII: refused and counted, as any forgery."""
    cookie = f"Cookie: {SESSION_COOKIE}=v1.1.abc.".encode() + value + b"\r\n"
    async with ops_server(settings, pool) as server:
        with structlog.testing.capture_logs() as logs:
            answers = [
                await exchange(server, method, path, cookie) for _ in range(THROTTLE_LIMIT + 1)
            ]
    assert answers == [401] * THROTTLE_LIMIT + [429]
    failures = [e for e in logs if e["event"] == "ops_auth_failed"]
    assert [e["reason"] for e in failures] == ["bad_session"] * THROTTLE_LIMIT
    assert_no_error_lines(logs)


@pytest.mark.parametrize("value", NOT_ASCII)
async def test_a_flash_cookie_that_is_not_ascii_is_ignored(
    settings: Settings, pool: Pool, value: bytes
) -> None:
    """The one-time message's cookie is signed too; a forged one is dropped, the page shown."""
    headers = (
        f"Authorization: Bearer {TOKEN}\r\nCookie: {FLASH_COOKIE}=e30.".encode() + value + b"\r\n"
    )
    async with ops_server(settings, pool) as server:
        with structlog.testing.capture_logs() as logs:
            assert await exchange(server, "GET", "/ops/", headers) == 200
    assert_no_error_lines(logs)
