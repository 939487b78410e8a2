"""Delivery through the S3 mirror against two independent S3 implementations, each a separate
process on loopback: moto (server mode) and s3rver (Node). For each: the upload (multipart and
single), the read-back, the scrub, the cheap HEAD check withdrawing a deleted or changed copy at
once, and a client without credentials following the API's redirect to the right bytes. Then
the CDN gate (a loopback "CDN" in front of the bucket): a copy is a redirect target only after
an anonymous read of its CDN address returned its bytes; and the redirect of Compose's layout,
signed for the address downloaders reach. Last, the content check: wrong bytes of the right
length (and ETag), in the bucket and at the CDN, which no HEAD can see."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from gomoku_archive.db import mirror_store
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
from gomoku_archive.worker.mirror_jobs import check_mirror, check_mirror_content, mirror_archive
from tests.integration.api_support import publish_bytes, random_bytes, serving
from tests.integration.s3_support import (
    COLLISION,
    CREDENTIALS,
    LoopbackCdn,
    Store,
    client,
    moto_server,
    new_bucket,
    object_bytes,
    running_store,
)
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    close_context,
    job_context,
    wait_until,
    workers,
)

MIB = 1024 * 1024
PART = 5 * MIB
BIG = 2 * PART + 123_456


@pytest.fixture(scope="module", params=["moto", "s3rver"])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    with running_store(request.param, tmp_path_factory.mktemp("s3rver")) as running:
        yield running


@pytest.fixture
def s3_settings(settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    return dataclasses.replace(
        settings,
        s3_bucket=new_bucket(store.endpoint, store.credentials),
        s3_prefix="db/",
        s3_endpoint_url=store.endpoint,
        s3_part_size=PART,
    )


@pytest.fixture
async def mirror(s3_settings: Settings, pool: Pool) -> AsyncIterator[ArchiveMirror]:
    s3 = S3Store(s3_settings)
    try:
        yield ArchiveMirror(pool, s3)
    finally:
        s3.close()


async def row_of(pool: Pool, archive_id: int) -> ArchiveRow:
    async with pool.acquire() as conn:
        row = await mirror_store.servable_archive(conn, archive_id)
    assert row is not None
    return row


async def follow(api: Any, url: str) -> tuple[int, str]:
    """GET through the API as a downloader without credentials: the API's answer, then the
    redirect's target with a plain client; (status, sha256 of the body)."""
    first = await api.get(url, allow_redirects=False)
    if first.status != 302:
        return first.status, hashlib.sha256(await first.read()).hexdigest()
    async with (
        aiohttp.ClientSession() as anonymous,
        anonymous.get(first.headers["Location"]) as got,
    ):
        return got.status, hashlib.sha256(await got.read()).hexdigest()


async def test_upload_verify_scrub_and_redirect(
    db_dsn: str,
    pool: Pool,
    store: Store,
    s3_settings: Settings,
    mirror: ArchiveMirror,
    capsys: pytest.CaptureFixture[str],
) -> None:
    big = await publish_bytes(pool, "2026-08", random_bytes(BIG, seed=81))
    small = await publish_bytes(pool, "2026-09", random_bytes(70_000, seed=82))
    assert big.file_name is not None and small.file_name is not None
    bucket = str(s3_settings.s3_bucket)

    results = [await mirror.mirror(row.id) for row in (big, small)]
    assert [r.action for r in results] == ["uploaded", "uploaded"], store.name
    for row, size in ((big, BIG), (small, 70_000)):
        stored = object_bytes(store.endpoint, bucket, "db/" + str(row.file_name), store.credentials)
        assert len(stored) == size and hashlib.sha256(stored).hexdigest() == row.sha256
        assert (await row_of(pool, row.id)).mirror.verified_at is not None
    assert (await mirror.mirror(big.id)).action == "skipped", "idempotent"

    report = await mirror.scrub()
    assert report.summary()["fine"] == 2 and not report.failures

    async with serving(db_dsn, pool, settings=s3_settings) as api:
        for row in (big, small):
            url = f"/api/v1/database/files/{row.file_name}"
            first = await api.get(url, allow_redirects=False)
            assert first.status == 302
            assert "X-Amz-Signature=" in first.headers["Location"], "a presigned URL"
            assert await follow(api, url) == (200, row.sha256), store.name
            line = checksum_line(str(row.file_name), str(row.sha256)).encode()
            assert await follow(api, url + ".sha256") == (200, hashlib.sha256(line).hexdigest())
    logged = capsys.readouterr()
    assert "http_request" in logged.out, "the access log was captured"
    assert "Signature" not in logged.out + logged.err, "a presigned URL is never logged"


