"""The content check never loses its turn (issue 34), against moto and s3rver.

A real worker with both checks at their shortest period (5 s), which used to start in the same
second and take the same locks, so that the content pass skipped every copy a HEAD pass held and
logged it as checked: wrong bytes deep in a 13.7 MB file, in the bucket and behind a CDN, are now
withdrawn within the file's windows plus one content periods. Then, in process, what a pass does
with a copy that another job holds: it waits for it (bounded), and a copy it never gets is a
skip, logged at warning with its reason, never "checked"; a cancelled pass says what it left."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import structlog

from gomoku_archive.db import mirror_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.jobs.content_sample import windows_in
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import checksum_line
from gomoku_archive.settings import DEFAULT_MIRROR_CONTENT_SAMPLE_BYTES, Settings
from gomoku_archive.storage.mirror import ArchiveMirror
from gomoku_archive.storage.s3 import S3Store
from gomoku_archive.worker import context
from gomoku_archive.worker.mirror_jobs import check_mirror, check_mirror_content
from tests.integration.api_support import publish_bytes, random_bytes, serving
from tests.integration.s3_support import (
    COLLISION,
    LoopbackCdn,
    Store,
    client,
    new_bucket,
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

PERIOD = 5
"""Both checks' shortest period (MIRROR_CHECK_SECONDS and MIRROR_CONTENT_CHECK_SECONDS)."""
SAMPLE = DEFAULT_MIRROR_CONTENT_SAMPLE_BYTES
FILE_BYTES = 13_700_000
DAMAGE_AT = 10_000_000
PART = 10_000_000
"""S3_PART_SIZE: the copy's second part starts at the damage, so that the bucket's bytes can be
changed there without changing the object's ETag (see ``damage_the_bucket``)."""


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
        mirror_check_seconds=PERIOD,
        mirror_content_check_seconds=PERIOD,
        mirror_content_sample_bytes=SAMPLE,
    )


def damage_the_bucket(store: Store, bucket: str, key: str, data: bytes) -> None:
    """Change the object's bytes at DAMAGE_AT without changing its size or ETag, as bit rot in
    the store would, by what each store allows. s3rver keeps an object as a file and its MD5 (the
    ETag) in another: one byte of the file is flipped. moto keeps objects in memory: the file
    holds the first of two blocks with the same MD5 at DAMAGE_AT, the start of its second part,
    and the object is uploaded again with the other block in the same two parts; a multipart
    ETag is the MD5 of the parts' MD5s, so it stays, while 6 of the block's 128 bytes differ."""
    s3 = client(store.endpoint, store.credentials)
    before = s3.head_object(Bucket=bucket, Key=key)
    if store.data_dir is not None:
        [stored] = (store.data_dir / bucket).glob(f"{key}._S3rver_object")
        with stored.open("r+b") as file:
            file.seek(DAMAGE_AT)
            byte = file.read(1)
            file.seek(DAMAGE_AT)
            file.write(bytes([byte[0] ^ 1]))
    else:
        wrong = data[:DAMAGE_AT] + COLLISION[1] + data[DAMAGE_AT + len(COLLISION[1]) :]
        upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        parts = []
        for number, start in enumerate(range(0, len(wrong), PART), start=1):
            body = wrong[start : start + PART]
            etag = s3.upload_part(
                Bucket=bucket, Key=key, UploadId=upload, PartNumber=number, Body=body
            )["ETag"]
            parts.append({"PartNumber": number, "ETag": etag})
        s3.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
        )
    after = s3.head_object(Bucket=bucket, Key=key)
    assert (after["ETag"], after["ContentLength"]) == (before["ETag"], before["ContentLength"])
    got = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={DAMAGE_AT}-{DAMAGE_AT + 127}")
    assert got["Body"].read() != data[DAMAGE_AT : DAMAGE_AT + 128], "the bucket serves it"


