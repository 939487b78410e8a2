"""Malformed requests against a real ``gomoku-archive serve``: each is answered by aiohttp's
parser with 400 and logged as one WARNING line without a traceback (anyone can send them, so
they must not flood the error log); ``CONNECT``, whose target is not a path, gets the same
405 as every other method the public routes do not take. Raw sockets, because HTTP clients
refuse to send most of these and treat CONNECT specially."""

from __future__ import annotations

import asyncio
import json
import socket

from tests.integration.api_support import ServerProcess, running_server

BAD_REQUESTS: dict[str, bytes | tuple[bytes, ...]] = {
    "bad request line": b"GET /api/v1/database HTTP/1.1 extra\r\nHost: x\r\n\r\n",
    "bad version": b"GET /api/v1/database HTTP/9.Z\r\nHost: x\r\n\r\n",
    "header without colon": b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n",
    "space before colon": b"GET /api/v1/database HTTP/1.1\r\nHost : x\r\n\r\n",
    "control byte in a header": b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
    "oversized header": b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\nX-Big: "
    + b"a" * 20_000
    + b"\r\n\r\n",
    "oversized request line": b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "two content lengths": b"GET /api/v1/database HTTP/1.1\r\nHost: x\r\n"
    b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "bad chunk size": b"POST /api/v1/database HTTP/1.1\r\nHost: x\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
    # Sent after the first request was answered, so the parser sees it on its own.
    "bad method on a kept-alive connection": (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        b"G\x01T / HTTP/1.1\r\nHost: x\r\n\r\n",
    ),
}
NOT_HTTP = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32))
"""A TLS ClientHello's first bytes: what scanners send to every port. On a connection's first
request aiohttp logs a method that is no token at DEBUG only, as noise; it still gets 400."""


def exchange(port: int, request: bytes | tuple[bytes, ...]) -> bytes:
    """Send ``request`` (its parts a moment apart) and read until the server closes or goes
    quiet; returns the last answer's bytes."""
    parts = request if isinstance(request, tuple) else (request,)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        for part in parts[:-1]:
            conn.sendall(part)
            conn.recv(65536)
        conn.sendall(parts[-1])
        answer = b""
        try:
            while chunk := conn.recv(65536):
                answer += chunk
        except TimeoutError:
            pass
        return answer


def log_lines(server: ServerProcess) -> list[dict[str, object]]:
    lines = []
    for raw in server.output.decode().splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            lines.append({"level": "unparsed", "event": raw})
    return lines


async def test_malformed_requests_are_one_warning_line_each_without_a_traceback(
    db_dsn: str,
) -> None:
    with running_server(db_dsn) as server:
        for name, request in BAD_REQUESTS.items():
            answer = await asyncio.to_thread(exchange, server.port, request)
            assert b" 400 " in answer.split(b"\r\n\r\n")[0], (name, answer[:200])
        answer = await asyncio.to_thread(exchange, server.port, NOT_HTTP)
        assert answer.startswith(b"HTTP/1.0 400 "), answer[:200]
    lines = log_lines(server)
    warnings = [line for line in lines if line.get("event") == "http_bad_request"]
    loud = [line for line in lines if line.get("level") in ("error", "critical", "unparsed")]
    print(
        f"{len(BAD_REQUESTS)} malformed requests: {len(warnings)} warning lines, "
        f"{len(loud)} error lines, {server.output.count(b'Traceback')} tracebacks"
    )
    assert b"Traceback" not in server.output
    assert loud == []
    assert len(warnings) == len(BAD_REQUESTS)
    for line in warnings:
        assert line["level"] == "warning"
        assert line["status"] == 400
        assert isinstance(line["error"], str) and 0 < len(line["error"]) <= 200
        assert "exception" not in line


async def test_connect_is_405_like_every_other_method(db_dsn: str) -> None:
    targets = [b"/api/v1/database", b"example.com:443", b"127.0.0.1:5432", b"/database/"]
    with running_server(db_dsn) as server:
        for target in targets:
            request = b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n\r\n"
            answer = await asyncio.to_thread(exchange, server.port, request)
            head = answer.split(b"\r\n\r\n")[0].decode()
            assert head.startswith("HTTP/1.1 405 "), (target, head)
            headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:])
            assert {m.strip() for m in headers["Allow"].split(",")} == {"GET", "HEAD"}
    print(f"CONNECT to {len(targets)} targets: 405 with Allow: GET,HEAD each time")
    assert b"Traceback" not in server.output
