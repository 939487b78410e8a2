"""What sections share: a scratch PostgreSQL database of their own, free ports, a process's
RSS sampled while something runs, and waiting for a server to listen."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg

from gomoku_archive.db.migrate import migrate

ROOT = Path(__file__).resolve().parents[2]
"""The repository (subprocesses run there, so ``-m tests.benchmarks...`` resolves)."""
PG_ADMIN_DSN = os.environ.get("BENCH_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
"""The machine's PostgreSQL (trust auth on loopback); each section makes a database there."""
DB_PREFIX = "gpa_bench_"
"""Leftovers of a killed run are easy to find (and differ from the tests' ``gpa_test_``)."""


def _dsn(name: str) -> str:
    return PG_ADMIN_DSN.rsplit("/", 1)[0] + "/" + name


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def _migrate(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await migrate(conn)
    finally:
        await conn.close()


@contextlib.contextmanager
def scratch_database(section: str, *, migrated: bool = True) -> Iterator[str]:
    """A fresh database for one section (the service's tables migrated unless told otherwise),
    dropped afterwards even when the section fails. Yields its DSN."""
    name = f"{DB_PREFIX}{section}_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        if migrated:
            asyncio.run(_migrate(_dsn(name)))
        yield _dsn(name)
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(port: int, *, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class RssSampler:
    """Samples a process's RSS every ``interval`` seconds in a thread while the ``with`` block
    runs; ``growth`` is the highest sample minus the reading taken on entry."""

    def __init__(self, pid: int, *, interval: float = 0.05) -> None:
        self._pid = pid
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.baseline = 0
        self.peak = 0

    def __enter__(self) -> RssSampler:
        self.baseline = self.peak = rss_bytes(self._pid)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self._pid))

    def _sample(self) -> None:
        while not self._stop.wait(self._interval):
            self.peak = max(self.peak, rss_bytes(self._pid))

    @property
    def growth(self) -> int:
        return self.peak - self.baseline


async def stored_archive(dsn: str, file_name: str) -> bytes:
    """A published file's bytes as the service stores them, checked against its SHA-256."""
    conn = await asyncpg.connect(dsn)
    try:
        row = await conn.fetchrow("SELECT id, sha256 FROM archives WHERE file_name = $1", file_name)
        assert row is not None, file_name
        archive_id, sha256 = row["id"], row["sha256"]
        chunks = await conn.fetch(
            "SELECT data FROM archive_chunks WHERE archive_id = $1 ORDER BY seq", archive_id
        )
    finally:
        await conn.close()
    data = b"".join(c["data"] for c in chunks)
    assert hashlib.sha256(data).hexdigest() == sha256
    return data
