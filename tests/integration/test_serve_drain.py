"""A rolling update refuses nothing: ``gomoku-archive serve`` gets SIGTERM while clients keep
opening new connections, as they do while the endpoints and the Ingress still list the pod.
``/readyz`` fails at once, every request made during the drain is answered, then the API stops
accepting and exits 0 (a download in flight still completes)."""

from __future__ import annotations

import asyncio
import hashlib
import time

import aiohttp

from gomoku_archive.db.pool import Pool
from tests.integration.api_support import ServerProcess, publish_bytes, random_bytes

DRAIN_SECONDS = 3.0
MIB = 1024 * 1024


async def test_requests_during_the_drain_are_all_served(db_dsn: str, pool: Pool) -> None:
    data = random_bytes(8 * MIB, seed=18)
    row = await publish_bytes(pool, "2026-08", data)
    server = ServerProcess(db_dsn, extra_env={"SHUTDOWN_DRAIN_SECONDS": str(DRAIN_SECONDS)})
    await asyncio.to_thread(server.start)
    outcomes: list[tuple[float, str]] = []  # (seconds after SIGTERM, outcome)
    signalled_at: list[float] = []
    stop_clients = asyncio.Event()

    async def client(number: int) -> None:
        # A new connection for every request, as load balancers spread them over pods.
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(force_close=True)
        ) as session:
            while not stop_clients.is_set():
                try:
                    async with session.get(
                        f"{server.base}/api/v1/database",
                        timeout=aiohttp.ClientTimeout(total=5),
                    ) as response:
                        await response.read()
                        outcome = str(response.status)
                except aiohttp.ClientConnectorError:
                    outcome = "refused"
                except (aiohttp.ClientError, TimeoutError) as exc:
                    outcome = type(exc).__name__
                if signalled_at:
                    outcomes.append((time.monotonic() - signalled_at[0], outcome))
                if outcome == "refused":
                    return  # the drain is over for this client
                await asyncio.sleep(0.02)

    async def slow_download() -> str:
        digest = hashlib.sha256()
        async with aiohttp.ClientSession() as session:
            url = f"{server.base}/api/v1/database/files/{row.file_name}"
            async with session.get(url) as response:
                async for block in response.content.iter_chunked(64 * 1024):
                    digest.update(block)
                    await asyncio.sleep(0.02)  # ~3 MB/s: it outlasts the drain
        return digest.hexdigest()

    try:
        clients = [asyncio.create_task(client(n)) for n in range(4)]
        download = asyncio.create_task(slow_download())
        await asyncio.sleep(0.5)
        signalled_at.append(time.monotonic())
        server.terminate()
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{server.base}/readyz") as response,
        ):
            ready = response.status, await response.json()
        await asyncio.wait_for(asyncio.gather(*clients), timeout=DRAIN_SECONDS + 10)
        stop_clients.set()
        downloaded = await asyncio.wait_for(download, timeout=40)
    finally:
        stop_clients.set()
        code = await asyncio.to_thread(server.stop)
    assert code == 0, server.output.decode()[-3000:]
    assert ready[0] == 503 and ready[1]["status"] == "draining", ready
    during = [outcome for at, outcome in outcomes if at < DRAIN_SECONDS - 0.3]
    print(f"{len(during)} requests during the {DRAIN_SECONDS} s drain: {sorted(set(during))}")
    assert len(during) >= 20, "the clients kept asking during the drain"
    assert set(during) == {"200"}, f"refused or failed during the drain: {during}"
    refused_at = min(at for at, outcome in outcomes if outcome == "refused")
    assert refused_at >= DRAIN_SECONDS - 0.3, "it stops accepting only when the drain is over"
    assert downloaded == row.sha256, "the download in flight completed"
    events = server.output.decode()
    assert '"event": "serve_draining"' in events and '"event": "serve_stopped"' in events
