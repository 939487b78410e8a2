"""Streaming downloads under stress: memory stays flat in a real ``gomoku-archive serve``
subprocess whatever the file size, the client's speed or the number of downloads; a client
that leaves stops the stream and frees the database; a database failure midway aborts the
connection instead of finishing a short 200."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
from dataclasses import dataclass

import aiohttp
import pytest

from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.storage.chunks import CHUNK_SIZE
from gomoku_archive.web.api import downloads
from gomoku_archive.web.keys import METRICS, POOL
from tests.integration.api_support import (
    Client,
    ServerProcess,
    app_of,
    download_sha256,
    publish_bytes,
    random_bytes,
    rss_kib,
    serving,
    wait_for,
)

FILES = "/api/v1/database/files/"
MIB = 1024 * 1024


@dataclass
class Big:
    row: ArchiveRow
    data: bytes

    @property
    def path(self) -> str:
        assert self.row.file_name is not None
        return FILES + self.row.file_name


async def publish_big(pool: Pool, size: int, *, month: str = "2026-08", seed: int = 3) -> Big:
    data = random_bytes(size, seed=seed)
    return Big(await publish_bytes(pool, month, data), data)


async def drain(response: aiohttp.ClientResponse) -> None:
    while await response.content.read(256 * 1024):
        pass


def sample_value(metrics_text: str, name: str, labels: str = "") -> float:
    """One sample of the Prometheus text (0 when absent)."""
    prefix = f"{name}{{{labels}}} " if labels else f"{name} "
    for line in metrics_text.splitlines():
        if line.startswith(prefix):
            return float(line.split()[-1])
    return 0.0


# --- in-process: disconnects and failures -----------------------------------------------------


@pytest.fixture
async def big(pool: Pool) -> Big:
    return await publish_big(pool, 40 * MIB)


@pytest.fixture
def api_data(big: Big) -> None:
    """``api`` serves the big file."""


@pytest.mark.parametrize("cancel", [False, True], ids=["run_app", "handler_cancellation"])
async def test_a_client_that_leaves_stops_the_stream_and_frees_the_pool(
    db_dsn: str, pool: Pool, big: Big, cancel: bool
) -> None:
    async with serving(db_dsn, pool, handler_cancellation=cancel) as api:
        await _leave_midway(api, big)


async def _leave_midway(api: Client, big: Big) -> None:
    app = app_of(api)
    metrics, app_pool = app[METRICS], app[POOL]
    response = await api.get(big.path)
    assert response.status == 200
    received = 0
    while received < 2 * MIB:
        received += len(await response.content.read(64 * 1024))
    assert metrics.downloads_in_flight._value.get() == 1
    response.close()  # drop the connection mid-body

    def stopped() -> bool:
        aborted = metrics.downloads_aborted.labels("client_disconnected")._value.get()
        return bool(metrics.downloads_in_flight._value.get() == 0 and aborted == 1)

    await wait_for(stopped, within=10)
    await wait_for(lambda: app_pool.get_idle_size() == app_pool.get_size())
    # The server is fine and serves the whole file to the next client.
    again = await api.get(big.path)
    assert hashlib.sha256(await again.read()).hexdigest() == big.row.sha256


async def test_a_client_that_stops_reading_is_cut_off(
    api: Client, big: Big, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(downloads, "SEND_TIMEOUT_SECONDS", 0.3)
    metrics = app_of(api)[METRICS]
    response = await api.get(big.path)
    assert response.status == 200
    await response.content.read(64 * 1024)  # then nothing: the socket buffers fill up

    def cut_off() -> bool:
        stalled = metrics.downloads_aborted.labels("client_stalled")._value.get()
        return bool(stalled == 1 and metrics.downloads_in_flight._value.get() == 0)

    await wait_for(cut_off, within=10)
    with pytest.raises(aiohttp.ClientPayloadError):
        await drain(response)


async def test_chunks_missing_midway_abort_the_connection(
    api: Client, pool: Pool, big: Big
) -> None:
    async with pool.acquire() as conn:
        await conn.execute(
            "DELETE FROM archive_chunks WHERE archive_id = $1 AND seq >= 20", big.row.id
        )
    response = await api.get(big.path)
    assert response.status == 200  # the first chunks were there when the status went out
    assert response.headers["Content-Length"] == str(len(big.data))
    with pytest.raises(aiohttp.ClientPayloadError):
        await response.read()
    # curl sees it too: exit 18, "transfer closed with outstanding read data remaining".
    proc = await asyncio.create_subprocess_exec(
        "curl",
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{size_download}",
        str(api.make_url(big.path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 18, err
    status, size = out.decode().split()
    assert status == "200"
    assert int(size) == 20 * CHUNK_SIZE
    app = app_of(api)
    assert app[METRICS].downloads_aborted.labels("missing_chunks")._value.get() == 2


async def test_a_database_failure_midway_aborts_the_connection(
    api: Client, pool: Pool, big: Big
) -> None:
    response = await api.get(big.path)
    assert response.status == 200
    received = 0
    while received < MIB:
        received += len(await response.content.read(64 * 1024))
    async with pool.acquire() as conn:  # every later chunk query fails
        await conn.execute("ALTER TABLE archive_chunks RENAME TO archive_chunks_away")
    try:
        with pytest.raises(aiohttp.ClientPayloadError):
            await drain(response)
    finally:
        async with pool.acquire() as conn:
            await conn.execute("ALTER TABLE archive_chunks_away RENAME TO archive_chunks")
    app = app_of(api)
    assert app[METRICS].downloads_aborted.labels("database_error")._value.get() == 1


async def test_a_database_that_is_down_before_the_first_byte_gives_503(
    api: Client, pool: Pool, big: Big
) -> None:
    async with pool.acquire() as conn:
        await conn.execute("ALTER TABLE archive_chunks RENAME TO archive_chunks_away")
    try:
        response = await api.get(big.path)
        assert response.status == 503
        assert response.headers["Retry-After"] == "5"
        assert (await response.json())["error"] == "unavailable"
    finally:
        async with pool.acquire() as conn:
            await conn.execute("ALTER TABLE archive_chunks_away RENAME TO archive_chunks")


# --- a real server process: memory ------------------------------------------------------------


async def sample_rss(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], rss_kib(pid))
        await asyncio.sleep(0.01)


async def slow_download(session: aiohttp.ClientSession, url: str) -> str:
    """Read the first 4 MiB at about 16 MiB/s, then the rest at full speed: if the server did
    not wait for the socket to drain, it would queue the file in memory meanwhile."""
    digest = hashlib.sha256()
    async with session.get(url) as response:
        assert response.status == 200
        taken = 0
        async for block in response.content.iter_chunked(64 * 1024):
            digest.update(block)
            taken += len(block)
            if taken < 4 * MIB:
                await asyncio.sleep(0.004)
    return digest.hexdigest()


@pytest.mark.slow
async def test_server_memory_stays_flat_while_streaming(db_dsn: str, pool: Pool) -> None:
    size = 48 * MIB
    big = await publish_big(pool, size)
    small = await publish_big(pool, 2 * MIB, month="2026-07", seed=4)
    server = ServerProcess(db_dsn)
    await asyncio.to_thread(server.start)
    try:
        url = server.base + big.path
        async with aiohttp.ClientSession() as session:
            # Warm up every code path (imports, pool connections, buffers) on a small file, so
            # the baseline does not already hold what a big download would add.
            for _ in range(2):
                warm = await download_sha256(session, server.base + small.path)
                assert warm == (2 * MIB, small.row.sha256)
            await asyncio.sleep(0.2)
            baseline = rss_kib(server.pid)
            peak = [baseline]
            stop = asyncio.Event()
            sampler = asyncio.create_task(sample_rss(server.pid, peak, stop))
            try:
                one = await download_sha256(session, url)
                slow = await slow_download(session, url)
                single_peak = peak[0]
                many = await asyncio.gather(*(download_sha256(session, url) for _ in range(6)))
            finally:
                stop.set()
                await sampler
        assert one == (size, big.row.sha256)
        assert slow == big.row.sha256
        assert all(result == (size, big.row.sha256) for result in many)
        single_growth, total_growth = single_peak - baseline, peak[0] - baseline
        print(
            f"\nserver RSS: baseline {baseline / 1024:.1f} MiB, growth {single_growth / 1024:.2f}"
            f" MiB for one {size // MIB} MiB download (fast and slow), "
            f"{total_growth / 1024:.2f} MiB with 6 concurrent"
        )
        # One download holds one 1 MiB batch of chunks plus the socket's buffer; six hold six.
        # Allocator slack and asyncpg's buffers come on top, so the bounds are generous but
        # still an order of magnitude below the file: buffering the file would add 48 MiB.
        assert single_growth < 6 * 1024, f"{single_growth} KiB"
        assert total_growth < 16 * 1024, f"{total_growth} KiB"
    finally:
        code = await asyncio.to_thread(server.stop)
    assert code == 0, server.output.decode()[-2000:]
    lines = [json.loads(line) for line in server.output.splitlines() if line.startswith(b"{")]
    downloads = [e for e in lines if e.get("event") == "http_request" and e["path"] == big.path]
    assert len(downloads) == 8  # one fast, one slow, six at once
    assert all(e["status"] == 200 and e["bytes"] == size for e in downloads)
