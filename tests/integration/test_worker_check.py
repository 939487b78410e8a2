"""``gomoku-archive worker --check``, the worker's liveness probe, against real worker processes:
alive while the worker's job loop turns, failing with one line when no loop turned lately, and
passing through a Redis outage longer than the probe's whole failure window (Redis stopped, or
paused so that it answers nothing): the worker keeps running, says Redis is away, and takes
jobs again when it is back. Each test's worker and check share a temporary directory of their
own (``TMPDIR``), as a pod's containers share their /tmp."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gomoku_archive.jobs.liveness import LoopBeat
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import WORKER_COMMAND_SECONDS, connect
from gomoku_archive.worker.job_loop import DIRECTORY_NAME
from tests.integration.conftest import RedisServer, redis_server
from tests.integration.worker_support import WorkerProcess, cli_env, run_cli, workers

PROBE_MAX_AGE = 15
"""The tests' probe (the chart's: 60 s, every 30 s, 3 failures: a 90 s window), above a turn
of the loop held by a Redis command that times out (5 s)."""
PROBE_PERIOD = 2.0
PROBE_FAILURES = 3
OUTAGE_SECONDS = PROBE_MAX_AGE + PROBE_PERIOD * PROBE_FAILURES + 6
"""Longer than a stuck loop would take to fail the probe, plus its whole failure window."""


def env_for(redis_url: str, db_dsn: str, tmp: Path) -> dict[str, str]:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=Month(2026, 8))
    return env | {"TMPDIR": str(tmp)}


def check(env: dict[str, str], *extra: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = run_cli("worker", "--check", *extra, env=env, timeout=30)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def wait_alive(env: dict[str, str], worker: WorkerProcess) -> str:
    deadline = time.monotonic() + 30
    while True:
        code, out, err, _ = check(env, "--max-age", str(PROBE_MAX_AGE))
        if code == 0:
            return out
        assert time.monotonic() < deadline, err + worker.output()
        time.sleep(0.5)


def test_a_live_worker_passes_and_a_stopped_one_fails(
    redis_url: str, db_dsn: str, tmp_path: Path
) -> None:
    env = env_for(redis_url, db_dsn, tmp_path)
    with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
        out = wait_alive(env, worker)
        assert out.startswith(f"worker {os.uname().nodename}:{worker.process.pid} alive"), out
        assert "its loop turned" in out and "Redis" not in out
    # Stopped cleanly, the worker removes its heartbeat: the check fails at once.
    code, _, err, _ = check(env)
    assert code == 1
    assert err.startswith("gomoku-archive: worker check failed: no worker loop heartbeat in ")
    assert err.count("\n") == 1


def test_no_worker_fails_with_one_line(db_dsn: str, tmp_path: Path) -> None:
    # No Redis at all, and none asked: a closed port changes nothing.
    code, out, err, seconds = check(env_for("redis://127.0.0.1:9/0", db_dsn, tmp_path))
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert f"no worker loop heartbeat in {tmp_path / DIRECTORY_NAME}" in err
    assert seconds < 10


def test_a_stale_heartbeat_fails_and_max_age_is_honoured(db_dsn: str, tmp_path: Path) -> None:
    folder = tmp_path / DIRECTORY_NAME
    folder.mkdir()
    beat = LoopBeat("pod-a:4242", datetime.now(UTC) - timedelta(seconds=90))
    (folder / "4242.json").write_text(beat.to_json())
    (folder / "4243.json").write_text("{half a file")  # passed over
    env = env_for("redis://127.0.0.1:9/0", db_dsn, tmp_path)
    code, _, err, _ = check(env)
    assert code == 1
    assert "worker pod-a:4242's loop last turned 9" in err
    assert "s ago (limit 60 s): stuck" in err
    code, out, _, _ = check(env, "--max-age", "120")
    assert code == 0
    assert "worker pod-a:4242 alive" in out


async def _run_a_job(redis_url: str) -> dict[str, object]:
    """Queue a job any worker runs at once (a mirror job without a bucket answers "skipped")
    and wait for its result: the worker takes jobs."""
    client = await connect(redis_url, within_seconds=5)
    try:
        job = await client.enqueue_job("mirror_archive", 1, _job_id=f"probe-{time.time_ns()}")
        assert job is not None
        result: dict[str, object] = await job.result(timeout=30, poll_delay=0.2)
        return result
    finally:
        await client.aclose(close_connection_pool=True)


@pytest.mark.parametrize("outage", ["stopped", "paused"])
def test_a_redis_outage_longer_than_the_probe_window_restarts_nothing(
    db_dsn: str, tmp_path: Path, outage: str
) -> None:
    """Redis stopped (connections refused) or paused (SIGSTOP: connections open, no answer) for
    longer than the probe could fail in: every check passes and says Redis is away, the worker
    process lives on, and once Redis is back it runs a job again."""
    with redis_server() as server:
        redis_url = f"{server.base}/0"
        env = env_for(redis_url, db_dsn, tmp_path)
        with workers(WorkerProcess(env, tmp_path / "worker.log", "--grace", "3")) as (worker,):
            wait_alive(env, worker)
            assert asyncio.run(_run_a_job(redis_url))["outcome"] == "skipped"
            _interrupt(server, outage)
            began = time.monotonic()
            results = []
            try:
                while time.monotonic() - began < OUTAGE_SECONDS:
                    code, out, err, seconds = check(env, "--max-age", str(PROBE_MAX_AGE))
                    results.append((round(time.monotonic() - began, 1), code, seconds))
                    assert code == 0, f"{err}\n{worker.output()[-3000:]}"
                    time.sleep(PROBE_PERIOD)
                assert worker.process.poll() is None, "the worker is still running"
                assert "Redis has not answered for" in out, out
            finally:
                _restore(server, outage)
            print(f"{outage}: {len(results)} checks in {OUTAGE_SECONDS:.0f} s passed: {results}")
            assert asyncio.run(_run_a_job(redis_url))["outcome"] == "skipped", "jobs run again"
            code, out, _, _ = check(env)
            assert code == 0 and "Redis" not in out, out
            assert worker.process.poll() is None
        unreachable = worker.events("worker_redis_unreachable")
        assert len(unreachable) == 1, "said once per outage, not at every turn"
        back = worker.events("worker_redis_back")
        # Counted from the first turn that failed: at once when refused, after a command's
        # timeout when Redis is paused.
        assert len(back) == 1 and back[0]["down_s"] >= OUTAGE_SECONDS - WORKER_COMMAND_SECONDS - 1
        assert worker.process.returncode == 0, worker.output()[-3000:]
        assert "Traceback" not in worker.output()


def _interrupt(server: RedisServer, outage: str) -> None:
    if outage == "stopped":
        server.kill()
    else:
        server.pause()


def _restore(server: RedisServer, outage: str) -> None:
    if outage == "stopped":
        server.start()  # the same port, empty: as a Redis restarted without persistence
    else:
        server.resume()
