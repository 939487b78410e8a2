"""Prometheus metrics of one application, in a registry of its own (not the process-global one),
so several apps in one test process never clash."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from gomoku_archive.catalog.freshness import Freshness
from gomoku_archive.db.content_store import ContentChecked
from gomoku_archive.db.mirror_store import MirrorStats
from gomoku_archive.db.range_store import BuildProgress
from gomoku_archive.jobs.content_sample import windows_in
from gomoku_archive.jobs.month_view import shown_counts

CONTENT_TYPE = CONTENT_TYPE_LATEST

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)


class Metrics:
    def __init__(self) -> None:
        self._per_request: dict[tuple[str, str, str], tuple[Counter, Histogram, Counter]] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "gomoku_http_requests",
            "HTTP requests answered, by route template, method and status",
            ("route", "method", "status"),
            registry=r,
        )
        self.latency = Histogram(
            "gomoku_http_request_duration_seconds",
            "Time from request to the end of the response body, by route template",
            ("route",),
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.bytes_served = Counter(
            "gomoku_http_response_body_bytes",
            "Response body bytes written, by route template",
            ("route",),
            registry=r,
        )
        self.downloads_in_flight = Gauge(
            "gomoku_downloads_in_flight",
            "Archive downloads currently streaming",
            registry=r,
        )
        self.downloads_aborted = Counter(
            "gomoku_downloads_aborted",
            "Archive downloads that ended before their last byte, by reason",
            ("reason",),
            registry=r,
        )
        self.redirects_unsigned = Counter(
            "gomoku_download_redirects_unsigned",
            "GET downloads served by the API, not redirected to their verified copy, because "
            "no presigned URL could be had: error (no credentials, or the credential source "
            "refused or answered garbage), timeout (none within the presign timeout), paused "
            "(not tried: signing failed moments ago)",
            ("reason",),
            registry=r,
        )
        self.published_archives = Gauge(
            "gomoku_published_archives",
            "Months with a published archive in the cached manifest (zero-game months included)",
            registry=r,
        )
        self.manifest_refreshes = Counter(
            "gomoku_manifest_refreshes",
            "Manifest cache reloads from the database, by outcome",
            ("outcome",),
            registry=r,
        )
        self.manifest_age = Gauge(
            "gomoku_manifest_age_seconds",
            "Seconds since the served manifest was loaded from the database",
            registry=r,
        )

        # Freshness, from the database every few seconds in the background
        # (web/freshness_refresher.py); the Helm chart's PrometheusRule alerts on these names.
        self.unpublished_closed_months = Gauge(
            "gomoku_unpublished_closed_months",
            "Closed months from EXPORT_FIRST_MONTH on without a published archive",
            registry=r,
        )
        self.oldest_unpublished_age = Gauge(
            "gomoku_oldest_unpublished_month_age_seconds",
            "Seconds since the oldest unpublished closed month closed (0 when all are published)",
            registry=r,
        )
        self.last_publication = Gauge(
            "gomoku_last_publication_timestamp_seconds",
            "Unix time of the newest publication of an archive file (0 before the first)",
            registry=r,
        )
        self.failed_months = Gauge(
            "gomoku_export_failed_months",
            "Months whose latest export failed (a failed build newer than their published file)",
            registry=r,
        )
        self.freshness_refreshes = Counter(
            "gomoku_freshness_refreshes",
            "Reads of the archive tables for the freshness gauges, by outcome",
            ("outcome",),
            registry=r,
        )
        self.freshness_age = Gauge(
            "gomoku_freshness_age_seconds",
            "Seconds since the freshness gauges were last computed (+Inf before the first time)",
            registry=r,
        )
        self.queue_depth = Gauge(
            "gomoku_job_queue_depth",
            "Jobs in the arq queue, running ones included (NaN when Redis did not answer)",
            registry=r,
        )
        self.queue_up = Gauge(
            "gomoku_job_queue_up",
            "1 when Redis answered the last read of the queue depth, else 0",
            registry=r,
        )
        # The S3 mirror, from the same background read when S3_BUCKET is set.
        self.mirror_files = Gauge(
            "gomoku_mirror_files",
            "Served archive files by the state of their copy in the S3 bucket: verified (read "
            "back and matched), pending (no verified copy yet), failing (the latest mirror "
            "attempt failed) and cdn_unverified (verified, but its CDN address has not passed "
            "an anonymous read: not a redirect target, served by the API)",
            ("state",),
            registry=r,
        )
        self.mirror_uploaded_bytes = Gauge(
            "gomoku_mirror_uploaded_bytes",
            "Bytes the mirror has sent to the S3 bucket, first uploads and repairs, all archives",
            registry=r,
        )
        self.mirror_content_checked = Gauge(
            "gomoku_mirror_content_checked_timestamp_seconds",
            "Unix time of each mirrored file's last full content comparison: when the content "
            "check last found the last window of a complete cycle over its copy right (every "
            "window since the cycle's first, in the bucket and at its CDN address), or when the "
            "copy was verified by reading it back whole, whichever is later",
            ("file",),
            registry=r,
        )
        self.mirror_content_cycle = Gauge(
            "gomoku_mirror_content_cycle_seconds",
            "Seconds the content check takes to read each mirrored file whole at the current "
            "settings: its windows (MIRROR_CONTENT_SAMPLE_BYTES) times "
            "MIRROR_CONTENT_CHECK_SECONDS",
            ("file",),
            registry=r,
        )
        self.workers_live = Gauge(
            "gomoku_workers_live",
            "Worker processes whose heartbeat is fresh in Redis (NaN when Redis did not answer)",
            registry=r,
        )
        # Month builds under way, from the same background read of the archive tables.
        self.export_ranges = Gauge(
            "gomoku_export_ranges",
            "Ranges of the month builds under way, by state: done, running, stalled (held by a "
            "worker whose heartbeat stopped, or of a build whose coordinator is gone), queued "
            "and failed (failed ones are retried until their tries run out)",
            ("state",),
            registry=r,
        )
        self.export_candidates = Gauge(
            "gomoku_export_candidates",
            "Candidate games of the month builds under way: planned (all of them) and done "
            "(in done ranges, or read so far by running ones)",
            ("state",),
            registry=r,
        )
        self.freshness_age.set(float("inf"))
        self.queue_depth.set(float("nan"))
        self.workers_live.set(float("nan"))

    def count_request(
        self, route: str, method: str, status: int, duration: float, body_bytes: int
    ) -> None:
        """The three per-request series at once. Their labelled children are looked up once
        per (route, method, status) and kept: ``labels()`` takes a lock and builds its key
        on every call, which the manifest's request rate notices."""
        key = (route, method, str(status))
        children = self._per_request.get(key)
        if children is None:
            children = self._per_request[key] = (
                self.requests.labels(route, method, key[2]),
                self.latency.labels(route),
                self.bytes_served.labels(route),
            )
        requests, latency, bytes_served = children
        requests.inc()
        latency.observe(duration)
        bytes_served.inc(body_bytes)

    def show_freshness(self, freshness: Freshness) -> None:
        """Set every freshness gauge from one computation (the only place that sets them)."""
        published = freshness.last_published_at
        self.unpublished_closed_months.set(freshness.unpublished_closed_months)
        self.oldest_unpublished_age.set(freshness.oldest_unpublished_age_seconds)
        self.last_publication.set(published.timestamp() if published is not None else 0)
        self.failed_months.set(freshness.failed_months)

    def show_mirror(self, stats: MirrorStats) -> None:
        """Set the mirror's gauges from one read of the archive rows."""
        self.mirror_files.labels("verified").set(stats.mirrored)
        self.mirror_files.labels("pending").set(stats.served_files - stats.mirrored)
        self.mirror_files.labels("failing").set(stats.failing)
        self.mirror_files.labels("cdn_unverified").set(stats.cdn_unverified)
        self.mirror_uploaded_bytes.set(stats.uploaded_bytes)

    def show_content_checked(
        self, checked: Sequence[ContentChecked], *, period_seconds: int, sample_bytes: int
    ) -> None:
        """Set the per-file content gauges from one read (a file no longer mirrored goes; a
        scrape never sees them half set: this runs on the loop that renders them)."""
        self.mirror_content_checked.clear()
        self.mirror_content_cycle.clear()
        for c in checked:
            self.mirror_content_checked.labels(c.file_name).set(c.at.timestamp())
            windows = windows_in(c.bytes, sample_bytes)
            self.mirror_content_cycle.labels(c.file_name).set(windows * period_seconds)

    def show_builds(self, builds: Sequence[BuildProgress]) -> None:
        """Set the range gauges from one read of the building months' ranges."""
        for state in ("done", "queued", "failed"):
            self.export_ranges.labels(state).set(sum(getattr(b, state) for b in builds))
        shown = [shown_counts(b) for b in builds]
        self.export_ranges.labels("running").set(sum(running for running, _ in shown))
        self.export_ranges.labels("stalled").set(sum(stalled for _, stalled in shown))
        self.export_candidates.labels("planned").set(sum(b.planned for b in builds))
        self.export_candidates.labels("done").set(sum(b.candidates_done for b in builds))

    def show_queue_depth(self, depth: int | None, workers: int | None = None) -> None:
        """The queue's depth and the live workers, or None when Redis did not answer in time."""
        self.queue_up.set(depth is not None)
        self.queue_depth.set(float("nan") if depth is None else depth)
        self.workers_live.set(float("nan") if workers is None else workers)

    def render(self) -> bytes:
        return generate_latest(self.registry)
