"""``gomoku-archive serve`` as an operator runs it: a subprocess, real sockets, JSON access
logs on stdout, one clear line when it cannot start, and a graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys

import aiohttp
import pytest

from gomoku_archive.db.pool import Pool
from tests.integration.api_support import (
    ROOT,
    ServerProcess,
    free_port,
    publish_bytes,
    random_bytes,
)

MIB = 1024 * 1024


def serve(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", "serve", *args],
        env={**os.environ, "DATABASE_URL": database_url, "LOG_FORMAT": "json"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_database_that_is_down_is_one_line_and_exit_3() -> None:
    port = free_port()  # nothing listens there
    result = serve(f"postgresql://postgres@127.0.0.1:{port}/x", "--port", str(free_port()))
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gomoku-archive: error: cannot use the database at ")
    assert "Traceback" not in result.stdout + result.stderr


def test_an_unmigrated_database_says_so(pg_dsn: str) -> None:
    result = serve(pg_dsn, "--port", str(free_port()))
    assert result.returncode == 1
    assert "run `gomoku-archive migrate` first" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_port_in_use_is_one_line(db_dsn: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = serve(db_dsn, "--port", str(port))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"gomoku-archive: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def test_bad_port_arguments_are_refused() -> None:
    result = serve("postgresql://postgres@127.0.0.1:1/x", "--port", "70000")
    assert result.returncode == 2
    assert "port must be 0..65535" in result.stderr


async def test_serves_logs_json_lines_and_stops_gracefully(db_dsn: str, pool: Pool) -> None:
    data = random_bytes(24 * MIB, seed=8)
    row = await publish_bytes(pool, "2026-08", data)
    assert row.file_name is not None
    server = ServerProcess(db_dsn)
    await asyncio.to_thread(server.start)
    try:
        url = f"{server.base}/api/v1/database/files/{row.file_name}"
        async with aiohttp.ClientSession() as session:
            async with session.get(
                f"{server.base}/api/v1/database", headers={"X-Request-ID": "cli-test-1"}
            ) as response:
                assert response.status == 200
            digest = hashlib.sha256()
            async with session.get(url, headers={"X-Request-ID": "cli-test-2"}) as response:
                assert response.status == 200
                async for block in response.content.iter_chunked(64 * 1024):
                    digest.update(block)
                    if response.content.total_bytes > MIB and not server.signalled:
                        server.terminate()  # stop mid-download: the download still completes
                    if server.signalled:
                        await asyncio.sleep(0.002)  # slowly, so the shutdown waits for it
            with pytest.raises(aiohttp.ClientConnectionError):  # no new connections meanwhile
                await session.get(f"{server.base}/healthz")
        assert digest.hexdigest() == row.sha256
    finally:
        code = await asyncio.to_thread(server.stop)
    assert code == 0, server.output.decode()[-3000:]
    events = [json.loads(line) for line in server.output.splitlines() if line.startswith(b"{")]
    assert len(events) == len(server.output.splitlines()), "every stdout line is JSON"
    access = {e["request_id"]: e for e in events if e["event"] == "http_request"}
    manifest, download = access["cli-test-1"], access["cli-test-2"]
    assert manifest["route"] == "/api/v1/database"
    assert manifest["status"] == 200 and manifest["method"] == "GET"
    assert download["route"] == "/api/v1/database/files/{file}"
    assert download["bytes"] == len(data) and download["status"] == 200
    assert "aborted" not in download
    assert isinstance(download["duration_ms"], float)
    assert {"serve_listening", "serve_stopped"} <= {e["event"] for e in events}


async def test_a_graceful_stop_sends_the_last_buffered_bytes(db_dsn: str, pool: Pool) -> None:
    """A download's handler is done once its last write returns, which a client that reads
    slowly lets happen with bytes still queued in the server's transport (the kernel's socket
    buffers being full). The stop must send them before the event loop closes; it used to
    close right away, and the download came up short at its very end (the ~14 KB the test
    above lost now and then).

    Made certain here: clients that read nothing ask for ranges of growing sizes; the small
    ones fit in the kernel's buffers, the large ones wait in their handler, and the ones in
    between (their excess under asyncio's 64 KiB high-water mark) end their handler with bytes
    queued in the process. The server is stopped, and they start reading only 3 s later."""
    data = random_bytes(4 * MIB, seed=9)
    row = await publish_bytes(pool, "2026-08", data)
    server = ServerProcess(db_dsn)
    await asyncio.to_thread(server.start)
    # 32 KiB .. 4 MiB: a loopback socket's send buffer starts at about 1.3 MB (ten 64 KiB
    # segments, doubled), so the sizes just above it are the ones that matter.
    sizes = [n * 32 * 1024 for n in range(1, 129)]
    # Plain sockets that nobody reads until the stop: an asyncio stream would read eagerly into
    # its own buffer, and every handler would finish.
    sockets: dict[int, socket.socket] = {}

    def finished() -> set[int]:
        # pread: the server writes through the same open file; its offset must not move.
        log = os.pread(server._log.fileno(), 4 << 20, 0)
        return {n for n in range(len(sizes)) if f'"request_id": "r{n}"'.encode() in log}

    def read_to_eof(sock: socket.socket) -> bytes:
        sock.settimeout(30)
        parts = []
        while chunk := sock.recv(1 << 20):
            parts.append(chunk)
        return b"".join(parts)

    try:
        for n, size in enumerate(sizes):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(
                f"GET /api/v1/database/files/{row.file_name} HTTP/1.1\r\nHost: x\r\n"
                f"Range: bytes=0-{size - 1}\r\nX-Request-ID: r{n}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            sockets[n] = sock
        await asyncio.sleep(3)  # every handler that can finish without a read has finished
        done = finished()
        for n in set(sockets) - done:  # the ones waiting for a read: not this test's concern
            sockets.pop(n).close()
        assert len(done) > 1, "no handler finished: the sizes miss this machine's buffers"
        assert len(sockets) < len(sizes), "every handler finished: the sizes are too small"
        server.terminate()
        await asyncio.sleep(3)  # a server that does not wait for its buffers has exited now
        short = {}
        for n, sock in sockets.items():
            response = await asyncio.to_thread(read_to_eof, sock)
            body = response.split(b"\r\n\r\n", 1)[1]
            if body != data[: sizes[n]]:
                short[sizes[n]] = sizes[n] - len(body)
    finally:
        for sock in sockets.values():
            sock.close()
        code = await asyncio.to_thread(server.stop)
    assert code == 0, server.output.decode()[-3000:]
    assert short == {}, f"bytes missing, by range size: {short}"


def test_a_cache_directory_that_cannot_be_made_is_named_not_taken_for_the_port(
    db_dsn: str, tmp_path: os.PathLike[str]
) -> None:
    # A path the process cannot make a directory of (as on a read-only root without the
    # cache's volume, where mkdir fails the same way, with another errno): under a file.
    blocker = os.path.join(tmp_path, "a-file")
    with open(blocker, "w") as handle:
        handle.write("x")
    target = os.path.join(blocker, "cache")
    result = subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", "serve", "--port", str(free_port())],
        env={**os.environ, "DATABASE_URL": db_dsn, "DOWNLOAD_CACHE_DIR": target},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"gomoku-archive: error: DOWNLOAD_CACHE_DIR {target} cannot be used: ")
    assert "Not a directory" in line
    assert "cannot listen" not in line


async def test_metrics_on_a_port_of_their_own_and_the_health_check(db_dsn: str) -> None:
    metrics_port = free_port()
    server = ServerProcess(db_dsn, extra_env={"METRICS_PORT": str(metrics_port)})
    await asyncio.to_thread(server.start)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{server.base}/metrics") as response:
                assert response.status == 404, "not on the public port"
            async with session.get(f"http://127.0.0.1:{metrics_port}/metrics") as response:
                assert response.status == 200
                assert "gomoku_http_requests_total" in await response.text()
        env = {**os.environ, "PORT": str(server.port)}
        check = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "gomoku_archive.cli.main", "serve", "--check"],
            env=env, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stderr
    finally:
        assert await asyncio.to_thread(server.stop) == 0
    env = {**os.environ, "PORT": str(server.port)}
    down = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "gomoku_archive.cli.main", "serve", "--check"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert down.returncode == 1
    assert f"http://127.0.0.1:{server.port}/healthz" in down.stderr
