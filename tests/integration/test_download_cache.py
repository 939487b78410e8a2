"""The local file cache behind downloads (DOWNLOAD_CACHE_DIR): filled only with verified bytes,
served from disk once filled, bounded with least-recently-served eviction. Its HTTP answers are
the chunk stream's: test_api_downloads.py runs every download test against both."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.storage.chunks import CHUNK_SIZE
from gomoku_archive.storage.file_cache import FileCache
from gomoku_archive.web.keys import DOWNLOAD_CACHE
from tests.integration.api_support import Client, app_of, publish_bytes, random_bytes, serving
from tests.support import wait_filled

FILES = "/api/v1/database/files/"
SIZE = 2 * CHUNK_SIZE + 1000


def url_of(row: ArchiveRow) -> str:
    assert row.file_name is not None
    return FILES + row.file_name


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def cache_settings(db_dsn: str, cache_dir: Path, max_bytes: int) -> Settings:
    return Settings(
        database_url=db_dsn,
        redis_url="redis://127.0.0.1:1/0",
        download_cache_dir=cache_dir,
        download_cache_bytes=max_bytes,
    )


@pytest.fixture
def api_settings(db_dsn: str, cache_dir: Path) -> Settings:
    """``api`` keeps a download cache with room for ten files of SIZE bytes."""
    return cache_settings(db_dsn, cache_dir, 10 * SIZE)


@pytest.fixture
async def small_api(db_dsn: str, pool: Pool, cache_dir: Path) -> AsyncIterator[Client]:
    """Room for two files of SIZE bytes."""
    async with serving(
        db_dsn, pool, settings=cache_settings(db_dsn, cache_dir, 2 * SIZE + 10)
    ) as client:
        yield client


async def download(api: Client, row: ArchiveRow, **headers: str) -> bytes:
    async with api.get(url_of(row), headers=headers) as response:
        assert response.status in (200, 206)
        return await response.read()


def cache_of(api: Client) -> FileCache:
    return app_of(api)[DOWNLOAD_CACHE]


async def test_once_filled_the_file_is_served_from_disk(api: Client, pool: Pool) -> None:
    data = random_bytes(SIZE, seed=1)
    row = await publish_bytes(pool, "2026-08", data)
    assert await download(api, row) == data  # from the chunks, filling the cache
    await wait_filled(cache_of(api))
    assert row.sha256 is not None
    assert (cache_of(api).directory / row.sha256).read_bytes() == data
    async with pool.acquire() as conn:  # the chunks are gone: only the cache can answer now
        await conn.execute("DELETE FROM archive_chunks WHERE archive_id = $1", row.id)
    assert await download(api, row) == data
    assert await download(api, row, Range="bytes=262000-262999") == data[262000:263000]
    assert os.listdir(cache_of(api).directory) == [row.sha256]


async def test_bytes_that_do_not_hash_to_the_row_are_never_cached(api: Client, pool: Pool) -> None:
    data = random_bytes(SIZE, seed=2)
    row = await publish_bytes(pool, "2026-08", data)
    async with pool.acquire() as conn:  # same length, other bytes: only the hash can tell
        await conn.execute(
            "UPDATE archive_chunks SET data = $2 WHERE archive_id = $1 AND seq = 1",
            row.id,
            random_bytes(CHUNK_SIZE, seed=3),
        )
    await download(api, row)
    await wait_filled(cache_of(api))
    assert cache_of(api).total == 0
    assert os.listdir(cache_of(api).directory) == []


async def test_the_least_recently_served_file_goes_first(small_api: Client, pool: Pool) -> None:
    rows = [
        await publish_bytes(pool, month, random_bytes(SIZE, seed=i))
        for i, month in enumerate(("2026-08", "2026-09", "2026-10"))
    ]
    cache = cache_of(small_api)
    for row in rows[:2]:
        await download(small_api, row)
        await wait_filled(cache)
    await download(small_api, rows[0])  # served from the cache: now the most recent
    await download(small_api, rows[2])
    await wait_filled(cache)
    assert sorted(os.listdir(cache.directory)) == sorted([rows[0].sha256, rows[2].sha256])
    assert cache.total == 2 * SIZE


async def test_a_file_larger_than_the_cache_is_never_copied(small_api: Client, pool: Pool) -> None:
    row = await publish_bytes(pool, "2026-08", random_bytes(3 * SIZE, seed=5))
    await download(small_api, row)
    await wait_filled(cache_of(small_api))
    assert os.listdir(cache_of(small_api).directory) == []
