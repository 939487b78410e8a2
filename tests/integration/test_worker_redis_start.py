"""A worker started while Redis is away, as a real ``gomoku-archive worker`` process: it waits
(one ``worker_waiting_for_redis`` line every 10 s, never more often), ``worker --check`` passes
all the while, it starts and runs a job once Redis answers, and SIGTERM while it waits ends it
at once with exit 0. Redis is a server of the test's own: not started yet when the worker
starts (and started later on its port), or started and paused (SIGSTOP: it accepts connections
and answers nothing). A Redis that answers and refuses the worker is a setting to fix: exit 3
at once. Each test's worker and check share a temporary directory (``TMPDIR``), as a pod's
containers share their /tmp."""

from __future__ import annotations

import asyncio
import itertools
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import WORKER_COMMAND_SECONDS, connect
from gomoku_archive.worker.redis_wait import WAIT_LINE_SECONDS
from tests.integration.conftest import RedisServer
from tests.integration.worker_support import WorkerProcess, cli_env, run_cli, workers

WAIT_SECONDS = 25.0
"""How long the tests keep Redis away: long enough for three wait lines (at 0, 10 and 20 s)."""
PROBE_MAX_AGE = 15
"""The tests' probe age (the chart's is 60 s): above a try held by a silent Redis (5 s)."""
TRY_SECONDS = WORKER_COMMAND_SECONDS + 1.0
"""The longest gap between two tries: a PING a paused Redis never answers, then 1 s."""


def env_for(redis_url: str, db_dsn: str, tmp: Path) -> dict[str, str]:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=Month(2026, 8))
    return env | {"TMPDIR": str(tmp)}


def check(env: dict[str, str]) -> tuple[int, str]:
    done = run_cli("worker", "--check", "--max-age", str(PROBE_MAX_AGE), env=env, timeout=30)
    return done.returncode, done.stdout + done.stderr


def wait_for_event(worker: WorkerProcess, name: str, seconds: float) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while not worker.events(name):
        assert worker.process.poll() is None, worker.output()[-3000:]
        assert time.monotonic() < deadline, f"no {name} in {seconds} s: {worker.output()[-3000:]}"
        time.sleep(0.2)
    return worker.events(name)[0]


@contextmanager
def unstarted_redis() -> Iterator[RedisServer]:
    """A Redis port of the test's own with nothing listening on it yet; ``start()`` starts it."""
    with tempfile.TemporaryDirectory(prefix="gpa-test-redis-") as workdir:
        server = RedisServer(workdir)
        try:
            yield server
        finally:
            server.stop()


async def _run_a_job(redis_url: str) -> dict[str, object]:
    """Queue a job any worker runs at once (a mirror job without a bucket answers "skipped")
    and wait for its result: the worker takes jobs."""
    client = await connect(redis_url, within_seconds=5)
    try:
        job = await client.enqueue_job("mirror_archive", 1, _job_id=f"probe-{time.time_ns()}")
        assert job is not None
        result: dict[str, object] = await job.result(timeout=60, poll_delay=0.2)
        return result
    finally:
        await client.aclose(close_connection_pool=True)


@pytest.mark.parametrize("outage", ["not started", "paused"])
def test_a_worker_started_without_redis_waits_and_starts_when_it_answers(
    db_dsn: str, tmp_path: Path, outage: str
) -> None:
    with unstarted_redis() as server:
        if outage == "paused":
            server.start()
            server.pause()
        redis_url = f"{server.base}/0"
        env = env_for(redis_url, db_dsn, tmp_path)
        with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
            wait_for_event(worker, "worker_waiting_for_redis", 60)
            began = time.monotonic()
            checks = []
            while time.monotonic() - began < WAIT_SECONDS:
                code, out = check(env)
                checks.append(code)
                assert code == 0, f"{out}\n{worker.output()[-3000:]}"
                assert "Redis has not answered for" in out, out
                time.sleep(2)
            assert worker.process.poll() is None, "still waiting, not exited"
            assert not worker.events("worker_started"), "nothing starts without Redis"
            if outage == "paused":
                server.resume()
            else:
                server.start()
            wait_for_event(worker, "worker_started", 60)
            assert asyncio.run(_run_a_job(redis_url))["outcome"] == "skipped", "it takes jobs"
            code, out = check(env)
            assert code == 0 and "Redis" not in out, out
        lines = worker.events("worker_waiting_for_redis")
        waited = [float(str(line["waited_s"])) for line in lines]
        gaps = [later - earlier for earlier, later in itertools.pairwise(waited)]
        print(f"{outage}: {len(checks)} checks passed; wait lines at {waited} s")
        assert len(lines) >= WAIT_SECONDS // WAIT_LINE_SECONDS + 1, lines
        assert all(WAIT_LINE_SECONDS <= gap <= WAIT_LINE_SECONDS + 2 * TRY_SECONDS for gap in gaps)
        assert lines[0]["redis"] == redis_url and lines[0]["error"]
        assert len(worker.events("worker_redis_back")) == 1
        assert worker.process.returncode == 0, worker.output()[-3000:]
        assert "Traceback" not in worker.output()


@pytest.mark.parametrize("outage", ["not started", "paused"])
def test_sigterm_while_waiting_for_redis_stops_the_worker_at_once(
    db_dsn: str, tmp_path: Path, outage: str
) -> None:
    with unstarted_redis() as server:
        if outage == "paused":
            server.start()
            server.pause()
        env = env_for(f"{server.base}/0", db_dsn, tmp_path)
        with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
            wait_for_event(worker, "worker_waiting_for_redis", 60)
            asked = time.monotonic()
            worker.signal(signal.SIGTERM)
            code = worker.wait(30)
            seconds = time.monotonic() - asked
        print(f"{outage}: SIGTERM while waiting: exit {code} in {seconds:.2f} s")
        assert code == 0, worker.output()[-3000:]
        # Not held by a PING that a paused Redis never answers (5 s): the wait is cancelled.
        assert seconds < WORKER_COMMAND_SECONDS, f"{seconds:.1f} s"
        (stopped,) = worker.events("worker_stopped")
        assert stopped["reason"] == "asked to stop while it waited for Redis"
        assert "Traceback" not in worker.output()
        code, out = check(env)
        assert code == 1 and "no worker loop heartbeat" in out, "its heartbeat file is removed"


@pytest.mark.parametrize("refusal", ["wrong password", "no such database"])
def test_a_redis_that_refuses_the_worker_stops_it_with_one_line(
    db_dsn: str, tmp_path: Path, refusal: str
) -> None:
    """Redis answers, and says no: waiting would change nothing, so the worker exits 3 at once,
    as a bad setting should (the supervisor's restarts show it)."""
    with unstarted_redis() as server:
        server.start()
        redis_url = f"{server.base}/0"
        if refusal == "wrong password":
            admin = redis.Redis.from_url(redis_url)
            admin.config_set("requirepass", "a-password-the-worker-lacks")
            admin.close()
        else:
            redis_url = f"{server.base}/99"  # the server has 16
        env = env_for(redis_url, db_dsn, tmp_path)
        started = time.monotonic()
        done = run_cli("worker", env=env, timeout=60)
        seconds = time.monotonic() - started
    print(f"{refusal}: exit {done.returncode} in {seconds:.1f} s")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.startswith(f"gomoku-archive: error: Redis at {redis_url} refused")
    assert done.stderr.count("\n") == 1
    assert "worker_waiting_for_redis" not in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
