"""Helpers for the worker's integration tests: seeding months with demo games, a job ``ctx`` like
the worker's, worker subprocesses, and polling."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.db.pool import Pool
from gomoku_archive.demo.games import generate_month
from gomoku_archive.demo.rows import SourceGame
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import connect
from gomoku_archive.settings import Settings
from gomoku_archive.worker import context

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]


def last_closed_month() -> Month:
    """The newest month a real-clock worker exports today."""
    return Month.containing(datetime.now(UTC)).previous()


@functools.cache
def _demo_games(month: Month, games: int) -> tuple[SourceGame, ...]:
    return tuple(generate_month(month, games, seed=11))


def _row(game: SourceGame, game_id: uuid.UUID) -> tuple[Any, ...]:
    values = {c: getattr(game, c) for c in source.INSERT_COLUMNS}
    values["id"] = game_id
    # A plain connection (no jsonb codec) takes JSON text for jsonb in COPY.
    values["moves"] = json.dumps(values["moves"])
    return tuple(values[c] for c in source.INSERT_COLUMNS)


async def seed_month(dsn: str, month: Month, games: int, *, copies: int = 1) -> int:
    """Insert ``games`` demo games of ``month`` (plus the demo's out-of-scope and broken rows),
    ``copies`` times over under new ids: the export's work grows with the copies while the
    slow part, playing the demo games, is done once per test session. Returns the candidates."""
    demo = _demo_games(month, games)
    rows = [_row(g, g.id if copy == 0 else uuid.uuid4()) for copy in range(copies) for g in demo]
    conn = await asyncpg.connect(dsn)
    try:
        await source.insert_games(conn, "games", rows)
    finally:
        await conn.close()
    return copies * sum(g.in_scope for g in demo)


async def job_context(
    settings: Settings, pool: Pool, *, now: datetime, job_id: str = "", job_try: int = 1
) -> dict[str, Any]:
    """A ctx like the worker's (arq's Redis pool included; close it with ``close_context``)."""
    ctx = context.new_context(settings, clock=lambda: now, worker="test-host:1")
    ctx[context.POOL] = pool
    ctx["redis"] = await connect(settings.redis_url)
    ctx["job_id"] = job_id
    ctx["job_try"] = job_try
    return ctx


async def close_context(ctx: dict[str, Any]) -> None:
    await ctx["redis"].aclose(close_connection_pool=True)


async def wait_until(
    check: Callable[[], Awaitable[T]], *, seconds: float, what: str, every: float = 0.1
) -> T:
    """Poll ``check`` until it returns something truthy; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        await asyncio.sleep(every)


async def archive_states(dsn: str) -> list[tuple[str, str]]:
    """(month, state) of every archive row (not the Parquet companions), in id order."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT month, state FROM archives WHERE companion_of IS NULL ORDER BY id"
        )
    finally:
        await conn.close()
    return [(r["month"], r["state"]) for r in rows]


def cli_env(
    *, database_url: str, redis_url: str, first_month: Month, **extra: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "OPS_", "GAMES_"))}
    env |= {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "EXPORT_FIRST_MONTH": str(first_month),
        "LOG_FORMAT": "json",
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class WorkerProcess:
    """``gomoku-archive worker`` in a subprocess, its JSON log lines in a file."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        *args: str,
        module: str = "gomoku_archive.cli.main",
    ) -> None:
        """``module``: what ``python -m`` runs with ``worker ...`` (a test's wrapper of the
        command line, such as ``tests.integration.read_hook``)."""
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, "worker", *args],
            env=env,
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        found = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and (name is None or event.get("event") == name):
                found.append(event)
        return found

    def signal(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    def wait(self, seconds: float) -> int:
        return self.process.wait(timeout=seconds)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def workers(*processes: WorkerProcess) -> Iterator[tuple[WorkerProcess, ...]]:
    """Stop (SIGTERM, then SIGKILL) every worker on the way out, whatever the test did."""
    try:
        yield processes
    finally:
        for process in processes:
            process.stop()
