"""The freshness gauges against the real PostgreSQL and Redis: the summary query, one refresh
round (with Redis answering, refusing, or silent), and ``/metrics`` serving what the background
task computed without a query per scrape."""

from __future__ import annotations

import asyncio
import math
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gomoku_archive.db import archive_store
from gomoku_archive.db.archive_freshness import read_archive_freshness
from gomoku_archive.db.pool import Pool
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import connect
from gomoku_archive.settings import Settings
from gomoku_archive.web.freshness_refresher import FreshnessRefresher
from gomoku_archive.web.metrics import Metrics
from tests.integration.api_support import publish_bytes, random_bytes, serving
from tests.integration.conftest import free_port

NOW = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)
"""August to October 2026 are closed; October closed six hours ago."""


def values(metrics: Metrics) -> dict[str, float]:
    return text_values(metrics.render().decode())


def text_values(text: str) -> dict[str, float]:
    return {
        s.name: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if not s.labels or s.labels == {"outcome": "ok"}
    }


@pytest.fixture
def silent_redis() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", free_port()))
    listener.listen(8)
    try:
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    finally:
        listener.close()


async def fail(pool: Pool, month: str) -> None:
    async with pool.acquire() as conn:
        await archive_store.record_failure(conn, month, "RuntimeError: boom")


async def test_the_summary_query(pool: Pool) -> None:
    async with pool.acquire() as conn:
        assert (await read_archive_freshness(conn)).months == ()
    await fail(pool, "2026-08")
    august = await publish_bytes(pool, "2026-08", random_bytes(1000, seed=1))
    await fail(pool, "2026-09")
    await publish_bytes(pool, "2026-08", random_bytes(1000, seed=2))  # supersedes the first
    async with pool.acquire() as conn:
        stats = await read_archive_freshness(conn)
    assert [m.month for m in stats.months] == ["2026-08", "2026-09"]
    aug, sep = stats.months
    assert aug.published_at is not None and aug.last_failed_at is not None
    assert aug.last_failed_at < aug.published_at
    assert august.published_at is not None and aug.published_at > august.published_at
    assert (sep.published_at, sep.last_failed_at is not None) == (None, True)
    assert stats.last_published_at == aug.published_at


async def test_one_refresh_sets_the_gauges(pool: Pool, settings: Settings) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(1000, seed=1))
    await fail(pool, "2026-09")
    client = await connect(settings.redis_url)
    try:
        for month in ("2026-09", "2026-10"):
            await client.enqueue_job("export_month", _job_id=f"export:{month}", month=month)
    finally:
        await client.aclose(close_connection_pool=True)
    metrics = Metrics()
    refresher = FreshnessRefresher(pool, settings, metrics, clock=lambda: NOW)
    try:
        await refresher.refresh()
    finally:
        await refresher.close()
    found = values(metrics)
    assert found["gomoku_unpublished_closed_months"] == 2
    assert (
        found["gomoku_oldest_unpublished_month_age_seconds"]
        == (NOW - Month(2026, 9).end).total_seconds()
    )
    assert found["gomoku_export_failed_months"] == 1
    assert found["gomoku_last_publication_timestamp_seconds"] == pytest.approx(time.time(), abs=60)
    assert (found["gomoku_job_queue_depth"], found["gomoku_job_queue_up"]) == (2, 1)
    assert found["gomoku_freshness_refreshes_total"] == 1
    assert found["gomoku_freshness_age_seconds"] < 5


@pytest.mark.parametrize("redis", ["refused", "silent"])
async def test_an_absent_redis_costs_at_most_a_second(
    pool: Pool, db_dsn: str, redis: str, silent_redis: str
) -> None:
    url = silent_redis if redis == "silent" else f"redis://127.0.0.1:{free_port()}/0"
    metrics = Metrics()
    refresher = FreshnessRefresher(
        pool, Settings(database_url=db_dsn, redis_url=url), metrics, clock=lambda: NOW
    )
    started = time.monotonic()
    try:
        await refresher.refresh()
    finally:
        await refresher.close()
    assert time.monotonic() - started < 2.5
    found = values(metrics)
    assert math.isnan(found["gomoku_job_queue_depth"])
    assert found["gomoku_job_queue_up"] == 0
    assert found["gomoku_unpublished_closed_months"] == 3, "the database part still counts"


async def test_metrics_serve_the_background_computation_without_a_query_per_scrape(
    db_dsn: str, pool: Pool
) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(1000, seed=1))
    async with serving(db_dsn, pool) as api:
        deadline = time.monotonic() + 10
        while True:
            found = text_values(await (await api.get("/metrics")).text())
            if found.get("gomoku_freshness_refreshes_total") or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert found["gomoku_freshness_refreshes_total"] == 1
        for _ in range(20):
            found = text_values(await (await api.get("/metrics")).text())
        assert found["gomoku_freshness_refreshes_total"] == 1
        assert found["gomoku_last_publication_timestamp_seconds"] > 0
        assert found["gomoku_job_queue_up"] == 0, "serving() points Redis at a closed port"
