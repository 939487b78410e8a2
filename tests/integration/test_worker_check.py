"""``gomoku-archive worker --check`` against the real Redis: alive with a live worker process on
this host, failing with one line when the heartbeat is missing, stale or another host's, and
when Redis does not answer, within a few seconds."""

from __future__ import annotations

import json
import socket
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis

from gomoku_archive.profile.months import Month
from gomoku_archive.queue.worker_keys import WORKER_KEY_PREFIX
from tests.integration.conftest import free_port
from tests.integration.worker_support import WorkerProcess, cli_env, run_cli, workers

HOST = socket.gethostname()


def check(redis_url: str, db_dsn: str, *extra: str) -> tuple[int, str, str, float]:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=Month(2026, 8))
    started = time.monotonic()
    done = run_cli("worker", "--check", *extra, env=env, timeout=30)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def write_heartbeat(redis_url: str, worker: str, *, seconds_ago: float) -> None:
    last_seen = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    document = {
        "worker": worker,
        "started_at": last_seen.isoformat(),
        "last_seen": last_seen.isoformat(),
    }
    client = redis.Redis.from_url(redis_url)
    try:
        client.set(WORKER_KEY_PREFIX + worker, json.dumps(document), ex=600)
    finally:
        client.close()


def test_a_live_worker_process_on_this_host_passes(
    redis_url: str, db_dsn: str, tmp_path: Path
) -> None:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=Month(2026, 8))
    with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
        deadline = time.monotonic() + 30
        while True:
            code, out, err, _ = check(redis_url, db_dsn)
            if code == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert code == 0, err + worker.output()
        assert out.startswith(f"worker {HOST}:{worker.process.pid} alive"), out
    # Stopped cleanly, the worker retires its key: the check fails at once.
    code, _, err, _ = check(redis_url, db_dsn)
    assert code == 1
    assert err.startswith(
        f"gomoku-archive: worker check failed: no heartbeat from a worker on {HOST}"
    )


def test_no_heartbeat_fails_with_one_line(redis_url: str, db_dsn: str) -> None:
    code, out, err, _ = check(redis_url, db_dsn)
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert "no heartbeat from a worker on" in err


def test_another_hosts_heartbeat_does_not_count(redis_url: str, db_dsn: str) -> None:
    write_heartbeat(redis_url, f"{HOST}-elsewhere:1", seconds_ago=1)
    code, _, err, _ = check(redis_url, db_dsn)
    assert code == 1
    assert "1 worker on other hosts" in err


def test_a_stale_heartbeat_fails_and_max_age_is_honoured(redis_url: str, db_dsn: str) -> None:
    write_heartbeat(redis_url, f"{HOST}:4242", seconds_ago=90)
    code, _, err, _ = check(redis_url, db_dsn)
    assert code == 1
    assert f"worker {HOST}:4242 last reported 9" in err
    assert "s ago (limit 60 s): stuck" in err
    code, out, _, _ = check(redis_url, db_dsn, "--max-age", "120")
    assert code == 0
    assert f"worker {HOST}:4242 alive" in out


@pytest.mark.parametrize("silent", [False, True], ids=["refused", "silent"])
def test_unreachable_redis_fails_within_seconds(db_dsn: str, silent: bool) -> None:
    port = free_port()
    listener = None
    if silent:
        # Accepts connections and never answers: only the check's own deadline ends it.
        listener = socket.socket()
        listener.bind(("127.0.0.1", port))
        listener.listen(8)
    try:
        code, _, err, seconds = check(f"redis://127.0.0.1:{port}/0", db_dsn)
    finally:
        if listener is not None:
            listener.close()
    assert code == 3
    assert err.startswith("gomoku-archive: error: ")
    assert err.count("\n") == 1
    assert seconds < 10
