"""Hostile HTTP against a real ``gomoku-archive serve``: every method, path tricks, oversized and
duplicate headers, pipelining and 500 idle connections. No 5xx, the server's RSS bounded, and a
bad request logged as one WARNING line without a traceback."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time

from gomoku_archive.db.pool import Pool
from tests.integration.api_support import ServerProcess, publish_bytes, random_bytes, rss_kib

METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "BREW"]
PATHS = [
    "/api/v1/database",
    "/api/v1/database/files/{file}",
    "/api/v1/database/files/{file}.sha256",
    "/api/v1/database/files/../../../../etc/passwd",
    "/api/v1/database/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/api/v1/database/files/gomoku-party-2026-08-%00.sgf.gz",
    "//api//v1//database",
    "/database/?q=" + "x" * 4000,
    "/" + "a/" * 1000,
    "/ops/../api/v1/database",
    "/%ff%fe",
]


def exchange(port: int, raw: bytes, *, timeout: float = 10.0) -> bytes:
    """Send raw bytes (the last request asks for ``Connection: close``), read until the server
    closes or goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(raw)
        chunks = []
        try:
            while block := conn.recv(65536):
                chunks.append(block)
        except TimeoutError:
            pass
    return b"".join(chunks)


def statuses(answer: bytes) -> list[int]:
    """The status of every response in ``answer`` (a body may end right before the next one)."""
    return [int(code) for code in re.findall(rb"HTTP/1\.[01] (\d{3}) ", answer)]


async def test_hostile_requests_never_get_a_5xx(db_dsn: str, pool: Pool) -> None:
    row = await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=1))
    server = ServerProcess(db_dsn)
    server.start()
    seen: list[int] = []
    try:
        rss_before = rss_kib(server.pid)
        for method in METHODS:
            for path in PATHS:
                target = path.format(file=row.file_name)
                request = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                got = statuses(exchange(server.port, request.encode()))
                assert got, (method, target)
                seen += got
        oversized = b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 70_000
        seen += statuses(exchange(server.port, oversized + b"\r\nConnection: close\r\n\r\n"))
        file_path = f"/api/v1/database/files/{row.file_name}"
        duplicated = (
            f"GET {file_path} HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nRange: bytes=5-20\r\n"
            'If-None-Match: "a"\r\nIf-None-Match: "b"\r\nHost: y\r\nConnection: close\r\n\r\n'
        )
        seen += statuses(exchange(server.port, duplicated.encode()))
        # Pipelining: ten requests in one write, ten answers in order on one connection.
        pipelined = b"".join(
            f"GET /api/v1/database HTTP/1.1\r\nHost: x\r\n{'Connection: close' if i == 9 else ''}"
            "\r\n\r\n".encode()
            for i in range(10)
        )
        answers = statuses(exchange(server.port, pipelined))
        assert answers == [200] * 10
        seen += answers
        rss_after = rss_kib(server.pid)
    finally:
        server.stop()
    assert seen
    assert all(status < 500 for status in seen), sorted(set(seen))
    assert (rss_after - rss_before) / 1024 < 64
    lines = [json.loads(x) for x in server.output.decode().splitlines() if x.startswith("{")]
    assert not [x for x in lines if x.get("level") == "error"], "no ERROR line for a bad request"
    assert b"Traceback" not in server.output
    warnings = [x for x in lines if x.get("event") == "http_bad_request"]
    assert warnings, "the oversized header is one WARNING line"
    print(
        f"{len(seen)} hostile requests ({len(METHODS)} methods x {len(PATHS)} paths, oversized "
        f"and duplicate headers, 10 pipelined): statuses {sorted(set(seen))}, 0 5xx, "
        f"{len(warnings)} warning lines, 0 tracebacks, "
        f"RSS +{(rss_after - rss_before) / 1024:.1f} MiB"
    )


async def test_500_idle_connections_do_not_stop_the_service(db_dsn: str) -> None:
    server = ServerProcess(db_dsn)
    server.start()
    idle: list[socket.socket] = []
    try:
        rss_before = rss_kib(server.pid)
        for i in range(500):
            conn = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if i % 2:  # half of them start a request and never finish it
                conn.sendall(b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\n")
            idle.append(conn)
        await asyncio.sleep(0.5)
        started = time.monotonic()
        answer = await asyncio.to_thread(
            exchange, server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        seconds = time.monotonic() - started
        rss_after = rss_kib(server.pid)
    finally:
        for conn in idle:
            conn.close()
        server.stop()
    assert statuses(answer) == [200]
    assert seconds < 5
    growth = (rss_after - rss_before) / 1024
    assert growth < 64
    print(f"500 idle connections: /healthz answered in {seconds:.2f} s, RSS +{growth:.1f} MiB")
