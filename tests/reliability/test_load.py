"""Load (issue 12): 200 concurrent clients against ``gomoku-archive serve`` mixing manifest
polling, conditional requests, and full and ranged downloads, every byte checked against the
file's sha256 (ranges against the file's own bytes). Expect 0 errors; prints p50/p99 and the
server's RSS before and after.

CI runs it for ``LOAD_SECONDS`` (default 15); the issue's full run is ``LOAD_SECONDS=60``."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import time
from dataclasses import dataclass, field

import aiohttp
import pytest

from gomoku_archive.db.pool import Pool
from tests.integration.api_support import ServerProcess, publish_bytes, random_bytes, rss_kib

CLIENTS = 200
SECONDS = float(os.environ.get("LOAD_SECONDS", "15"))
KIB = 1024


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    body_bytes: int = 0

    def done(self, kind: str, started: float, size: int) -> None:
        self.latencies.append(time.perf_counter() - started)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.body_bytes += size

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


@dataclass(frozen=True)
class File:
    url: str
    data: bytes
    sha256: str


async def one_request(
    session: aiohttp.ClientSession, base: str, files: list[File], rng: random.Random, tally: Tally
) -> None:
    roll = rng.random()
    started = time.perf_counter()
    if roll < 0.35:  # manifest polling, half of it conditional
        async with session.get(f"{base}/api/v1/database") as response:
            body = await response.read()
            assert response.status == 200, response.status
            etag = response.headers["ETag"]
        tally.done("manifest", started, len(body))
        if rng.random() < 0.5:
            started = time.perf_counter()
            headers = {"If-None-Match": etag}
            async with session.get(f"{base}/api/v1/database", headers=headers) as response:
                assert response.status == 304, response.status
            tally.done("manifest 304", started, 0)
        return
    file = rng.choice(files)
    if roll < 0.45:  # a cache revalidating an archive
        headers = {"If-None-Match": f'"{file.sha256}"'}
        async with session.get(file.url, headers=headers) as response:
            assert response.status == 304, response.status
            assert await response.read() == b""
        tally.done("archive 304", started, 0)
    elif roll < 0.75:  # a ranged download (a resumed one, or a reader seeking)
        first = rng.randrange(len(file.data))
        last = min(len(file.data) - 1, first + rng.randrange(1, 600 * KIB))
        headers = {"Range": f"bytes={first}-{last}", "If-Range": f'"{file.sha256}"'}
        async with session.get(file.url, headers=headers) as response:
            assert response.status == 206, response.status
            body = await response.read()
        assert body == file.data[first : last + 1], f"range {first}-{last} differs"
        tally.done("range", started, len(body))
    else:  # a whole download
        digest = hashlib.sha256()
        size = 0
        async with session.get(file.url) as response:
            assert response.status == 200, response.status
            async for block in response.content.iter_chunked(64 * KIB):
                digest.update(block)
                size += len(block)
        assert size == len(file.data) and digest.hexdigest() == file.sha256, "download differs"
        tally.done("full", started, size)


async def client(base: str, files: list[File], seed: int, until: float, tally: Tally) -> None:
    rng = random.Random(seed)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        while time.monotonic() < until:
            try:
                await one_request(session, base, files, rng, tally)
            except (AssertionError, aiohttp.ClientError, TimeoutError) as exc:
                tally.errors.append(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow
async def test_200_clients_get_every_byte_right(db_dsn: str, pool: Pool) -> None:
    files = []
    for month, size in (("2026-08", 1536 * KIB), ("2026-09", 3 * 1024 * KIB)):
        data = random_bytes(size, seed=len(files) + 20)
        row = await publish_bytes(pool, month, data)
        assert row.file_name is not None and row.sha256 is not None
        files.append(File(f"/api/v1/database/files/{row.file_name}", data, row.sha256))
    server = ServerProcess(db_dsn)
    await asyncio.to_thread(server.start)
    try:
        files = [File(server.base + f.url, f.data, f.sha256) for f in files]
        rss_before = rss_kib(server.pid)
        tally = Tally()
        until = time.monotonic() + SECONDS
        started = time.monotonic()
        await asyncio.gather(*(client(server.base, files, n, until, tally) for n in range(CLIENTS)))
        elapsed = time.monotonic() - started
        rss_after = rss_kib(server.pid)
    finally:
        code = await asyncio.to_thread(server.stop)
    requests = len(tally.latencies)
    mix = ", ".join(f"{k} {v}" for k, v in sorted(tally.kinds.items()))
    print(
        f"\nload: {CLIENTS} clients for {elapsed:.0f} s: {requests} requests ({mix}), "
        f"{tally.body_bytes / 2**20:.0f} MiB checked, {len(tally.errors)} errors; "
        f"p50 {tally.percentile(0.50):.0f} ms, p99 {tally.percentile(0.99):.0f} ms; "
        f"server RSS {rss_before / 1024:.0f} MiB before, {rss_after / 1024:.0f} MiB after"
    )
    assert tally.errors == [], tally.errors[:5]
    assert code == 0
    assert requests > CLIENTS