async def test_a_deleted_or_changed_copy_is_withdrawn_by_the_head_check(
    db_dsn: str, pool: Pool, store: Store, s3_settings: Settings, mirror: ArchiveMirror
) -> None:
    gone = await publish_bytes(pool, "2026-08", random_bytes(60_000, seed=83))
    changed = await publish_bytes(pool, "2026-09", random_bytes(60_000, seed=84))
    kept = await publish_bytes(pool, "2026-10", random_bytes(60_000, seed=85))
    for row in (gone, changed, kept):
        await mirror.mirror(row.id)
    bucket = str(s3_settings.s3_bucket)
    s3 = client(store.endpoint, store.credentials)
    s3.delete_object(Bucket=bucket, Key=f"db/{gone.file_name}")
    s3.put_object(Bucket=bucket, Key=f"db/{changed.file_name}", Body=random_bytes(60_000, seed=9))

    ctx = await job_context(s3_settings, pool, now=gone.created_at)
    ctx[context.MIRROR] = mirror
    try:
        summary = await check_mirror(ctx)
        snapshot = await read_snapshot(ctx["redis"])
    finally:
        await close_context(ctx)
    assert summary["checked"] == 3
    assert summary["withdrawn"] == 2 and summary["fine"] == 1, summary
    assert sorted(summary["repairsQueued"]) == sorted([gone.id, changed.id])
    assert {j.job_id for j in snapshot.queued} >= {f"mirror:{gone.id}", f"mirror:{changed.id}"}
    problems = summary["problems"]
    assert "the object is gone" in problems[str(gone.id)]
    assert "ETag changed" in problems[str(changed.id)]
    assert (await row_of(pool, kept.id)).mirror.head_checked_at is not None

    async with serving(db_dsn, pool, settings=s3_settings) as api:
        for row in (gone, changed):
            assert await follow(api, f"/api/v1/database/files/{row.file_name}") == (
                200,
                row.sha256,
            ), "served by the API, never a 404 or wrong bytes from the bucket"
        first = await api.get(f"/api/v1/database/files/{kept.file_name}", allow_redirects=False)
        assert first.status == 302

    # The repair the check queued puts the copies back.
    for row in (gone, changed):
        assert (await mirror.mirror(row.id)).action == "uploaded"
        assert (await row_of(pool, row.id)).mirror.verified_at is not None


async def test_a_store_without_multipart_listing_or_checksums_is_no_failure(
    pool: Pool, store: Store, mirror: ArchiveMirror
) -> None:
    """s3rver answers ListMultipartUploads with NotImplemented (and moto implements it): the
    abort step finds nothing to abort, and the upload goes on, verified by reading back."""
    row = await publish_bytes(pool, "2026-08", random_bytes(BIG, seed=86))
    assert await mirror.store.abort_incomplete("db/" + str(row.file_name)) == 0
    assert (await mirror.mirror(row.id)).action == "uploaded"


# --- behind a CDN ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def moto_store() -> Iterator[Store]:
    with moto_server() as endpoint:
        yield Store("moto", endpoint, CREDENTIALS)


