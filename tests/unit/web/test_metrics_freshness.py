"""The freshness gauges as Prometheus renders them: set in one place, from one computation."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from prometheus_client.parser import text_string_to_metric_families

from gomoku_archive.catalog.freshness import Freshness
from gomoku_archive.db.content_store import ContentChecked
from gomoku_archive.web.metrics import Metrics


def values(metrics: Metrics) -> dict[str, float]:
    return {
        s.name: s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
        if not s.labels
    }


def test_before_the_first_refresh_nothing_looks_fresh() -> None:
    found = values(Metrics())
    assert found["gomoku_freshness_age_seconds"] == math.inf
    assert math.isnan(found["gomoku_job_queue_depth"])
    assert found["gomoku_job_queue_up"] == 0


def test_show_freshness_sets_every_gauge() -> None:
    metrics = Metrics()
    published = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)
    metrics.show_freshness(
        Freshness(
            unpublished_closed_months=2,
            oldest_unpublished_age_seconds=45_000.5,
            last_published_at=published,
            failed_months=1,
        )
    )
    found = values(metrics)
    assert found["gomoku_unpublished_closed_months"] == 2
    assert found["gomoku_oldest_unpublished_month_age_seconds"] == 45_000.5
    assert found["gomoku_last_publication_timestamp_seconds"] == published.timestamp()
    assert found["gomoku_export_failed_months"] == 1


def test_never_published_reads_zero() -> None:
    metrics = Metrics()
    metrics.show_freshness(Freshness(0, 0.0, None, 0))
    assert values(metrics)["gomoku_last_publication_timestamp_seconds"] == 0


def test_queue_depth_and_whether_redis_answered() -> None:
    metrics = Metrics()
    metrics.show_queue_depth(7)
    assert (values(metrics)["gomoku_job_queue_depth"], values(metrics)["gomoku_job_queue_up"]) == (
        7,
        1,
    )
    metrics.show_queue_depth(None)
    found = values(metrics)
    assert math.isnan(found["gomoku_job_queue_depth"])
    assert found["gomoku_job_queue_up"] == 0


def labelled(metrics: Metrics, name: str) -> dict[str, float]:
    return {
        s.labels["file"]: s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
        if s.name == name
    }


def test_each_copy_s_last_full_content_comparison_and_its_cycle() -> None:
    metrics = Metrics()
    at = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
    mib = 1024 * 1024
    metrics.show_content_checked(
        [ContentChecked("a.sgf.gz", 13_700_000, at), ContentChecked("b.sgf.gz", 1000, at)],
        period_seconds=900,
        sample_bytes=mib,
    )
    assert labelled(metrics, "gomoku_mirror_content_checked_timestamp_seconds") == {
        "a.sgf.gz": at.timestamp(),
        "b.sgf.gz": at.timestamp(),
    }
    cycle = labelled(metrics, "gomoku_mirror_content_cycle_seconds")
    assert cycle == {"a.sgf.gz": 14 * 900, "b.sgf.gz": 900}, "14 windows of 1 MiB; one"
    metrics.show_content_checked(
        [ContentChecked("b.sgf.gz", 1000, at)], period_seconds=900, sample_bytes=0
    )
    assert set(labelled(metrics, "gomoku_mirror_content_cycle_seconds")) == {"b.sgf.gz"}, (
        "a file no longer mirrored is no longer reported"
    )