@pytest.mark.parametrize("where", ["bucket", "cdn"])
async def test_wrong_bytes_deep_in_a_big_file_are_withdrawn_within_its_windows_plus_one(
    db_dsn: str,
    pool: Pool,
    store: Store,
    s3_settings: Settings,
    where: str,
    tmp_path: Path,
) -> None:
    """The measure behind docs/operators/running.md ("Checking the copies"): how long after the
    damage downloads are still redirected to it, and how many content passes that took, in the
    worst case of a damage right after its window was read."""
    cdn = LoopbackCdn(store, str(s3_settings.s3_bucket)) if where == "cdn" else None
    if cdn is not None:
        await cdn.server.start_server()
        s3_settings = dataclasses.replace(s3_settings, cdn_base_url=cdn.base)
    data = random_bytes(FILE_BYTES, seed=341)
    data = data[:DAMAGE_AT] + COLLISION[0] + data[DAMAGE_AT + len(COLLISION[0]) :]
    row = await publish_bytes(pool, "2026-08", data)
    s3 = S3Store(s3_settings)
    try:
        assert (await ArchiveMirror(pool, s3).mirror(row.id)).action == "uploaded"
    finally:
        s3.close()
    windows = windows_in(row.bytes, SAMPLE)
    assert windows == 14
    # The worst case: the worker's first pass reads the window that holds DAMAGE_AT, right
    # before the damage, which is then found only when that window comes round again, after
    # every other window of the file. (The place is set as if the check had come round to it.)
    damaged_window = DAMAGE_AT // SAMPLE * SAMPLE
    async with pool.acquire() as conn:
        await conn.execute(
            "UPDATE archives SET content_offset = $2 WHERE id = $1", row.id, damaged_window
        )
    env = cli_env(
        database_url=db_dsn, redis_url=s3_settings.redis_url, first_month=Month(2026, 8)
    ) | store.credentials | {
        "S3_BUCKET": str(s3_settings.s3_bucket),
        "S3_PREFIX": "db/",
        "S3_ENDPOINT_URL": store.endpoint,
        "S3_PART_SIZE": str(PART),
        "MIRROR_CHECK_SECONDS": str(PERIOD),
        "MIRROR_CONTENT_CHECK_SECONDS": str(PERIOD),
        "MIRROR_CONTENT_SAMPLE_BYTES": str(SAMPLE),
    } | ({"CDN_BASE_URL": cdn.base} if cdn is not None else {})  # fmt: skip
    url = f"/api/v1/database/files/{row.file_name}"
    bound = (windows + 1) * PERIOD
    try:
        with workers(WorkerProcess(env, tmp_path / "worker.log")) as (worker,):
            async with serving(db_dsn, pool, settings=s3_settings) as api:

                async def redirected() -> bool:
                    response = await api.get(url, allow_redirects=False)
                    await response.read()
                    return response.status == 302

                await wait_until(redirected, seconds=60, what="the file to be redirected")
                await wait_until(
                    lambda: asyncio.sleep(0, any(p["fine"] for p in content_passes(worker))),
                    seconds=60,
                    what="a first content pass over the file",
                )
                assert await content_offset(pool, row.id) == damaged_window + SAMPLE
                if cdn is not None:
                    cdn.mode, cdn.damage_at = "wrong", DAMAGE_AT
                else:
                    key = f"db/{row.file_name}"
                    damage_the_bucket(store, str(s3_settings.s3_bucket), key, data)
                damaged = time.monotonic()
                before = len(content_passes(worker))
                while await redirected():
                    # Bounded by the promise itself, plus the poll's own step: the test must
                    # fail, not wait forever, on code that loses turns.
                    assert time.monotonic() - damaged < bound + 1, "still redirected"
                    await asyncio.sleep(0.2)
                seconds = time.monotonic() - damaged
                response = await api.get(url)
                assert response.status == 200 and len(await response.read()) == row.bytes
        every = content_passes(worker)
        withdrawn = [p for p in every if p["withdrawn"]]
        assert withdrawn, "a content pass withdrew the copy"
        through = every.index(withdrawn[0]) + 1
        for check in every[:through]:
            # The turn the old schedule lost: a pass that found the copy held and went on.
            assert check["fine"] + check["withdrawn"] == 1, f"a pass left the copy: {check}"
        passes = every[before:through]
        taken = len(passes)
        checksum_size = len(checksum_line(str(row.file_name), str(row.sha256)))
        print(
            f"{store.name}, {where}: one change at byte {DAMAGE_AT:,} of {row.bytes:,} "
            f"({windows} windows of {SAMPLE} bytes), both checks every {PERIOD} s: withdrawn "
            f"{seconds:.1f} s after the damage (the bound: {bound} s), by the {taken}th content "
            f"pass after it, each of which read {passes[0]['bytesRead']}"
        )
        assert seconds <= bound, f"withdrawn within {windows} + 1 content periods"
        assert taken == windows, "one window a pass: every other window, then this one"
        problem = withdrawn[0]["problems"][str(row.id)]
        found_by = f"{damaged_window}-{damaged_window + SAMPLE - 1}"
        assert found_by in problem, "found by the window that holds it"
        for check in passes:
            assert check["outcome"] == "checked" and check["skipped"] == 0, check
            assert check["bytesRead"]["store"] in (SAMPLE, SAMPLE + checksum_size), check
        assert worker.events("mirror_copy_unchecked") == [], "no copy ever skipped"
        withdrawals = worker.events(
            "mirror_cdn_withdrawn" if cdn is not None else "mirror_target_withdrawn"
        )
        assert [w["check"] for w in withdrawals] == ["content"], "HEAD cannot see it"
    finally:
        if cdn is not None:
            await cdn.server.close()


def content_passes(worker: WorkerProcess) -> list[dict[str, Any]]:
    return worker.events("mirror_content_check")


# --- a copy another job holds -------------------------------------------------------------------


async def run_check(kind: str, settings: Settings, pool: Pool, mirror: ArchiveMirror) -> Any:
    ctx = await job_context(settings, pool, now=datetime.now(UTC))
    ctx[context.MIRROR] = mirror
    try:
        job = check_mirror_content if kind == "content" else check_mirror
        return await job(ctx)
    finally:
        await close_context(ctx)


