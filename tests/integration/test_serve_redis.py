"""The API and Redis, with real ``gomoku-archive serve`` processes: a ``REDIS_URL`` nobody
answers is in the log from the start (and ``/ops/`` says it), yet the API starts and is ready;
and a Redis outage longer than the probes' failure window fails neither ``/healthz`` (the
liveness probe) nor ``/readyz``: the public API needs no Redis, only ``/ops/`` does."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from tests.integration.api_support import ServerProcess
from tests.integration.conftest import free_port, redis_server

TOKEN = "test-ops-token-of-at-least-32-characters"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
OUTAGE_SECONDS = 12.0
"""The chart's API probes fail a pod after 3 x 20 s (liveness) and 3 x 10 s (readiness); the
answers cannot change in between, so a shorter outage, polled, shows the same."""


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url, headers=BEARER, timeout=aiohttp.ClientTimeout(total=10)) as got:
        return got.status, await got.text()


def _events(server: ServerProcess) -> list[dict[str, object]]:
    lines = server.output.decode().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


async def test_an_unreachable_redis_is_said_at_start_up(db_dsn: str) -> None:
    redis_url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    server = ServerProcess(db_dsn, extra_env={"OPS_TOKEN": TOKEN, "REDIS_URL": redis_url})
    await asyncio.to_thread(server.start)
    try:
        async with aiohttp.ClientSession() as session:
            assert (await _get(session, f"{server.base}/readyz"))[0] == 200
            status, page = await _get(session, f"{server.base}/ops/")
            assert status == 200 and 'id="redis-down"' in page and "Redis unreachable" in page
            await asyncio.sleep(4)  # the start-up look gives up after 3 s
    finally:
        assert await asyncio.to_thread(server.stop) == 0
    warnings = [e for e in _events(server) if e["event"] == "serve_redis_unreachable"]
    assert len(warnings) == 1, server.output.decode()[-2000:]
    assert warnings[0]["level"] == "warning"
    assert warnings[0]["redis"] == redis_url
    assert "the public API does not need it" in str(warnings[0]["consequence"])


async def test_a_reachable_redis_is_not_mentioned(db_dsn: str) -> None:
    with redis_server() as redis:
        extra = {"OPS_TOKEN": TOKEN, "REDIS_URL": f"{redis.base}/0"}
        server = ServerProcess(db_dsn, extra_env=extra)
        await asyncio.to_thread(server.start)
        try:
            async with aiohttp.ClientSession() as session:
                status, _ = await _get(session, f"{server.base}/ops/api/status")
                assert status == 200
                await asyncio.sleep(1)
        finally:
            assert await asyncio.to_thread(server.stop) == 0
    assert not [e for e in _events(server) if e["event"] == "serve_redis_unreachable"]


async def test_a_redis_outage_fails_no_api_probe(db_dsn: str) -> None:
    with redis_server() as redis:
        extra = {"OPS_TOKEN": TOKEN, "REDIS_URL": f"{redis.base}/0"}
        server = ServerProcess(db_dsn, extra_env=extra)
        await asyncio.to_thread(server.start)
        try:
            async with aiohttp.ClientSession() as session:
                assert (await _get(session, f"{server.base}/ops/api/status"))[0] == 200
                redis.pause()  # answers nothing: the worst case for a client
                began = time.monotonic()
                answers = set()
                try:
                    while time.monotonic() - began < OUTAGE_SECONDS:
                        for probe in ("/healthz", "/readyz"):
                            answers.add((probe, (await _get(session, server.base + probe))[0]))
                        await asyncio.sleep(0.5)
                    status, body = await _get(session, f"{server.base}/ops/api/status")
                finally:
                    redis.resume()
        finally:
            assert await asyncio.to_thread(server.stop) == 0
    assert answers == {("/healthz", 200), ("/readyz", 200)}
    assert status == 200
    redis_state = json.loads(body)["redis"]
    assert redis_state["ok"] is False and "timed out" in redis_state["error"], redis_state
