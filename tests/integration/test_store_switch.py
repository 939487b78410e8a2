"""The mirror's state records which store holds a copy (issue 34, migration 0008). Two moto
servers stand for two stores with a bucket of the same name: the service's copies were
verified in the first; pointed at the second, the API must not redirect a download there (it
redirected to a 404 until ``mirror --verify``) until the worker's backfill has read the copy
back, or uploaded it, in the store now configured. Copies verified before the store was
recorded (NULL) are treated alike."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator

import aiohttp
import pytest

from gomoku_archive.db import mirror_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.storage.mirror import ArchiveMirror
from gomoku_archive.storage.s3 import S3Store, store_identity
from tests.integration.api_support import Client, publish_bytes, random_bytes, serving
from tests.integration.s3_support import CREDENTIALS, client, moto_server, new_bucket

FILES = "/api/v1/database/files/"


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    with moto_server() as first, moto_server() as second:
        yield first, second


def on(settings: Settings, endpoint: str) -> Settings:
    return dataclasses.replace(settings, s3_endpoint_url=endpoint)


async def mirror_with(pool: Pool, settings: Settings, archive_id: int) -> str:
    store = S3Store(settings)
    try:
        return (await ArchiveMirror(pool, store).mirror(archive_id)).action
    finally:
        store.close()


async def backfill_with(pool: Pool, settings: Settings) -> dict[str, object]:
    store = S3Store(settings)
    try:
        return (await ArchiveMirror(pool, store).backfill()).summary()
    finally:
        store.close()


async def answer(api: Client, url: str) -> tuple[int, str]:
    """The API's status for a GET, and where a redirect goes."""
    response = await api.get(url, allow_redirects=False)
    await response.read()
    return response.status, response.headers.get("Location", "")


async def fetched_sha256(location: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as anonymous, anonymous.get(location) as got:
        return got.status, hashlib.sha256(await got.read()).hexdigest()


async def test_a_copy_verified_in_another_store_is_no_target_until_read_back_here(
    db_dsn: str, pool: Pool, stores: tuple[str, str]
) -> None:
    first, second = stores
    bucket = new_bucket(first)
    client(second).create_bucket(Bucket=bucket)  # the same name, another store
    base = Settings(database_url=db_dsn, s3_bucket=bucket, s3_prefix="db/")
    row = await publish_bytes(pool, "2026-08", random_bytes(120_000, seed=342))
    url = FILES + str(row.file_name)
    assert await mirror_with(pool, on(base, first), row.id) == "uploaded"
    async with pool.acquire() as conn:
        recorded = await mirror_store.servable_archive(conn, row.id)
    assert recorded is not None and recorded.mirror.store == store_identity(first)

    async with serving(db_dsn, pool, settings=on(base, first)) as api:
        status, location = await answer(api, url)
        assert status == 302 and location.startswith(first + "/"), "the first store's copy"

    switched = on(base, second)
    async with serving(db_dsn, pool, settings=switched) as api:
        status, location = await answer(api, url)
        assert (status, location) == (200, ""), "served here: the second store never had it"
        async with pool.acquire() as conn:
            pending = await mirror_store.archives_to_mirror(
                conn, store_identity(second), bucket, "db/"
            )
            checked = await mirror_store.redirect_candidates(conn, store_identity(second), bucket)
        assert pending == [row.id], "the worker's backfill picks it up"
        assert checked == [], "the periodic checks look only at copies verified in this store"

        done = await backfill_with(pool, switched)
        assert (done["uploaded"], done["failed"]) == (1, 0), done
        status, location = await answer(api, url)
        assert status == 302 and location.startswith(second + "/"), "now the second's copy"
        assert await fetched_sha256(location) == (200, row.sha256)


async def test_a_copy_recorded_before_its_store_was_is_read_back_before_a_redirect(
    db_dsn: str, pool: Pool, stores: tuple[str, str]
) -> None:
    """A copy verified before migration 0008 has no store: not a target until the backfill
    reads it back (it is there and right: nothing is sent again)."""
    first, _ = stores
    settings = Settings(
        database_url=db_dsn, s3_bucket=new_bucket(first), s3_prefix="db/", s3_endpoint_url=first
    )
    row = await publish_bytes(pool, "2026-08", random_bytes(90_000, seed=343))
    url = FILES + str(row.file_name)
    assert await mirror_with(pool, settings, row.id) == "uploaded"
    async with pool.acquire() as conn:
        await conn.execute("UPDATE archives SET s3_store = NULL WHERE id = $1", row.id)
    async with serving(db_dsn, pool, settings=settings) as api:
        assert await answer(api, url) == (200, "")
        done = await backfill_with(pool, settings)
        assert (done["present"], done["uploaded"], done["uploaded_bytes"]) == (1, 0, 0), done
        status, location = await answer(api, url)
        assert status == 302
        assert await fetched_sha256(location) == (200, row.sha256)