async def hold(pool: Pool, archive_id: int, seconds: float, held: asyncio.Event) -> None:
    """Hold the archive's mirror lock for ``seconds``, as a mirror job or the other pass."""
    async with pool.acquire() as conn:
        assert await mirror_store.try_lock_archive(conn, archive_id)
        held.set()
        try:
            await asyncio.sleep(seconds)
        finally:
            await mirror_store.unlock_archive(conn, archive_id)


async def content_offset(pool: Pool, archive_id: int) -> int:
    async with pool.acquire() as conn:
        offset: int = await conn.fetchval(
            "SELECT content_offset FROM archives WHERE id = $1", archive_id
        )
    return offset


@pytest.mark.parametrize("kind", ["content", "head"])
async def test_a_pass_waits_for_a_held_copy_and_logs_one_it_never_gets(
    pool: Pool, s3_settings: Settings, kind: str
) -> None:
    """Copy A is held for a second from the pass's start (as a HEAD pass holds a copy), copy B
    for longer than the pass may wait (half its period, 2.5 s: as a long upload): A is checked
    once its lock is free, B is skipped, with a warning that says why, and the pass is
    ``incomplete``."""
    settings = dataclasses.replace(s3_settings, mirror_content_sample_bytes=64 * 1024)
    s3 = S3Store(settings)
    mirror = ArchiveMirror(pool, s3)
    soon = await publish_bytes(pool, "2026-08", random_bytes(200_000, seed=342))
    never = await publish_bytes(pool, "2026-09", random_bytes(200_000, seed=343))
    free = await publish_bytes(pool, "2026-10", random_bytes(200_000, seed=344))
    try:
        for row in (soon, never, free):
            assert (await mirror.mirror(row.id)).action == "uploaded"
        held = [asyncio.Event(), asyncio.Event()]
        holders = [
            asyncio.create_task(hold(pool, soon.id, 1.0, held[0])),
            asyncio.create_task(hold(pool, never.id, PERIOD + 5, held[1])),
        ]
        await asyncio.gather(*(h.wait() for h in held))
        started = time.monotonic()
        with structlog.testing.capture_logs() as logs:
            summary = await run_check(kind, settings, pool, mirror)
        seconds = time.monotonic() - started
        await asyncio.gather(*holders)
    finally:
        s3.close()
    assert summary["outcome"] == "incomplete", summary
    assert (summary["checked"], summary["fine"], summary["skipped"]) == (2, 2, 1), summary
    assert "stayed held" in summary["problems"][str(never.id)]
    assert str(soon.id) not in summary["problems"], "waited for, then checked"
    assert seconds >= PERIOD / 2 - 0.5, "it waited for the held copy, half its period"
    assert seconds < PERIOD + 4, "and no longer: B stayed held for 10 s"
    skips = [e for e in logs if e["event"] == "mirror_copy_unchecked"]
    assert [(e["archive_id"], e["cause"], e["log_level"]) for e in skips] == [
        (never.id, "busy", "warning")
    ]
    assert skips[0]["check"] == kind and "stayed held" in skips[0]["reason"]
    [line] = [e for e in logs if e["event"] in ("mirror_check", "mirror_content_check")]
    assert (line["outcome"], line["log_level"]) == ("incomplete", "warning")
    if kind == "content":
        assert await content_offset(pool, soon.id) == 64 * 1024, "its window moved on"
        assert await content_offset(pool, never.id) == 0, "its window waits for the next pass"


async def test_a_cancelled_pass_says_which_copies_it_left(
    pool: Pool, s3_settings: Settings
) -> None:
    """arq's timeout or a shutdown cancels a pass midway: the copies it had not reached are
    logged at warning, and the pass's line says ``unfinished``."""
    s3 = S3Store(s3_settings)
    mirror = ArchiveMirror(pool, s3)
    row = await publish_bytes(pool, "2026-08", random_bytes(100_000, seed=345))
    try:
        assert (await mirror.mirror(row.id)).action == "uploaded"
        held = asyncio.Event()
        holder = asyncio.create_task(hold(pool, row.id, 3, held))
        await held.wait()
        with structlog.testing.capture_logs() as logs:
            check = asyncio.create_task(run_check("content", s3_settings, pool, mirror))
            await asyncio.sleep(1)  # waiting for the held copy
            check.cancel()
            with pytest.raises(asyncio.CancelledError):
                await check
        await holder
    finally:
        s3.close()
    left = [e for e in logs if e["event"] == "mirror_copy_unchecked"]
    assert [(e["archive_id"], e["cause"], e["log_level"]) for e in left] == [
        (row.id, "cancelled", "warning")
    ]
    [line] = [e for e in logs if e["event"] == "mirror_content_check"]
    assert (line["outcome"], line["unfinished"], line["log_level"]) == ("unfinished", 1, "warning")