async def test_a_cdn_copy_is_a_target_only_after_an_anonymous_read(
    db_dsn: str,
    pool: Pool,
    settings: Settings,
    moto_store: Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CDN gate is the same code whatever the store behind: one store does."""
    store = moto_store
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    s3_settings = dataclasses.replace(
        settings,
        s3_bucket=new_bucket(store.endpoint, store.credentials),
        s3_prefix="db/",
        s3_endpoint_url=store.endpoint,
        s3_part_size=PART,
    )
    cdn = LoopbackCdn(store, str(s3_settings.s3_bucket))
    await cdn.server.start_server()
    settings = dataclasses.replace(s3_settings, cdn_base_url=cdn.base + "/")
    s3 = S3Store(settings)
    mirror = ArchiveMirror(pool, s3)
    row = await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=87))
    url = f"/api/v1/database/files/{row.file_name}"
    try:
        cdn.mode = "wrong"
        with pytest.raises(MirrorFailed, match="not through the CDN") as failed:
            await mirror.mirror(row.id)
        assert failed.value.transient, "the job tries again later"
        recorded = (await row_of(pool, row.id)).mirror
        assert recorded.verified_at is not None, "the bucket's copy itself is fine"
        assert recorded.cdn_verified_at is None and "sha256" in str(recorded.cdn_error)

        metrics = Metrics()
        refresher = FreshnessRefresher(pool, settings, metrics)
        await refresher.refresh()
        await refresher.close()
        assert 'gomoku_mirror_files{state="cdn_unverified"} 1.0' in metrics.render().decode()

        async with serving(db_dsn, pool, settings=settings) as api:
            assert await follow(api, url) == (200, row.sha256), "served by the API meanwhile"

        cdn.mode = "ok"
        ctx = await job_context(settings, pool, now=row.created_at, job_id=f"mirror:{row.id}")
        ctx[context.MIRROR] = mirror
        try:
            summary = await mirror_archive(ctx, row.id)
        finally:
            await close_context(ctx)
        assert summary["outcome"] == "present", "nothing sent again: only the CDN was read"
        recorded = (await row_of(pool, row.id)).mirror
        assert recorded.cdn_verified_at is not None and recorded.cdn_error is None
        assert recorded.cdn_url == f"{cdn.base}/db/{row.file_name}"

        async with serving(db_dsn, pool, settings=settings) as api:
            first = await api.get(url, allow_redirects=False)
            assert first.status == 302
            assert first.headers["Location"] == recorded.cdn_url
            assert first.headers["Cache-Control"] == "public, max-age=60"
            assert await follow(api, url) == (200, row.sha256)

            # The CDN starts refusing: the next periodic check withdraws the target at once.
            cdn.mode = "forbidden"
            ctx = await job_context(settings, pool, now=row.created_at)
            ctx[context.MIRROR] = mirror
            try:
                checked = await check_mirror(ctx)
            finally:
                await close_context(ctx)
            assert checked["withdrawn"] == 1 and checked["repairsQueued"] == [row.id]
            assert "HTTP 403" in json.dumps(checked["problems"])
            assert await follow(api, url) == (200, row.sha256)
    finally:
        s3.close()
        await cdn.server.close()


async def test_compose_redirects_are_signed_for_the_address_downloaders_reach(
    db_dsn: str, pool: Pool, store: Store, s3_settings: Settings, mirror: ArchiveMirror
) -> None:
    """Compose: the service reaches the store as http://s3:9000, a laptop as the published
    http://127.0.0.1:9000. Here: the service uses 127.0.0.1, downloaders localhost."""
    row = await publish_bytes(pool, "2026-08", random_bytes(90_000, seed=88))
    await mirror.mirror(row.id)
    public = store.endpoint.replace("127.0.0.1", "localhost")
    settings = dataclasses.replace(s3_settings, s3_public_endpoint_url=public)
    async with serving(db_dsn, pool, settings=settings) as api:
        url = f"/api/v1/database/files/{row.file_name}"
        first = await api.get(url, allow_redirects=False)
        assert first.headers["Location"].startswith(public + "/"), first.headers["Location"]
        assert await follow(api, url) == (200, row.sha256), store.name


async def test_a_wiped_store_stops_being_redirected_to_within_the_check_period(
    db_dsn: str,
    pool: Pool,
    settings: Settings,
    moto_store: Store,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A real worker with MIRROR_CHECK_SECONDS=5: the bucket is emptied under a redirected
    file, and the API stops redirecting to it within the period (plus the check's own time),
    then the queued repair makes it a target again."""
    period = 5
    store = moto_store
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    s3_settings = dataclasses.replace(
        settings,
        s3_bucket=new_bucket(store.endpoint, store.credentials),
        s3_prefix="db/",
        s3_endpoint_url=store.endpoint,
    )
    row = await publish_bytes(pool, "2026-08", random_bytes(80_000, seed=89))
    s3 = S3Store(s3_settings)
    try:
        assert (await ArchiveMirror(pool, s3).mirror(row.id)).action == "uploaded"
    finally:
        s3.close()
    env = cli_env(
        database_url=db_dsn, redis_url=s3_settings.redis_url, first_month=Month(2026, 8)
    ) | store.credentials | {
        "S3_BUCKET": str(s3_settings.s3_bucket),
        "S3_PREFIX": "db/",
        "S3_ENDPOINT_URL": store.endpoint,
        "MIRROR_CHECK_SECONDS": str(period),
    }  # fmt: skip
    url = f"/api/v1/database/files/{row.file_name}"
    with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
        async with serving(db_dsn, pool, settings=s3_settings) as api:

            async def redirected() -> bool:
                response = await api.get(url, allow_redirects=False)
                await response.read()
                return response.status == 302

            await wait_until(redirected, seconds=30, what="the file to be redirected")
            await wait_until(
                lambda: asyncio.sleep(0, bool(worker.events("mirror_check"))),
                seconds=30,
                what="a first periodic check",
            )
            s3c = client(store.endpoint, store.credentials)
            for key in (f"db/{row.file_name}", f"db/{row.file_name}.sha256"):
                s3c.delete_object(Bucket=str(s3_settings.s3_bucket), Key=key)
            wiped = time.monotonic()
            while await redirected():
                assert time.monotonic() - wiped < period + 5, "still redirected to a 404"
                await asyncio.sleep(0.1)
            withdrawn_after = time.monotonic() - wiped
            print(f"withdrawn {withdrawn_after:.1f} s after the wipe (period {period} s)")
            assert await follow(api, url) == (200, row.sha256)
            await wait_until(redirected, seconds=60, what="the repaired copy")
    assert object_bytes(
        store.endpoint, str(s3_settings.s3_bucket), f"db/{row.file_name}", store.credentials
    ) == random_bytes(80_000, seed=89)


async def test_an_api_without_credentials_to_sign_with_serves_the_file_itself(
    db_dsn: str,
    pool: Pool,
    settings: Settings,
    moto_store: Store,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    store = moto_store
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    s3_settings = dataclasses.replace(
        settings,
        s3_bucket=new_bucket(store.endpoint, store.credentials),
        s3_prefix="db/",
        s3_endpoint_url=store.endpoint,
    )
    row = await publish_bytes(pool, "2026-08", random_bytes(50_000, seed=90))
    s3 = S3Store(s3_settings)
    try:
        await ArchiveMirror(pool, s3).mirror(row.id)
    finally:
        s3.close()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    async with serving(db_dsn, pool, settings=s3_settings) as api:
        url = f"/api/v1/database/files/{row.file_name}"
        assert await follow(api, url) == (200, row.sha256), "served here, not a 500"


# --- the content check: wrong bytes of the right length ----------------------------------------

SAMPLE = 64 * 1024
CONTENT_PERIOD = 900
NOW = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


async def content_check(settings: Settings, pool: Pool, mirror: ArchiveMirror) -> Any:
    """One content pass (each reads the next window of every copy: their places are kept in
    the database)."""
    ctx = await job_context(settings, pool, now=NOW)
    ctx[context.MIRROR] = mirror
    try:
        return await check_mirror_content(ctx)
    finally:
        await close_context(ctx)


async def head_check(settings: Settings, pool: Pool, mirror: ArchiveMirror) -> Any:
    ctx = await job_context(settings, pool, now=NOW)
    ctx[context.MIRROR] = mirror
    try:
        return await check_mirror(ctx)
    finally:
        await close_context(ctx)


async def content_state(pool: Pool, archive_id: int) -> tuple[int, Any, Any]:
    """The copy's ``content_offset``, ``content_cycle_started_at`` and ``content_checked_at``."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT content_offset, content_cycle_started_at, content_checked_at "
            "FROM archives WHERE id = $1",
            archive_id,
        )
    assert row is not None
    return row["content_offset"], row["content_cycle_started_at"], row["content_checked_at"]


async def test_wrong_bytes_of_the_right_length_in_the_bucket_are_found_by_content(
    db_dsn: str, pool: Pool, store: Store, s3_settings: Settings, mirror: ArchiveMirror
) -> None:
    """The bucket's object is replaced by other bytes of its length and ETag (bit rot, a bad
    replication, a hand-made copy): HEAD sees nothing, and the API keeps redirecting to the
    wrong bytes, until the content check reads the window that holds the damage. It then
    withdraws the copy at once and queues its repair, which puts the right bytes back. Each
    pass reads the window after the copy's last right one; the pass that ends the file records
    the copy's full comparison."""
    tail = random_bytes(5 * SAMPLE - 128 - 1000, seed=91)  # five windows, the last one short
    row = await publish_bytes(pool, "2026-08", COLLISION[0] + tail)
    assert (await mirror.mirror(row.id)).action == "uploaded"
    settings = dataclasses.replace(
        s3_settings,
        mirror_content_check_seconds=CONTENT_PERIOD,
        mirror_content_sample_bytes=SAMPLE,
    )
    checksum_size = len(checksum_line(str(row.file_name), str(row.sha256)))
    for _window in range(3):
        clean = await content_check(settings, pool, mirror)
        assert (clean["outcome"], clean["fine"], clean["withdrawn"]) == ("checked", 1, 0)
        assert clean["bytesRead"] == {
            "store": SAMPLE + checksum_size,
            "cdn": 0,
            "database": SAMPLE,
        }, "one window from the bucket and from PostgreSQL, and the checksum file"
    offset, started, full = await content_state(pool, row.id)
    assert (offset, full) == (3 * SAMPLE, None) and started is not None, "three windows read"

    bucket, key = str(s3_settings.s3_bucket), f"db/{row.file_name}"
    s3 = client(store.endpoint, store.credentials)
    before = s3.head_object(Bucket=bucket, Key=key)
    s3.put_object(Bucket=bucket, Key=key, Body=COLLISION[1] + tail)
    after = s3.head_object(Bucket=bucket, Key=key)
    assert (after["ETag"], after["ContentLength"]) == (before["ETag"], before["ContentLength"])
    url = f"/api/v1/database/files/{row.file_name}"

    head = await head_check(settings, pool, mirror)
    assert (head["fine"], head["withdrawn"]) == (1, 0), "HEAD cannot see it"
    async with serving(db_dsn, pool, settings=settings) as api:
        status, sha256 = await follow(api, url)
        assert status == 200 and sha256 != row.sha256, "downloads get the wrong bytes"

    for window in (3, 4):
        elsewhere = await content_check(settings, pool, mirror)
        assert (elsewhere["fine"], elsewhere["withdrawn"]) == (1, 0), f"window {window} is fine"
    offset, started_again, full = await content_state(pool, row.id)
    assert offset == 0 and started_again == started, "the last window ended the cycle"
    assert full is not None and full > started, "and recorded the copy's full comparison"
    found = await content_check(settings, pool, mirror)  # window 0
    assert found["withdrawn"] == 1 and found["repairsQueued"] == [row.id], found
    assert "bytes 0-65535" in found["problems"][str(row.id)]
    assert found["bytesRead"] == {"store": SAMPLE, "cdn": 0, "database": SAMPLE}
    assert await content_state(pool, row.id) == (0, None, full), "read from the start again"
    async with serving(db_dsn, pool, settings=settings) as api:
        assert await follow(api, url) == (200, row.sha256), "served by the API at once"

    assert (await mirror.mirror(row.id)).action == "uploaded", "the repair"
    assert object_bytes(store.endpoint, bucket, key, store.credentials) == COLLISION[0] + tail
    async with serving(db_dsn, pool, settings=settings) as api:
        first = await api.get(url, allow_redirects=False)
        assert first.status == 302
        assert await follow(api, url) == (200, row.sha256)
    whole_files = dataclasses.replace(settings, mirror_content_sample_bytes=0)
    whole = await content_check(whole_files, pool, mirror)
    assert whole["fine"] == 1 and whole["bytesRead"]["store"] == row.bytes + checksum_size
    offset, started, full_again = await content_state(pool, row.id)
    assert offset == 0 and full_again is not None and full_again > full, "one window: a cycle"


async def test_a_cdn_serving_wrong_bytes_of_the_right_length_is_withdrawn(
    db_dsn: str, pool: Pool, settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a CDN: its edge serves the right length with one byte wrong, in the third of
    four windows. HEAD (status, length) passes; the content check reads that window at the
    CDN address as a downloader would, with a Range request, and withdraws the copy."""
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    bucket = new_bucket(store.endpoint, store.credentials)
    cdn = LoopbackCdn(store, bucket)
    await cdn.server.start_server()
    cdn_settings = dataclasses.replace(
        settings,
        s3_bucket=bucket,
        s3_prefix="db/",
        s3_endpoint_url=store.endpoint,
        cdn_base_url=cdn.base,
        mirror_content_check_seconds=CONTENT_PERIOD,
        mirror_content_sample_bytes=SAMPLE,
    )
    s3 = S3Store(cdn_settings)
    mirror = ArchiveMirror(pool, s3)
    row = await publish_bytes(pool, "2026-08", random_bytes(4 * SAMPLE, seed=92))
    url = f"/api/v1/database/files/{row.file_name}"
    try:
        assert (await mirror.mirror(row.id)).action == "uploaded"
        cdn.mode, cdn.damage_at = "wrong", 2 * SAMPLE + 77
        head = await head_check(cdn_settings, pool, mirror)
        assert (head["fine"], head["withdrawn"]) == (1, 0), "HEAD cannot see it"
        async with serving(db_dsn, pool, settings=cdn_settings) as api:
            status, sha256 = await follow(api, url)
            assert status == 200 and sha256 != row.sha256, "downloads get the wrong bytes"

        checksum_size = len(checksum_line(str(row.file_name), str(row.sha256)))
        for _window in (0, 1):
            cdn.served = 0
            clean = await content_check(cdn_settings, pool, mirror)
            assert (clean["fine"], clean["withdrawn"]) == (1, 0)
            assert clean["bytesRead"]["cdn"] == cdn.served == SAMPLE + checksum_size
        found = await content_check(cdn_settings, pool, mirror)  # window 2
        assert found["withdrawn"] == 1 and found["repairsQueued"] == [row.id], found
        problem = found["problems"][str(row.id)]
        assert f"Range bytes={2 * SAMPLE}-{3 * SAMPLE - 1}" in problem and "sha256" in problem
        recorded = (await row_of(pool, row.id)).mirror
        assert recorded.verified_at is not None, "the bucket's copy is fine"
        assert recorded.cdn_verified_at is None and recorded.cdn_error == problem
        async with serving(db_dsn, pool, settings=cdn_settings) as api:
            assert await follow(api, url) == (200, row.sha256), "served by the API at once"
    finally:
        s3.close()
        await cdn.server.close()


async def test_a_real_worker_withdraws_a_corrupt_cdn_copy_within_the_content_period(
    db_dsn: str,
    pool: Pool,
    settings: Settings,
    moto_store: Store,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The measure: a real worker (MIRROR_CONTENT_CHECK_SECONDS=5, whole files), a CDN that
    starts serving one wrong byte; how long downloads are still redirected to it, and what a
    pass reads."""
    period = 5
    store = moto_store
    for name, value in store.credentials.items():
        monkeypatch.setenv(name, value)
    bucket = new_bucket(store.endpoint, store.credentials)
    cdn = LoopbackCdn(store, bucket)
    await cdn.server.start_server()
    cdn_settings = dataclasses.replace(
        settings, s3_bucket=bucket, s3_prefix="db/", s3_endpoint_url=store.endpoint,
        cdn_base_url=cdn.base,
    )  # fmt: skip
    row = await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=93))
    s3 = S3Store(cdn_settings)
    try:
        assert (await ArchiveMirror(pool, s3).mirror(row.id)).action == "uploaded"
    finally:
        s3.close()
    env = cli_env(
        database_url=db_dsn, redis_url=settings.redis_url, first_month=Month(2026, 8)
    ) | store.credentials | {
        "S3_BUCKET": bucket,
        "S3_PREFIX": "db/",
        "S3_ENDPOINT_URL": store.endpoint,
        "CDN_BASE_URL": cdn.base,
        "MIRROR_CHECK_SECONDS": "3600",
        "MIRROR_CONTENT_CHECK_SECONDS": str(period),
        "MIRROR_CONTENT_SAMPLE_BYTES": "0",
    }  # fmt: skip
    url = f"/api/v1/database/files/{row.file_name}"
    try:
        with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
            async with serving(db_dsn, pool, settings=cdn_settings) as api:

                async def redirected() -> bool:
                    response = await api.get(url, allow_redirects=False)
                    await response.read()
                    return response.status == 302

                await wait_until(redirected, seconds=30, what="the file to be redirected")
                await wait_until(
                    lambda: asyncio.sleep(0, bool(worker.events("mirror_content_check"))),
                    seconds=30,
                    what="a first content pass",
                )
                cdn.mode, cdn.damage_at = "wrong", 123_456
                damaged = time.monotonic()
                while await redirected():
                    assert time.monotonic() - damaged < period + 5, "still redirected"
                    await asyncio.sleep(0.1)
                seconds = time.monotonic() - damaged
                assert await follow(api, url) == (200, row.sha256)
        passes = worker.events("mirror_content_check")
        withdrawn = next(p for p in passes if p["withdrawn"])
        fine = next(p for p in passes if p["fine"])
        print(
            f"content period {period} s, whole files: withdrawn {seconds:.1f} s after the CDN "
            f"went wrong; a pass read {fine['bytesRead']} for one {row.bytes}-byte file "
            f"in {fine['duration_s']} s"
        )
        checksum_size = len(checksum_line(str(row.file_name), str(row.sha256)))
        assert fine["bytesRead"] == {
            "store": row.bytes + checksum_size,
            "cdn": row.bytes + checksum_size,
            "database": 0,
        }, "whole files: their SHA-256 is known, PostgreSQL is not read"
        assert "sha256" in withdrawn["problems"][str(row.id)]
    finally:
        await cdn.server.close()
