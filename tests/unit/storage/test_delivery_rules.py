"""The decisions behind delivery (issue 18), as plain functions: the settings, which copy may be
redirected to and why not, how long a 302 may be cached, whose address a
sign-in throttle counts, and what an anonymous read must have found."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.db.archive_store import MirrorRecord
from gomoku_archive.errors import ConfigError
from gomoku_archive.http.origin import client_address, parse_networks
from gomoku_archive.settings import Settings
from gomoku_archive.storage.public_copy import PublicRead
from gomoku_archive.storage.s3 import cdn_address, object_key, store_identity
from gomoku_archive.web.api.downloads import redirect_cache_control
from tests.budget import examples

NOW = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
KEY = "db/gomoku-party-2026-08-0123456789abcdef.sgf.gz"
CDN = "https://cdn.example.org/" + KEY


# --- settings ---------------------------------------------------------------------------------


def test_delivery_defaults() -> None:
    s = Settings.from_env({}, isatty=False)
    assert s.s3_presign_seconds == 3600
    assert s.s3_public_endpoint_url is None
    assert s.mirror_check_seconds == 60, "HEAD-visible damage is redirected to a minute at most"
    assert s.mirror_content_check_seconds == 900
    assert s.mirror_content_sample_bytes == 1024 * 1024
    assert (s.port, s.metrics_port) == (8080, None)
    assert (s.shutdown_drain_seconds, s.shutdown_grace_seconds) == (15, 30)


def test_delivery_settings_are_read() -> None:
    s = Settings.from_env(
        {
            "S3_PUBLIC_ENDPOINT_URL": "http://127.0.0.1:9000",
            "S3_PRESIGN_SECONDS": "900",
            "MIRROR_CHECK_SECONDS": "300",
            "PORT": "9080",
            "METRICS_PORT": "9090",
            "SHUTDOWN_DRAIN_SECONDS": "2.5",
            "SHUTDOWN_GRACE_SECONDS": "12",
            "MIRROR_CONTENT_CHECK_SECONDS": "7200",
            "MIRROR_CONTENT_SAMPLE_BYTES": "0",
        },
        isatty=False,
    )
    assert s.s3_public_endpoint_url == "http://127.0.0.1:9000"
    assert (s.s3_presign_seconds, s.mirror_check_seconds) == (900, 300)
    assert (s.port, s.metrics_port, s.shutdown_drain_seconds) == (9080, 9090, 2.5)
    assert s.shutdown_grace_seconds == 12
    assert (s.mirror_content_check_seconds, s.mirror_content_sample_bytes) == (7200, 0)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"S3_PRESIGN_SECONDS": "30"}, "S3_PRESIGN_SECONDS must be from 60 to 604800"),
        ({"S3_PRESIGN_SECONDS": "999999"}, "S3_PRESIGN_SECONDS must be from 60"),
        ({"S3_PRESIGN_SECONDS": "1h"}, "S3_PRESIGN_SECONDS must be a whole number"),
        ({"MIRROR_CHECK_SECONDS": "90"}, "whole minutes from 60 on"),
        ({"MIRROR_CHECK_SECONDS": "4"}, "MIRROR_CHECK_SECONDS must be from 5 to 3600"),
        ({"MIRROR_CHECK_SECONDS": "7200"}, "MIRROR_CHECK_SECONDS must be from 5 to 3600"),
        ({"MIRROR_CONTENT_CHECK_SECONDS": "5400"}, "whole hours from 3600 on"),
        ({"MIRROR_CONTENT_CHECK_SECONDS": "90"}, "whole minutes from 60 on"),
        ({"MIRROR_CONTENT_CHECK_SECONDS": "172800"}, "must be from 5 to 86400"),
        ({"MIRROR_CONTENT_SAMPLE_BYTES": "-1"}, "MIRROR_CONTENT_SAMPLE_BYTES: '-1' is not a size"),
        ({"PORT": "70000"}, "PORT must be a TCP port"),
        ({"METRICS_PORT": "8080"}, "METRICS_PORT must differ from PORT"),
        ({"SHUTDOWN_DRAIN_SECONDS": "-1"}, "SHUTDOWN_DRAIN_SECONDS must be from 0 to 300"),
        ({"SHUTDOWN_DRAIN_SECONDS": "soon"}, "SHUTDOWN_DRAIN_SECONDS must be a number"),
        ({"SHUTDOWN_DRAIN_SECONDS": "nan"}, "SHUTDOWN_DRAIN_SECONDS must be a number"),
        ({"SHUTDOWN_GRACE_SECONDS": "-3"}, "SHUTDOWN_GRACE_SECONDS must be from 0 to 3600"),
        ({"SHUTDOWN_GRACE_SECONDS": "inf"}, "SHUTDOWN_GRACE_SECONDS must be a number"),
        ({"S3_PUBLIC_ENDPOINT_URL": "s3:9000"}, "S3_PUBLIC_ENDPOINT_URL must be an http"),
    ],
)
def test_bad_delivery_settings_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env, isatty=False)


# --- which copy a download may be sent to ------------------------------------------------------


STORE = "http://minio:9000"


def verified(**more: object) -> MirrorRecord:
    fields: dict[str, object] = {
        "store": STORE, "bucket": "b", "key": KEY, "etag": '"e"', "verified_at": NOW
    }  # fmt: skip
    return MirrorRecord(**(fields | more))  # type: ignore[arg-type]


def test_a_verified_copy_is_redirected_to_without_a_cdn() -> None:
    assert verified().not_redirected_because(STORE, "b", KEY, None) is None


@pytest.mark.parametrize(
    ("record", "store", "bucket", "key", "why"),
    [
        (MirrorRecord(), STORE, "b", KEY, "no verified copy"),
        (verified(verified_at=None), STORE, "b", KEY, "no verified copy"),
        (verified(), STORE, "other-bucket", KEY, "no verified copy"),
        (verified(), STORE, "b", "other/" + KEY, "no verified copy"),
        (verified(), STORE, None, KEY, "no verified copy"),
        # The same bucket name in another store is another bucket (issue 34).
        (verified(), "http://other-store:9000", "b", KEY, "verified in another store"),
        (verified(), "aws", "b", KEY, "verified in another store"),
        (verified(store=None), STORE, "b", KEY, "verified in another store"),
    ],
)
def test_no_redirect_without_a_verified_copy_here(
    record: MirrorRecord, store: str, bucket: str | None, key: str, why: str
) -> None:
    reason = record.not_redirected_because(store, bucket, key, None)
    assert reason is not None and why in reason
    assert not record.verified_in(store, bucket, key)


def test_behind_a_cdn_only_an_anonymously_read_address_is_a_target() -> None:
    assert "not been read anonymously yet" in str(
        verified().not_redirected_because(STORE, "b", KEY, CDN)
    )
    failed = verified(cdn_url=CDN, cdn_error="answered HTTP 403")
    assert "answered HTTP 403" in str(failed.not_redirected_because(STORE, "b", KEY, CDN))
    read = verified(cdn_url=CDN, cdn_verified_at=NOW)
    assert read.not_redirected_because(STORE, "b", KEY, CDN) is None
    moved = "https://new-cdn.example.org/" + KEY
    assert read.not_redirected_because(STORE, "b", KEY, moved) is not None, "another CDN first"


@pytest.mark.parametrize(
    ("endpoint", "identity"),
    [
        (None, "aws"),
        ("", "aws"),
        ("http://minio:9000", "http://minio:9000"),
        ("HTTP://MinIO:9000/", "http://minio:9000"),
        ("https://storage.example.org:443", "https://storage.example.org"),
        ("http://127.0.0.1:80/", "http://127.0.0.1"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("https://gateway.example.org/s3/", "https://gateway.example.org/s3"),
    ],
)
def test_a_store_is_known_by_its_endpoint(endpoint: str | None, identity: str) -> None:
    assert store_identity(endpoint) == identity


def test_another_port_is_another_store() -> None:
    assert store_identity("http://127.0.0.1:9000") != store_identity("http://127.0.0.1:9001")


def test_addresses() -> None:
    assert object_key("db/", "f.sgf.gz") == "db/f.sgf.gz"
    assert cdn_address("https://cdn.example.org/", "db/a b.gz") == (
        "https://cdn.example.org/db/a%20b.gz"
    )


# --- caching of the 302 ---------------------------------------------------------------------


@given(st.integers(min_value=60, max_value=7 * 24 * 3600))
def test_a_presigned_redirect_is_cached_privately_and_shorter_than_it_lives(seconds: int) -> None:
    caching = redirect_cache_control(presigned=True, presign_seconds=seconds)
    scope, _, max_age = caching.partition(", max-age=")
    assert scope == "private"
    assert 0 < int(max_age) < seconds and int(max_age) <= 60


def test_a_cdn_redirect_is_cached_a_minute() -> None:
    assert redirect_cache_control(presigned=False, presign_seconds=3600) == "public, max-age=60"


# --- the throttle's client address ------------------------------------------------------------

PROXIES = parse_networks("10.0.0.0/8, ::1")


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.7", None, "203.0.113.7"),
        ("203.0.113.7", "198.51.100.1", "203.0.113.7"),  # not a proxy: its header is a claim
        ("10.0.0.2", "198.51.100.1", "198.51.100.1"),
        ("10.0.0.2", "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # the client's own claim is left
        ("10.0.0.2", "198.51.100.1, 10.0.0.9", "198.51.100.1"),  # two proxies in a row
        ("10.0.0.2", "10.0.0.8, 10.0.0.9", "10.0.0.8"),
        ("10.0.0.2", "junk, 198.51.100.1", "198.51.100.1"),
        ("10.0.0.2", "198.51.100.1, junk", "10.0.0.2"),
        ("::1", "2001:db8::5", "2001:db8::5"),
        (None, "198.51.100.1", "unknown"),
    ],
)
def test_the_client_behind_trusted_proxies(
    peer: str | None, forwarded: str | None, client: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == client


@settings(max_examples=examples(200))
@given(st.lists(st.ip_addresses(v=4).map(str), min_size=1, max_size=6))
def test_a_client_behind_a_proxy_is_never_the_proxy_when_one_address_is_not(
    chain: list[str],
) -> None:
    client = client_address("10.0.0.1", ", ".join(chain), PROXIES)
    untrusted = [a for a in chain if not any(ipaddress.ip_address(a) in n for n in PROXIES)]
    if untrusted:
        assert client == untrusted[-1]


# --- an anonymous read ----------------------------------------------------------------------


def test_an_anonymous_read_must_have_the_bytes() -> None:
    good = PublicRead(200, 10, "ab" * 32)
    assert good.problem(10, "ab" * 32) is None
    assert good.problem(11, "ab" * 32) == "gave 10 bytes, expected 11"
    assert "sha256" in str(good.problem(10, "cd" * 32))
    assert PublicRead(403, None).problem(10, None) == "answered HTTP 403"
    assert PublicRead(200, 10).problem(10, None) is None, "a HEAD checks the length only"
