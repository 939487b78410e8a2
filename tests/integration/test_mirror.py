"""The S3 mirror against a real S3-compatible server (moto in server mode, a separate process on
loopback) and the real PostgreSQL: multipart uploads whose stored bytes equal the archive, the
objects' headers, idempotent reruns, backfill, scrubbing and repair, the store vanishing or
killed mid-upload, refused credentials, the API's redirects and the metrics."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from arq import Retry

from gomoku_archive.db import archive_store, companion_store, mirror_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import MirrorFailed
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import checksum_line
from gomoku_archive.queue.snapshot import read_snapshot
from gomoku_archive.settings import Settings
from gomoku_archive.storage.mirror import ArchiveMirror
from gomoku_archive.storage.s3 import S3Store
from gomoku_archive.web.freshness_refresher import FreshnessRefresher
from gomoku_archive.web.metrics import Metrics
from gomoku_archive.worker import context
from gomoku_archive.worker.mirror_jobs import mirror_archive
from gomoku_archive.worker.planner import plan_months
from tests.integration.api_support import (
    free_port,
    publish_bytes,
    publish_demo_month,
    random_bytes,
    serving,
)
from tests.integration.s3_support import (
    CREDENTIALS,
    client,
    incomplete_uploads,
    moto_server,
    new_bucket,
    object_bytes,
    relay_to,
    running_moto,
)
from tests.integration.worker_support import (
    cli_env,
    close_context,
    job_context,
    last_closed_month,
    run_cli,
    seed_month,
)

MIB = 1024 * 1024
PART = 5 * MIB
BIG = 2 * PART + 1536 * 1024
"""Larger than two parts: three parts, the last one short."""


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def s3_settings(settings: Settings, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The test's settings with a bucket of its own; boto3 finds the credentials in the
    environment, as in production."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    return dataclasses.replace(
        settings,
        s3_bucket=new_bucket(s3_endpoint),
        s3_prefix="db/",
        s3_endpoint_url=s3_endpoint,
        s3_part_size=PART,
    )


@pytest.fixture
async def mirror(s3_settings: Settings, pool: Pool) -> AsyncIterator[ArchiveMirror]:
    store = S3Store(s3_settings)
    try:
        yield ArchiveMirror(pool, store)
    finally:
        store.close()


async def row_of(pool: Pool, archive_id: int) -> ArchiveRow:
    async with pool.acquire() as conn:
        row = await mirror_store.servable_archive(conn, archive_id)
    assert row is not None
    return row


def mirror_env(s: Settings, **extra: str) -> dict[str, str]:
    assert s.s3_bucket is not None
    assert s.s3_endpoint_url is not None
    env = cli_env(database_url=s.database_url, redis_url=s.redis_url, first_month=Month(2026, 8))
    return (
        env
        | CREDENTIALS
        | {
            "S3_BUCKET": s.s3_bucket,
            "S3_PREFIX": s.s3_prefix,
            "S3_ENDPOINT_URL": s.s3_endpoint_url,
            "S3_PART_SIZE": str(s.s3_part_size),
        }
        | extra
    )


async def test_multipart_upload_stores_the_exact_bytes_with_headers(
    mirror: ArchiveMirror, pool: Pool, s3_settings: Settings, s3_endpoint: str
) -> None:
    data = random_bytes(BIG, seed=1)
    row = await publish_bytes(pool, "2026-08", data)
    assert row.file_name is not None

    result = await mirror.mirror(row.id)

    key = "db/" + row.file_name
    bucket = s3_settings.s3_bucket
    assert result.action == "uploaded"
    assert result.key == key
    checksum = checksum_line(row.file_name, hashlib.sha256(data).hexdigest()).encode()
    assert result.uploaded_bytes == len(data) + len(checksum)
    assert object_bytes(s3_endpoint, bucket, key) == data
    assert object_bytes(s3_endpoint, bucket, key + ".sha256") == checksum
    s3 = client(s3_endpoint)
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ETag"].endswith('-3"'), "three parts: 5 MiB, 5 MiB and the rest"
    assert head["ContentType"] == "application/gzip"
    assert head["ContentDisposition"] == f'attachment; filename="{row.file_name}"'
    assert head["CacheControl"] == "public, max-age=31536000, immutable"
    head = s3.head_object(Bucket=bucket, Key=key + ".sha256")
    assert head["ContentType"] == "text/plain; charset=utf-8"
    assert head["ContentDisposition"] == f'attachment; filename="{row.file_name}.sha256"'
    assert head["CacheControl"] == "public, max-age=31536000, immutable"
    assert incomplete_uploads(s3_endpoint, bucket) == []

    recorded = (await row_of(pool, row.id)).mirror
    assert recorded.bucket == bucket
    assert recorded.key == key
    assert recorded.etag == s3.head_object(Bucket=bucket, Key=key)["ETag"]
    assert recorded.verified_at is not None
    assert recorded.error is None
    assert recorded.uploaded_bytes == len(data) + len(checksum)


async def test_a_second_run_uploads_nothing(
    mirror: ArchiveMirror, pool: Pool, s3_settings: Settings, s3_endpoint: str
) -> None:
    row = await publish_bytes(pool, "2026-08", random_bytes(BIG, seed=2))
    first = await mirror.mirror(row.id)
    assert first.action == "uploaded"
    etag = (await row_of(pool, row.id)).mirror.etag

    again = await mirror.mirror(row.id)
    assert (again.action, again.uploaded_bytes) == ("skipped", 0)

    # The row forgot its copy (say, a restored database backup): the copy in the bucket is
    # read back, found right, and trusted again without sending a byte.
    async with pool.acquire() as conn:
        await conn.execute("UPDATE archives SET mirrored_at = NULL WHERE id = $1", row.id)
    present = await mirror.mirror(row.id)
    assert (present.action, present.uploaded_bytes) == ("present", 0)
    recorded = (await row_of(pool, row.id)).mirror
    assert recorded.verified_at is not None
    assert recorded.etag == etag
    assert recorded.uploaded_bytes == first.uploaded_bytes


async def test_backfill_mirrors_files_published_before_s3_was_set(
    pool: Pool, s3_settings: Settings, s3_endpoint: str
) -> None:
    rows = [
        await publish_bytes(pool, f"2026-{m:02d}", random_bytes(300_000, seed=m)) for m in (8, 9)
    ]
    # September rebuilt: its first file is superseded but still served, so it is mirrored too.
    rows.append(await publish_bytes(pool, "2026-09", random_bytes(200_000, seed=99)))

    done = run_cli("mirror", "--all", env=mirror_env(s3_settings), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("uploaded ") == 3
    assert done.stdout.strip().endswith(
        "mirrored 3: 3 uploaded, 0 already present, 0 skipped, 0 failed"
    )
    for row in rows:
        assert row.file_name is not None
        assert (await row_of(pool, row.id)).mirror.verified_at is not None
        key = "db/" + row.file_name
        stored = object_bytes(s3_endpoint, str(s3_settings.s3_bucket), key)
        assert hashlib.sha256(stored).hexdigest() == row.sha256

    again = run_cli("mirror", "--all", env=mirror_env(s3_settings), timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "mirrored 0: 0 uploaded, 0 already present, 0 skipped, 0 failed"


async def test_the_planner_queues_a_mirror_job_per_unmirrored_file(
    pool: Pool, s3_settings: Settings, mirror: ArchiveMirror
) -> None:
    old = await publish_bytes(pool, "2026-08", random_bytes(100_000, seed=3))
    done = await publish_bytes(pool, "2026-09", random_bytes(100_000, seed=4))
    await mirror.mirror(done.id)
    from datetime import UTC, datetime

    ctx = await job_context(s3_settings, pool, now=datetime(2026, 10, 1, 6, tzinfo=UTC))
    ctx[context.MIRROR] = mirror
    try:
        run = await plan_months(ctx)
        assert run["mirrorsEnqueued"] == [old.id]
        again = await plan_months(ctx)
        assert again["mirrorsEnqueued"] == [], "queued already: planned twice, queued once"
        snapshot = await read_snapshot(ctx["redis"])
    finally:
        await close_context(ctx)
    assert f"mirror:{old.id}" in [j.job_id for j in snapshot.queued]


async def test_scrub_repairs_an_overwritten_object(
    pool: Pool, s3_settings: Settings, s3_endpoint: str, mirror: ArchiveMirror
) -> None:
    data = random_bytes(BIG, seed=5)
    row = await publish_bytes(pool, "2026-08", data)
    fine = await publish_bytes(pool, "2026-09", random_bytes(50_000, seed=6))
    assert row.file_name is not None
    for r in (row, fine):
        await mirror.mirror(r.id)
    bucket, key = str(s3_settings.s3_bucket), "db/" + row.file_name
    client(s3_endpoint).put_object(Bucket=bucket, Key=key, Body=b"bit rot")

    done = run_cli("mirror", "--verify", env=mirror_env(s3_settings), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("checked 2: 1 fine, 1 repaired, 0 failed")
    assert object_bytes(s3_endpoint, bucket, key) == data
    recorded = (await row_of(pool, row.id)).mirror
    assert recorded.verified_at is not None
    assert recorded.error is None


class RefusingUploads(S3Store):
    """The real store for every read; uploads refused (a bucket that went read-only)."""

    async def put_small(self, *args: Any, **kwargs: Any) -> Any:
        raise MirrorFailed("S3 refused to upload: AccessDenied", transient=False)

    async def put_multipart(self, *args: Any, **kwargs: Any) -> Any:
        raise MirrorFailed("S3 refused to upload: AccessDenied", transient=False)


async def test_a_copy_found_wrong_is_no_longer_a_redirect_target(
    db_dsn: str, pool: Pool, s3_settings: Settings, s3_endpoint: str, mirror: ArchiveMirror
) -> None:
    data = random_bytes(400_000, seed=7)
    row = await publish_bytes(pool, "2026-08", data)
    assert row.file_name is not None
    await mirror.mirror(row.id)
    url = f"/api/v1/database/files/{row.file_name}"
    async with serving(db_dsn, pool, settings=s3_settings) as api:
        response = await api.get(url, allow_redirects=False)
        assert response.status == 302

        bucket, key = str(s3_settings.s3_bucket), "db/" + row.file_name
        client(s3_endpoint).put_object(Bucket=bucket, Key=key, Body=b"overwritten by accident")
        store = RefusingUploads(s3_settings)
        try:
            with pytest.raises(MirrorFailed, match="AccessDenied"):
                await ArchiveMirror(pool, store).verify(row.id)
        finally:
            store.close()
        recorded = (await row_of(pool, row.id)).mirror
        assert recorded.verified_at is None
        assert recorded.error is not None
        assert "AccessDenied" in recorded.error

        response = await api.get(url, allow_redirects=False)
        assert response.status == 200, "served from PostgreSQL while the copy is wrong"
        assert await response.read() == data

        repaired = await mirror.mirror(row.id)
        assert repaired.action == "uploaded"
        assert object_bytes(s3_endpoint, bucket, key) == data
        response = await api.get(url, allow_redirects=False)
        assert response.status == 302


async def test_redirects_only_what_a_get_would_send_in_full_or_in_part(
    db_dsn: str, pool: Pool, s3_settings: Settings, s3_endpoint: str, mirror: ArchiveMirror
) -> None:
    data = random_bytes(BIG, seed=8)
    row = await publish_bytes(pool, "2026-08", data)
    waiting = await publish_bytes(pool, "2026-09", random_bytes(10_000, seed=9))
    assert row.file_name is not None
    assert waiting.file_name is not None
    await mirror.mirror(row.id)
    bucket = s3_settings.s3_bucket
    url = f"/api/v1/database/files/{row.file_name}"
    object_url = f"{s3_endpoint}/{bucket}/db/{row.file_name}"
    etag = f'"{row.sha256}"'

    async with serving(db_dsn, pool, settings=s3_settings) as api:
        r = await api.get(url, allow_redirects=False)
        assert r.status == 302
        signed = r.headers["Location"]
        assert signed.startswith(object_url + "?") and "X-Amz-Signature=" in signed
        assert "X-Amz-Expires=3600" in signed
        assert r.headers["Cache-Control"] == "private, max-age=60"
        r = await api.get(url, headers={"Range": "bytes=100-199"}, allow_redirects=False)
        assert r.status == 302 and r.headers["Location"].startswith(object_url + "?")
        r = await api.get(url + ".sha256", allow_redirects=False)
        assert r.status == 302
        signed_checksum = r.headers["Location"]
        assert signed_checksum.startswith(object_url + ".sha256?")

        r = await api.head(url)
        assert r.status == 200
        assert r.headers["Content-Length"] == str(len(data))
        assert r.headers["ETag"] == etag
        r = await api.get(url, headers={"If-None-Match": etag}, allow_redirects=False)
        assert r.status == 304
        assert r.headers["ETag"] == etag
        r = await api.get(url, headers={"Range": f"bytes={len(data)}-"}, allow_redirects=False)
        assert r.status == 416

        r = await api.get(f"/api/v1/database/files/{waiting.file_name}", allow_redirects=False)
        assert r.status == 200, "not mirrored yet: PostgreSQL serves it"

    # Following the redirect as a client without credentials does: the bucket is private (an
    # object's plain URL is refused, as a new AWS bucket refuses it; moto applies its private
    # ACL to objects from one request, here the .sha256), the presigned URL is not.
    async with aiohttp.ClientSession() as session:
        async with session.get(object_url + ".sha256") as got:
            assert got.status == 403, "a private bucket refuses anonymous reads"
        async with session.get(signed) as got:
            assert got.status == 200
            assert hashlib.sha256(await got.read()).hexdigest() == row.sha256
        async with session.get(signed, headers={"Range": "bytes=100-199"}) as got:
            assert got.status == 206
            assert await got.read() == data[100:200]
        async with session.get(signed_checksum) as got:
            assert (await got.read()).decode() == checksum_line(row.file_name, str(row.sha256))

    cdn = dataclasses.replace(s3_settings, cdn_base_url="https://cdn.example.org/")
    async with serving(db_dsn, pool, settings=cdn) as api:
        r = await api.get(url, allow_redirects=False)
        assert r.status == 200, "the CDN's address was never read anonymously: served here"

    backup_only = dataclasses.replace(s3_settings, s3_redirect=False)
    async with serving(db_dsn, pool, settings=backup_only) as api:
        r = await api.get(url, allow_redirects=False)
        assert r.status == 200
        assert await r.read() == data


async def test_the_store_vanishing_mid_upload(
    db_dsn: str, pool: Pool, s3_settings: Settings, s3_endpoint: str
) -> None:
    """The store goes away after part of a multipart upload: the job asks for a retry, the
    archive stays published and served from PostgreSQL; when the store is back, the retry
    clears the unfinished upload and the copy is verified."""
    data = random_bytes(BIG, seed=10)
    row = await publish_bytes(pool, "2026-08", data)
    assert row.file_name is not None
    bucket = str(s3_settings.s3_bucket)
    async with relay_to(s3_endpoint) as relay:
        via_relay = dataclasses.replace(s3_settings, s3_endpoint_url=relay.endpoint)
        store = S3Store(via_relay)
        ctx = await job_context(via_relay, pool, now=row.created_at, job_id=f"mirror:{row.id}")
        ctx[context.MIRROR] = ArchiveMirror(pool, store)
        try:
            relay.cut_after(PART + MIB)  # into the second part
            with pytest.raises(Retry):
                await mirror_archive(ctx, row.id)
            assert relay.cut.is_set()
            assert incomplete_uploads(s3_endpoint, bucket) == ["db/" + row.file_name]
            recorded = (await row_of(pool, row.id)).mirror
            assert recorded.verified_at is None
            assert recorded.error is not None
            assert "cannot reach S3" in recorded.error

            async with serving(db_dsn, pool, settings=s3_settings) as api:
                r = await api.get(f"/api/v1/database/files/{row.file_name}")
                assert r.status == 200
                assert await r.read() == data

            await relay.start()
            ctx["job_try"] = 2
            summary = await mirror_archive(ctx, row.id)
        finally:
            await close_context(ctx)
            store.close()
    assert summary["outcome"] == "uploaded"
    assert incomplete_uploads(s3_endpoint, bucket) == []
    assert object_bytes(s3_endpoint, bucket, "db/" + row.file_name) == data
    assert (await row_of(pool, row.id)).mirror.verified_at is not None


async def test_refused_credentials_fail_the_job_once_with_a_clear_error(
    pool: Pool, s3_settings: Settings
) -> None:
    row = await publish_bytes(pool, "2026-08", random_bytes(100_000, seed=11))
    with moto_server(auth=True) as refusing:
        settings = dataclasses.replace(s3_settings, s3_endpoint_url=refusing)
        store = S3Store(settings)
        ctx = await job_context(settings, pool, now=row.created_at, job_id=f"mirror:{row.id}")
        ctx[context.MIRROR] = ArchiveMirror(pool, store)
        try:
            with pytest.raises(MirrorFailed) as failed:
                await mirror_archive(ctx, row.id)  # raised as is: no Retry, no crash loop
        finally:
            await close_context(ctx)
            store.close()
    assert not failed.value.transient
    assert "S3 refused" in str(failed.value)
    assert "InvalidAccessKeyId" in str(failed.value)
    recorded = (await row_of(pool, row.id)).mirror
    assert recorded.verified_at is None
    assert recorded.error == str(failed.value)


@pytest.mark.slow
async def test_a_real_worker_publishes_then_mirrors(
    pool: Pool, s3_settings: Settings, s3_endpoint: str
) -> None:
    """``gomoku-archive worker --burst``: the planner queues the month, the export publishes it
    and queues ``mirror:<id>`` for the archive and for its Parquet companion, which upload and
    verify; ``jobs`` shows the results."""
    month = last_closed_month()
    await seed_month(s3_settings.database_url, month, 30)
    env = mirror_env(s3_settings, EXPORT_FIRST_MONTH=str(month))
    done = run_cli("worker", "--burst", env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    async with pool.acquire() as conn:
        row = await archive_store.published_for_month(conn, str(month))
        assert row is not None
        companion = await companion_store.served_companion_id(conn, row.id)
    assert companion is not None
    assert row.file_name is not None
    assert row.mirror.verified_at is not None
    assert (await row_of(pool, companion)).mirror.verified_at is not None
    stored = object_bytes(s3_endpoint, str(s3_settings.s3_bucket), "db/" + row.file_name)
    assert hashlib.sha256(stored).hexdigest() == row.sha256
    mirror_lines = [json.loads(x) for x in done.stdout.splitlines() if '"mirror_job"' in x]
    # Two jobs a worker may run at once: in either order.
    assert sorted((x["outcome"], x["archive_id"]) for x in mirror_lines) == [
        ("uploaded", row.id),
        ("uploaded", companion),
    ]
    assert all("testing" not in x for x in done.stdout.splitlines()), "no credentials in logs"

    jobs = json.loads(run_cli("jobs", "--json", env=env).stdout)
    results = {r["id"]: r for r in jobs["jobs"]["recentResults"]}
    assert results[f"mirror:{row.id}"]["success"] is True
    assert results[f"mirror:{row.id}"]["outcome"] == "uploaded"


@pytest.mark.slow
async def test_credentials_revoked_after_the_start_never_block_publication(
    db_dsn: str, pool: Pool, s3_settings: Settings
) -> None:
    """A store that refuses every request once the worker has started (its credentials
    revoked): the month is published and served from PostgreSQL, each mirror job (the
    archive's and its Parquet companion's) fails once (no retries, no crash loop, no
    traceback) and says why in ``jobs``."""
    month = last_closed_month()
    await seed_month(s3_settings.database_url, month, 30)
    # Two requests pass: the test's CreateBucket and the worker's HeadBucket at its start.
    with moto_server(auth=True, free_requests=2) as refusing:
        bucket = new_bucket(refusing)
        env = mirror_env(
            s3_settings, EXPORT_FIRST_MONTH=str(month), S3_ENDPOINT_URL=refusing, S3_BUCKET=bucket
        )
        done = run_cli("worker", "--burst", env=env, timeout=120)
        jobs = json.loads(run_cli("jobs", "--json", env=env).stdout)
    assert done.returncode == 0, done.stderr
    async with pool.acquire() as conn:
        row = await archive_store.published_for_month(conn, str(month))
    assert row is not None
    assert row.mirror.verified_at is None
    assert row.mirror.error is not None
    assert "InvalidAccessKeyId" in row.mirror.error
    mirror_lines = [json.loads(x) for x in done.stdout.splitlines() if '"mirror_job"' in x]
    assert [x["outcome"] for x in mirror_lines] == ["failed", "failed"]
    assert "Traceback" not in done.stdout + done.stderr, "an expected failure: arq's line only"
    arq_failure = [x for x in done.stdout.splitlines() if "failed, MirrorFailed" in x]
    assert len(arq_failure) == 2 and not any('"exception"' in x for x in arq_failure)
    result = {r["id"]: r for r in jobs["jobs"]["recentResults"]}[f"mirror:{row.id}"]
    assert result["success"] is False
    assert result["attempt"] == 1
    assert "InvalidAccessKeyId" in result["error"]
    status = next(m for m in jobs["months"] if m["month"] == str(month))
    assert status["published"]["mirror"]["verifiedAt"] is None
    assert "InvalidAccessKeyId" in status["published"]["mirror"]["error"]

    async with serving(db_dsn, pool, settings=s3_settings) as api:
        r = await api.get(f"/api/v1/database/files/{row.file_name}", allow_redirects=False)
        assert r.status == 200
        assert hashlib.sha256(await r.read()).hexdigest() == row.sha256


@pytest.mark.slow
def test_a_worker_that_cannot_use_its_bucket_refuses_to_start(
    s3_settings: Settings, s3_endpoint: str
) -> None:
    """Refused credentials, a bucket that does not exist, an endpoint nobody answers: the
    worker says which, in one line, before it starts anything."""
    with moto_server(auth=True) as refusing:
        cases = [
            (mirror_env(s3_settings, S3_ENDPOINT_URL=refusing), 2, "access denied"),
            (mirror_env(s3_settings, S3_BUCKET="gpa-no-such-bucket"), 2, "no such bucket"),
            (
                mirror_env(s3_settings, S3_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}"),
                3,
                "cannot reach s3://",
            ),
        ]
        for env, code, says in cases:
            started = time.monotonic()
            done = run_cli("worker", env=env, timeout=120)
            seconds = time.monotonic() - started
            assert done.returncode == code, done.stderr + done.stdout[-2000:]
            assert done.stderr.startswith("gomoku-archive: error: the S3 mirror cannot "), (
                done.stderr
            )
            assert says in done.stderr and "unset S3_BUCKET" in done.stderr
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
            assert '"worker_started"' not in done.stdout, "nothing started"
            assert seconds < 60


async def test_metrics_count_the_bucket_copies(
    pool: Pool, s3_settings: Settings, mirror: ArchiveMirror
) -> None:
    done = await publish_bytes(pool, "2026-08", random_bytes(100_000, seed=12))
    await publish_bytes(pool, "2026-09", random_bytes(100_000, seed=13))
    failing = await publish_bytes(pool, "2026-10", random_bytes(100_000, seed=14))
    result = await mirror.mirror(done.id)
    async with pool.acquire() as conn:
        await mirror_store.record_failure(conn, failing.id, "S3 refused: AccessDenied")

    metrics = Metrics()
    refresher = FreshnessRefresher(pool, s3_settings, metrics)
    try:
        await refresher.refresh()
    finally:
        await refresher.close()
    text = metrics.render().decode()
    assert 'gomoku_mirror_files{state="verified"} 1.0' in text
    assert 'gomoku_mirror_files{state="pending"} 2.0' in text
    assert 'gomoku_mirror_files{state="failing"} 1.0' in text
    assert f"gomoku_mirror_uploaded_bytes {float(result.uploaded_bytes)}" in text


async def test_the_store_killed_mid_upload_then_restarted(
    db_dsn: str, pool: Pool, s3_settings: Settings
) -> None:
    """``moto_server`` SIGKILLed during the second part: the job asks for a retry and the file
    is served from PostgreSQL; started again (empty: moto keeps nothing), the retry uploads and
    verifies the whole file."""
    data = random_bytes(BIG, seed=15)
    row = await publish_bytes(pool, "2026-08", data)
    assert row.file_name is not None
    with running_moto() as store_server:
        bucket = new_bucket(store_server.endpoint)
        async with relay_to(store_server.endpoint) as relay:
            settings = dataclasses.replace(
                s3_settings, s3_bucket=bucket, s3_endpoint_url=relay.endpoint
            )
            store = S3Store(settings)
            ctx = await job_context(settings, pool, now=row.created_at, job_id=f"mirror:{row.id}")
            ctx[context.MIRROR] = ArchiveMirror(pool, store)
            try:
                relay.cut_after(PART + MIB, then=store_server.kill)
                with pytest.raises(Retry):
                    await mirror_archive(ctx, row.id)
                async with serving(db_dsn, pool, settings=settings) as api:
                    r = await api.get(f"/api/v1/database/files/{row.file_name}")
                    assert r.status == 200
                    assert await r.read() == data

                store_server.start()
                client(store_server.endpoint).create_bucket(Bucket=bucket)
                await relay.start()
                ctx["job_try"] = 2
                summary = await mirror_archive(ctx, row.id)
            finally:
                await close_context(ctx)
                store.close()
        assert summary["outcome"] == "uploaded"
        assert incomplete_uploads(store_server.endpoint, bucket) == []
        assert object_bytes(store_server.endpoint, bucket, "db/" + row.file_name) == data
    assert (await row_of(pool, row.id)).mirror.verified_at is not None


async def test_a_companion_is_mirrored_checked_and_redirected_as_its_archive(
    db_dsn: str, pool: Pool, s3_settings: Settings, s3_endpoint: str, mirror: ArchiveMirror
) -> None:
    """The Parquet companion is a served file like its archive: the backfill mirrors both, its
    object has its own media type, the API redirects it once verified, and the content check
    withdraws a copy with wrong bytes of the right length."""
    archive = await publish_demo_month(pool, Month(2026, 8), 300)
    async with pool.acquire() as conn:
        (summary,) = await archive_store.manifest_summaries(conn)
        assert summary.parquet is not None
        companion = await archive_store.downloadable_archive(conn, summary.parquet.file_name)
    assert companion is not None and companion.file_name is not None
    report = await mirror.backfill()
    assert sorted(r.archive_id for r in report.results) == sorted([archive.id, companion.id])
    assert report.count("uploaded") == 2
    bucket, key = str(s3_settings.s3_bucket), "db/" + companion.file_name
    stored = object_bytes(s3_endpoint, bucket, key)
    assert hashlib.sha256(stored).hexdigest() == companion.sha256
    head = client(s3_endpoint).head_object(Bucket=bucket, Key=key)
    assert head["ContentType"] == "application/vnd.apache.parquet"
    assert head["CacheControl"] == "public, max-age=31536000, immutable"
    url = f"/api/v1/database/files/{companion.file_name}"
    async with serving(db_dsn, pool, settings=s3_settings) as api:
        r = await api.get(url, headers={"Range": "bytes=-8"}, allow_redirects=False)
        assert r.status == 302 and r.headers["Location"].startswith(f"{s3_endpoint}/{bucket}/")
        assert (await api.head(url)).headers["Content-Length"] == str(companion.bytes)

    wrong = bytes(b ^ 0xFF if i == len(stored) // 2 else b for i, b in enumerate(stored))
    client(s3_endpoint).put_object(Bucket=bucket, Key=key, Body=wrong)
    found = await mirror.check_content(sample_bytes=0, wait_seconds=5)  # every byte
    assert list(found.withdrawn) == [companion.id], found.summary()
    async with serving(db_dsn, pool, settings=s3_settings) as api:
        r = await api.get(url, allow_redirects=False)
        assert r.status == 200, "served by the API once withdrawn"
        assert hashlib.sha256(await r.read()).hexdigest() == companion.sha256
