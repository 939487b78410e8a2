"""Integration fixtures: each test gets its own PostgreSQL database (created and dropped on the
machine's real server) and its own database number on a Redis server that the test run starts
for itself on a private loopback port, so no Redis that other programs use (a running demo,
another project) is ever flushed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager

import asyncpg
import pytest
import redis
from playwright.async_api import Browser, async_playwright

from gomoku_archive.db.migrate import migrate
from gomoku_archive.db.pool import Pool, create_pool
from gomoku_archive.db.source import create_reference_table
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from tests.integration.api_support import Client, serving

PG_ADMIN_DSN = os.environ.get("TEST_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_SERVER = os.environ.get("TEST_REDIS_SERVER", "redis-server")
CHROMIUM = "/usr/bin/chromium"
# Flags for a closed network: no background fetches, no component updates, no sync.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Test databases are named with this prefix, so leftovers of a killed run are easy to find.
DB_PREFIX = "gpa_test_"


def _dsn(dbname: str) -> str:
    return PG_ADMIN_DSN.rsplit("/", 1)[0] + "/" + dbname


@pytest.fixture
async def pg_dsn() -> AsyncIterator[str]:
    """A fresh, empty database for this test."""
    name = DB_PREFIX + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield _dsn(name)
    finally:
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture
async def db_dsn(pg_dsn: str) -> str:
    """A database with the service's tables migrated and the reference games table created."""
    conn = await asyncpg.connect(pg_dsn)
    try:
        await migrate(conn)
        await create_reference_table(conn, "games")
    finally:
        await conn.close()
    return pg_dsn


@pytest.fixture
async def pool(db_dsn: str) -> AsyncIterator[Pool]:
    pool = await create_pool(db_dsn, min_size=1, max_size=5)
    try:
        yield pool
    finally:
        await pool.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class RedisServer:
    """A ``redis-server`` of the caller's own on a loopback port, keeping nothing on disk, that
    a test may stop (``kill``), start again on the same port, or ``pause`` (SIGSTOP: it keeps
    its connections and answers nothing, as a Redis behind a dropped network path)."""

    def __init__(self, workdir: str) -> None:
        binary = shutil.which(REDIS_SERVER)
        if binary is None:
            raise RuntimeError(f"{REDIS_SERVER} is not installed (set TEST_REDIS_SERVER)")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.base = f"redis://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        options = {"bind": "127.0.0.1", "port": str(self.port), "save": "",
                   "appendonly": "no", "dir": self.workdir, "databases": "16"}  # fmt: skip
        args = [self.binary]
        for name, value in options.items():
            args += [f"--{name}", value]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port)
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.exceptions.ConnectionError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise
                    time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a paused one cannot act on SIGTERM
            self.proc.terminate()
            self.proc.wait(10)


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A running ``RedisServer``, stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="gpa-test-redis-") as workdir:
        server = RedisServer(workdir)
        server.start()
        try:
            yield server
        finally:
            server.stop()


@contextmanager
def private_redis() -> Iterator[str]:
    """A ``redis-server`` of the caller's own on a free loopback port, keeping nothing on disk;
    yields its base URL (``redis://127.0.0.1:PORT``) and stops it afterwards."""
    with redis_server() as server:
        yield server.base


@pytest.fixture(scope="session")
def redis_base() -> Iterator[str]:
    """The test run's own Redis server (``TEST_REDIS_SERVER`` names the binary)."""
    with private_redis() as base:
        yield base


@contextmanager
def flushed_redis(url: str) -> Iterator[str]:
    """A Redis database emptied before and after use."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, redis_base: str) -> Iterator[str]:
    """A database number of this test's own on the run's private Redis (tests run one at a
    time), flushed around it."""
    number = 1 + (sum(request.node.nodeid.encode()) % 15)
    with flushed_redis(f"{redis_base}/{number}") as url:
        yield url


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright (which never downloads a browser)."""
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
def settings(db_dsn: str, redis_url: str) -> Settings:
    return Settings(
        database_url=db_dsn,
        redis_url=redis_url,
        export_first_month=Month(2026, 8),
        ops_token="test-ops-token-of-at-least-32-characters",
        log_format="json",
    )


ApiWarmUp = Callable[[Client], Awaitable[None]]


@pytest.fixture
def api_data() -> None:
    """What the database holds before ``api`` serves it: nothing here. A module whose tests need
    rows overrides this fixture, asking for its own (``months``, ``row``, ``big``) or publishing
    them itself."""


@pytest.fixture
def api_settings(db_dsn: str) -> Settings:
    """The settings ``api`` serves with: Redis on a closed port, since the public API must not
    need it. A module overrides it for a download cache, say."""
    return Settings(database_url=db_dsn, redis_url="redis://127.0.0.1:1/0")


@pytest.fixture
def api_warm_up() -> ApiWarmUp | None:
    """Requests ``api`` makes before any test sees it (None: none). A module overrides it to fill
    a cache first, say."""
    return None


@pytest.fixture
async def api(
    db_dsn: str,
    pool: Pool,
    api_data: None,
    api_settings: Settings,
    api_warm_up: ApiWarmUp | None,
) -> AsyncIterator[Client]:
    """The real app on a loopback port of its own, serving the test database once ``api_data``
    is in it, with ``api_settings``, after ``api_warm_up``: the one ``api`` of these tests."""
    async with serving(db_dsn, pool, settings=api_settings) as client:
        if api_warm_up is not None:
            await api_warm_up(client)
        yield client
