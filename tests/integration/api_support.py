"""Helpers of the API integration tests: publishing archives (real exports of demo games, or
cheap archives of random bytes written straight through ``archive_store``), a server in a
subprocess started through the real CLI, and process memory readings."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from gomoku_archive.db import archive_store, source
from gomoku_archive.db.archive_store import ArchiveRow, BuiltFile, Counts
from gomoku_archive.db.pool import Pool
from gomoku_archive.demo.games import generate_month
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS
from gomoku_archive.settings import Settings
from gomoku_archive.storage.chunks import CHUNK_SIZE

Client = TestClient[web.Request, web.Application]

ROOT = Path(__file__).resolve().parents[2]
PG_ADMIN_DSN = os.environ.get("TEST_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
"""The same server as conftest.py's (read the same way; conftest is not imported twice)."""
ARTIFACTS = ROOT / "tests" / "artifacts"


def code_block(page: str, block_id: str) -> str:
    """The text of the page's code block ``block_id`` as a browser shows it (its tokens are
    spans of their own: templates/code.html)."""
    found = re.search(rf'<pre id="{block_id}"[^>]*>(.*?)</pre>', page, re.S)
    assert found is not None, f"no code block {block_id} in the page"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


async def publish_demo_month(pool: Pool, month: Month, games: int, *, seed: int = 7) -> ArchiveRow:
    """Insert a month of realistic demo games and publish it with the real export."""
    columns = source.INSERT_COLUMNS
    rows = [tuple(getattr(g, c) for c in columns) for g in generate_month(month, games, seed=seed)]
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", rows)
    result = await export_month(pool, table="games", month=month, force=True)
    assert result.archive is not None
    return result.archive


class RunAppLikeServer(TestServer):
    """aiohttp's TestServer cancels handlers when their client leaves; ``web.run_app`` (what
    ``gomoku-archive serve`` runs) does not. Tests choose which behaviour to face."""

    def __init__(self, app: web.Application, *, handler_cancellation: bool) -> None:
        super().__init__(app)
        self._cancel_handlers = handler_cancellation

    async def _make_runner(self, **kwargs: Any) -> web.BaseRunner:
        kwargs["handler_cancellation"] = self._cancel_handlers
        return web.AppRunner(self.app, **kwargs)


@contextlib.asynccontextmanager
async def serving(
    db_dsn: str,
    pool: Pool,
    *,
    manifest_ttl: float = 3600.0,
    handler_cancellation: bool = False,
    redis_url: str = "redis://127.0.0.1:1/0",
    settings: Settings | None = None,
) -> AsyncIterator[Client]:
    """The real app on a loopback port of its own, closed before the caller's pool. Redis
    points at a closed port unless ``settings`` say otherwise: the public API must not need
    it."""
    from gomoku_archive.web.app import create_app

    settings = settings or Settings(database_url=db_dsn, redis_url=redis_url)
    app = create_app(settings, pool=pool, manifest_ttl=manifest_ttl)
    server = RunAppLikeServer(app, handler_cancellation=handler_cancellation)
    async with TestClient(server) as client:
        yield client


def app_of(client: Client) -> web.Application:
    """The application behind a test client."""
    assert isinstance(client.server, TestServer)
    return client.server.app


def random_bytes(size: int, *, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


async def publish_bytes(pool: Pool, month: str, data: bytes) -> ArchiveRow:
    """Publish ``data`` as ``month``'s archive without generating games: start_building, the
    chunks, publish. The bytes are not gzip, which no transfer test cares about."""
    sha256 = hashlib.sha256(data).hexdigest()
    chunks = [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
    counts = Counts(
        games=1,
        candidate_games=1,
        excluded_games=0,
        exclusions=dict.fromkeys(ALL_REASONS, 0),
        results={t: int(t == "FIVE") for t in ALL_TERMINATIONS},
    )
    built = BuiltFile(
        sha256=sha256,
        bytes=len(data),
        uncompressed_bytes=len(data),
        file_name=archive_file_name(Month.parse(month), sha256),
    )
    async with pool.acquire() as conn:
        archive_id = await archive_store.start_building(conn, month)
        for first in range(0, len(chunks), 16):
            await archive_store.write_chunks(conn, archive_id, first, chunks[first : first + 16])
        _, row = await archive_store.publish(conn, archive_id, month, counts, built)
    return row


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def rss_kib(pid: int) -> int:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


class ServerProcess:
    """``gomoku-archive serve`` in a subprocess, on a free loopback port."""

    def __init__(self, database_url: str, *, extra_env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
            # No drain unless a test asks for one: the stop tests are about what follows it.
            "SHUTDOWN_DRAIN_SECONDS": "0",
            **(extra_env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.signalled = False
        # Output goes to a file, not a pipe: nobody reads a pipe while the server runs, and a
        # full pipe would block the server's logging, and with it the event loop.
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())

    def start(self, *, timeout: float = 20.0) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gomoku_archive.cli.main",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            env=self._env,
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.output = self._read_log()
                raise AssertionError(f"server exited early: {self.output.decode()}")
            address = ("127.0.0.1", self.port)
            with contextlib.suppress(OSError), socket.create_connection(address, 0.2):
                return
            time.sleep(0.05)
        raise AssertionError("server did not start listening")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def terminate(self) -> None:
        """SIGTERM, once: aiohttp turns a second one during the graceful stop into exit 1."""
        assert self.proc is not None
        if not self.signalled and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.signalled = True

    def stop(self) -> int:
        """A graceful stop (SIGTERM) and the exit code."""
        assert self.proc is not None
        self.terminate()
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.output = self._read_log()
        self._log.close()
        return self.proc.returncode

    def log_events(self, event: str) -> list[dict[str, Any]]:
        """The server's JSON log lines of ``event`` so far, in order (read with pread: the
        file's offset is shared with the server, which is still writing)."""
        fd = self._log.fileno()
        found = []
        for line in os.pread(fd, os.fstat(fd).st_size, 0).splitlines():
            if line.startswith(b"{"):
                record = json.loads(line)
                if record.get("event") == event:
                    found.append(record)
        return found

    def _read_log(self) -> bytes:
        self._log.seek(0)
        return self._log.read()


@contextlib.contextmanager
def running_server(database_url: str) -> Iterator[ServerProcess]:
    server = ServerProcess(database_url)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def download_sha256(
    session: aiohttp.ClientSession, url: str, *, read_size: int = 65536
) -> tuple[int, str]:
    """Stream a download, keeping only its hash: (bytes, sha256)."""
    digest = hashlib.sha256()
    total = 0
    async with session.get(url) as response:
        assert response.status == 200, response.status
        async for block in response.content.iter_chunked(read_size):
            digest.update(block)
            total += len(block)
    return total, digest.hexdigest()


async def wait_for(
    predicate: Callable[[], object], *, within: float = 5.0, interval: float = 0.02
) -> None:
    """Poll a zero-argument callable until it returns something true."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(interval)
