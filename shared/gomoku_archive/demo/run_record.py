"""One run of the demo: what it started, in the order it started them, so that ``stop`` can
undo exactly that, whichever step failed or was interrupted."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import redis

from gomoku_archive.demo import DemoFailed
from gomoku_archive.demo.database_setup import contiguous_runs, create_database, prepare
from gomoku_archive.demo.lock import DemoLock
from gomoku_archive.demo.own_servers import remember
from gomoku_archive.demo.postgres_server import EmbeddedPostgres, start_postgres, stop_postgres
from gomoku_archive.demo.processes import ServiceProcess, run_step, start_service, stop_services
from gomoku_archive.demo.redis_server import EmbeddedRedis, start_redis
from gomoku_archive.errors import DatabaseUnavailable
from gomoku_archive.profile.months import Month, closed_months
from gomoku_archive.settings import Settings, mask_url

DATABASE_NAME = "gomoku_archive"
GIVEN_SERVER_HINT = (
    "{name} is set in this shell: if it is an earlier demo's export line, "
    "`unset DATABASE_URL REDIS_URL` and the demo starts servers of its own"
)
WORKER_GRACE_SECONDS = 3
"""The worker's --grace: a demo stopped mid-export should not wait the production 25 s."""
SERVICE_STOP_SECONDS = 10.0
POLL_SECONDS = 0.5


def say(text: str) -> None:
    print(text, flush=True)


