"""What sections share: a scratch PostgreSQL database of their own, free ports, a process's
RSS sampled while something runs, and waiting for a server to listen."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
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


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CLOCK_TICK = 1 / _CLOCK_TICKS
"""The kernel's unit of a process's CPU time (/proc/<pid>/stat): less than that reads 0."""
_PARALLEL_WORKER = re.compile(r"parallel worker for PID (\d+)")


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process from /proc/<pid>/stat, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces; the fields after its closing parenthesis don't.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _process_title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


async def postmaster_pid(dsn: str) -> int:
    """The PostgreSQL server's main process: the parent of a backend (the server must run on this
    machine, as the suite's does)."""
    conn = await asyncpg.connect(dsn)
    try:
        backend: int = await conn.fetchval("SELECT pg_backend_pid()")
        return _parent_pid(backend)  # while the backend lives
    finally:
        await conn.close()


def _parent_pid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


class BackendCpu:
    """CPU seconds of the PostgreSQL backends serving ``database`` while the ``with`` block runs:
    the postmaster's children are listed from /proc every ``interval`` seconds, those whose
    process title names the database (``postgres: ... <user> <database> <host> ...``, PostgreSQL's
    default ``update_process_title``) are followed, and each one's utime + stime is read until it
    exits. A backend's last ``interval`` before its exit and one that lives less than
    ``interval`` are missed: a few clock ticks a connection. ``seconds`` is the total over the
    block (backends already running on entry count from there)."""

    def __init__(self, postmaster: int, database: str, *, interval: float = 0.01) -> None:
        self._children = Path(f"/proc/{postmaster}/task/{postmaster}/children")
        self._word = f" {database} "
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._start: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._other: set[int] = set()

    def __enter__(self) -> BackendCpu:
        self._scan(first=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._scan(first=False)

    def _sample(self) -> None:
        while not self._stop.wait(self._interval):
            self._scan(first=False)

    def _scan(self, *, first: bool) -> None:
        try:
            children = [int(p) for p in self._children.read_text().split()]
        except OSError:
            children = []
        for pid in children:
            if pid in self._other:
                continue
            if pid not in self._last:
                if not self._serves_database(pid):
                    continue
                self._start[pid] = 0.0
            seconds = cpu_seconds(pid)
            if seconds is None:
                continue
            if first:
                self._start[pid] = seconds
            self._last[pid] = seconds

    def _serves_database(self, pid: int) -> bool:
        title = _process_title(pid)
        if not title.startswith("postgres: "):
            return False  # just forked: the title is still the postmaster's, look again later
        parallel = _PARALLEL_WORKER.search(title)
        if parallel is not None:
            mine = int(parallel.group(1)) in self._last
        else:
            mine = self._word in title and "autovacuum" not in title
        if not mine:
            self._other.add(pid)
        return mine

    @property
    def seconds(self) -> float:
        return sum(self._last[pid] - self._start[pid] for pid in self._last)

    @property
    def backends(self) -> int:
        return len(self._last)
