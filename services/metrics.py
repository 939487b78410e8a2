"""Prometheus metrics of one application, in a registry of its own (not the process-global one),
so several apps in one test process never clash."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)


class Metrics:
    def __init__(self) -> None:
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

    def render(self) -> bytes:
        return generate_latest(self.registry)