@dataclass(kw_only=True)
class DemoRun:
    settings: Settings
    data: Path
    port: int
    ops_token: str
    database_url: str | None
    """DATABASE_URL when the user gave one; else set once the embedded server is up."""
    redis_url: str | None
    environ: Mapping[str, str]
    lock: DemoLock
    env_arguments: str
    """What ``demo --env`` needs to find this demo: `` --data DIR`` unless it is the default."""
    postgres: EmbeddedPostgres | None = None
    owns_postgres: bool = False
    redis: EmbeddedRedis | None = None
    services: list[ServiceProcess] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def logs(self) -> Path:
        return self.data / "logs"

    def start_servers(self) -> None:
        self.logs.mkdir(exist_ok=True)
        if self.database_url is None:
            t0 = time.monotonic()
            self.owns_postgres = True
            self.postgres = start_postgres(self.data)
            created = asyncio.run(
                create_database(self.postgres.database_url("postgres"), DATABASE_NAME)
            )
            self.database_url = self.postgres.database_url(DATABASE_NAME)
            what = "created" if created else "reused"
            if self.postgres.adopted:
                what += f", its server {self.postgres.pid} taken over"
            say(f"PostgreSQL 18 (embedded, {what}): {self.database_url}, {_since(t0)}")
        else:
            say("PostgreSQL: DATABASE_URL (nothing started)")
        if self.redis_url is None:
            t0 = time.monotonic()
            self.redis = start_redis(self.data / "redis", log_file=self.logs / "redis.log")
            self.lock.add_process("Redis", self.redis.process.pid)
            self.redis_url = self.redis.url
            say(f"Redis (private {self.redis.binary}): {self.redis.url}, {_since(t0)}")
        else:
            _require_redis(self.redis_url)
            say("Redis: REDIS_URL (nothing started)")
        self.lock.record(database_url=self.database_url, redis_url=self.redis_url)
        own = {"DATABASE_URL": self.database_url} if self.owns_postgres else {}
        if self.redis is not None:
            own["REDIS_URL"] = self.redis.url
        remember(self.data, own)

    def prepare_games(self, games_per_month: int, now: datetime) -> None:
        """Migrate, then seed every month from the first published one through the current,
        open one that has no games yet (all of them on a first run, none on the next)."""
        assert self.database_url is not None
        first = self.settings.export_first_month
        wanted, month = [], first
        while month <= Month.containing(now):
            wanted.append(month)
            month = month.next()
        try:
            seeded = asyncio.run(prepare(self.database_url, self.settings.games_table))
        except DatabaseUnavailable as exc:
            if self.owns_postgres:
                raise
            hint = GIVEN_SERVER_HINT.format(name="DATABASE_URL")
            raise DemoFailed(f"{exc} ({hint})") from exc
        # Seeding commits in batches, oldest month first: a run stopped midway leaves only its
        # newest month partial, which seeding again completes (it skips rows it has).
        unfinished = self.data / "seeding.unfinished"
        if unfinished.exists() and seeded:
            seeded.discard(max(seeded))
        missing = [m for m in wanted if str(m) not in seeded]
        if not missing:
            say(f"games: already seeded from {first} through {wanted[-1]}")
            return
        unfinished.touch()
        for start, end in contiguous_runs(missing):
            t0 = time.monotonic()
            run_step(
                "seeding",
                [
                    "seed-demo",
                    "--from",
                    str(start),
                    "--to",
                    str(end),
                    "--games-per-month",
                    str(games_per_month),
                ],
                env=self.child_environment(),
                log_file=self.logs / "seed.log",
            )
            say(f"games: seeded {start} through {end}, {games_per_month} a month, {_since(t0)}")
        unfinished.unlink()

    def start_services(self) -> None:
        env = self.child_environment()
        for name, args, log in (
            ("worker", ["worker", "--grace", str(WORKER_GRACE_SECONDS)], "worker.log"),
            ("API", ["serve", "--host", "127.0.0.1", "--port", str(self.port)], "api.log"),
        ):
            service = start_service(name, args, env=env, log_file=self.logs / log)
            self.services.append(service)
            self.lock.add_process(name, service.process.pid)
        say(f"worker and API started (logs in {self.logs})")

    def wait_until_published(self, now: datetime) -> None:
        """Poll the manifest until it lists every closed month, naming each as it appears."""
        expected = {str(m) for m in closed_months(self.settings.export_first_month, now)}
        shown: set[str] = set()
        while True:
            self._check_running()
            listed = {m["month"]: m for m in self._fetch_manifest().get("months", [])}
            for month in sorted(listed.keys() - shown):
                entry = listed[month]
                file = entry.get("file") or "(no games, no file)"
                say(f"published {month}: {file}, {entry.get('games', 0)} games")
                shown.add(month)
            if expected <= shown:
                return
            time.sleep(POLL_SECONDS)

    def print_addresses(self, *, ready_after: float) -> None:
        base = self.base_url
        files = [m for m in self.manifest.get("months", []) if m.get("file")]
        latest = max(files, key=lambda m: str(m["month"])) if files else None
        ga = "gomoku-archive" if shutil.which("gomoku-archive") else _script("gomoku-archive")
        say("")
        say(f"Gomoku Party archive demo, ready in {ready_after:.1f} s. Ctrl-C stops it.")
        say(f"  public page      {base}/database/")
        say(f"  manifest         {base}/api/v1/database")
        if latest is not None:
            say(f"  one download     {base}{latest['downloadUrl']}")
        say(f"  operators        {base}/ops/  (token {self.ops_token})")
        say(f"  data and logs    {self.data}")
        say("Try:")
        if latest is not None:
            file = latest["file"]
            say(f"  curl -fsSO {base}{latest['downloadUrl']} -O {base}{latest['checksumUrl']}")
            say(f"  sha256sum -c {file}.sha256 && {ga} verify {file}")
        say(f"  curl -s -H 'Authorization: Bearer {self.ops_token}' {base}/ops/api/status")
        say(
            "The command line in another shell (jobs, rebuild, manifest, ...) uses this demo after:"
        )
        for line in self.export_lines():
            say(f"  {line}")
        say(f'  (or: eval "$({ga} demo --env{self.env_arguments})")')

    def export_lines(self) -> list[str]:
        """Shell lines that point ``gomoku-archive`` at this demo's servers."""
        assert self.database_url is not None
        assert self.redis_url is not None
        return environment_lines(self.database_url, self.redis_url)

    def watch(self) -> None:
        """Until a signal arrives (the caller's handler raises), or a process dies."""
        while True:
            self._check_running()
            time.sleep(POLL_SECONDS)

    def stop(self) -> None:
        """Stop what was started, newest first: the service's processes, Redis, PostgreSQL;
        then release the data folder."""
        try:
            stop_services(self.services, timeout=SERVICE_STOP_SECONDS)
        finally:
            try:
                if self.redis is not None:
                    self.redis.stop()
            finally:
                try:
                    if self.owns_postgres:  # also when its start was interrupted midway
                        process = None if self.postgres is None else self.postgres.process
                        stop_postgres(self.data, process)
                finally:
                    self.lock.release()

    def child_environment(self) -> dict[str, str]:
        assert self.database_url is not None
        assert self.redis_url is not None
        return {
            **self.environ,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "OPS_TOKEN": self.ops_token,
            "LOG_FORMAT": "json",  # the logs are files
            # No load balancer to drain from: Ctrl-C stops the API at once.
            "SHUTDOWN_DRAIN_SECONDS": "0",
            "SHUTDOWN_GRACE_SECONDS": "2",
        }

    def _check_running(self) -> None:
        for service in self.services:
            if service.exited() is not None:
                raise service.failure()
        if self.redis is not None and self.redis.process.poll() is not None:
            raise DemoFailed(f"Redis exited: see {self.logs / 'redis.log'}")

    def _fetch_manifest(self) -> dict[str, Any]:
        try:
            url = f"{self.base_url}/api/v1/database"  # always http://127.0.0.1
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310
                document: dict[str, Any] = json.load(resp)
        except (urllib.error.URLError, OSError, ValueError):
            return self.manifest  # not listening yet, or busy starting
        self.manifest = document
        return document


def _require_redis(url: str) -> None:
    """A Redis given by ``REDIS_URL`` answers, or the demo stops now, saying what to do."""
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except (redis.exceptions.RedisError, OSError) as exc:
        hint = GIVEN_SERVER_HINT.format(name="REDIS_URL")
        raise DemoFailed(f"cannot reach Redis at {mask_url(url)}: {exc} ({hint})") from exc
    finally:
        client.close()


def environment_lines(database_url: str, redis_url: str) -> list[str]:
    return [
        f"export DATABASE_URL={shlex.quote(database_url)}",
        f"export REDIS_URL={shlex.quote(redis_url)}",
    ]


def _since(t0: float) -> str:
    return f"{time.monotonic() - t0:.1f} s"


def _script(name: str) -> str:
    return str(Path(sys.executable).with_name(name))
