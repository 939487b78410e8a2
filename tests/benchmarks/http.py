"""HTTP (issue 11, target 5): the manifest's requests per second against a minimal aiohttp
handler, downloads' throughput against nginx serving the same file from disk, and the server's
RSS growth while 16 clients download. Our side is always a real ``gomoku-archive serve``
subprocess; each pair of runs is measured back to back in the same rounds (ABAB), and the best
round of each side counts, so a burst of load from elsewhere on the machine hurts one round,
not the ratio."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gomoku_archive.db.pool import create_pool
from gomoku_archive.profile.months import Month
from tests.integration.api_support import ServerProcess, publish_bytes, random_bytes

from .figures import Figure, Size, bounded, compared
from .nginx import nginx_serving
from .support import ROOT, RssSampler, free_port, scratch_database, wait_listening
from .wrk import WrkResult, run_wrk

SECTION = "http"
MIB = 1024 * 1024
MANIFEST_PATH = "/api/v1/database"
FILES_PATH = "/api/v1/database/files/"


@dataclass(frozen=True, slots=True)
class Plan:
    archive_bytes: int
    seconds: int
    """Each wrk run's duration."""
    rounds: int
    months: int
    """Published months in the manifest (its size: about 1 KiB of JSON each)."""
    manifest_connections: tuple[int, ...] = (1, 64)
    download_clients: tuple[int, ...] = (1, 16)


PLANS = {
    Size.SMOKE: Plan(archive_bytes=4 * MIB, seconds=1, rounds=1, months=3),
    Size.FULL: Plan(archive_bytes=64 * MIB, seconds=8, rounds=3, months=36),
}
MANIFEST_AT_LEAST = 0.8
DOWNLOAD_AT_LEAST = 0.5
RSS_GROWTH_AT_MOST_MIB = 64.0


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    with scratch_database(SECTION) as dsn:
        file_name, data = asyncio.run(_publish(dsn, plan))
        www = workdir / "www"
        www.mkdir()
        (www / file_name).write_bytes(data)
        sha256 = hashlib.sha256(data).hexdigest()
        del data
        first_month = str(_months(plan.months)[0])
        cache = workdir / "download-cache"
        env = {
            "EXPORT_FIRST_MONTH": first_month,
            "DOWNLOAD_CACHE_DIR": str(cache),
            "DOWNLOAD_CACHE_BYTES": str(4 * plan.archive_bytes),
        }
        server = ServerProcess(dsn, extra_env=env)
        server.start()
        try:
            figures = _manifest(plan, server, workdir)
            with nginx_serving(www, workdir) as nginx_port:
                ours = server.base + FILES_PATH + file_name
                theirs = f"http://127.0.0.1:{nginx_port}/{file_name}"
                # The first download streams from PostgreSQL and fills the cache; every timed
                # one is served from it, as in a deployment with DOWNLOAD_CACHE_DIR.
                _check_download(ours, plan.archive_bytes, sha256)
                _wait_for(cache / sha256)
                for url in (ours, theirs):
                    _check_download(url, plan.archive_bytes, sha256)
                figures += _downloads(plan, server.pid, ours, theirs, workdir)
        finally:
            server.stop()
    return figures


def _months(count: int) -> list[Month]:
    """From the profile's first month on: a manifest of a service that has run ``count``
    months (later months than today's are fine for serving)."""
    months = [Month(2026, 8)]
    while len(months) < count:
        months.append(months[-1].next())
    return months


async def _publish(dsn: str, plan: Plan) -> tuple[str, bytes]:
    """Small archives for every month but the last, which gets the big one."""
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        months = _months(plan.months)
        for i, month in enumerate(months[:-1]):
            await publish_bytes(pool, str(month), random_bytes(4096, seed=i))
        data = random_bytes(plan.archive_bytes, seed=len(months))
        row = await publish_bytes(pool, str(months[-1]), data)
    finally:
        await pool.close()
    assert row.file_name is not None
    return row.file_name, data


@contextmanager
def _manifest_reference(body: bytes, workdir: Path) -> Iterator[str]:
    path = workdir / "manifest.json"
    path.write_bytes(body)
    port = free_port()
    module = "tests.benchmarks.manifest_reference"
    command = [sys.executable, "-m", module, "--port", str(port), "--body", str(path)]
    proc = subprocess.Popen(command, cwd=ROOT)
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}{MANIFEST_PATH}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _manifest(plan: Plan, server: ServerProcess, workdir: Path) -> list[Figure]:
    ours = server.base + MANIFEST_PATH
    with urllib.request.urlopen(ours) as response:  # no Accept-Encoding: the plain bytes
        body = response.read()
    figures = []
    with _manifest_reference(body, workdir) as reference:
        with urllib.request.urlopen(reference) as response:
            assert response.read() == body
        for connections in plan.manifest_connections:
            best = _best_of(plan, workdir, ours, reference, connections)
            figures.append(
                compared(
                    SECTION,
                    f"manifest, {connections} connection{'s' if connections > 1 else ''}",
                    "req/s",
                    best[0].requests_per_second,
                    best[1].requests_per_second,
                    "minimal aiohttp handler",
                    at_least=MANIFEST_AT_LEAST,
                    note=f"{len(body):,} bytes of JSON, wrk -t1 -c{connections}",
                )
            )
    return figures


def _downloads(plan: Plan, pid: int, ours: str, theirs: str, workdir: Path) -> list[Figure]:
    figures = []
    samplers: list[RssSampler] = []
    busiest = max(plan.download_clients)
    for clients in plan.download_clients:

        def measure_ours(url: str, clients: int = clients) -> WrkResult:
            if clients != busiest:
                return run_wrk(url, connections=clients, seconds=plan.seconds, workdir=workdir)
            sampler = RssSampler(pid)
            samplers.append(sampler)
            with sampler:
                return run_wrk(url, connections=clients, seconds=plan.seconds, workdir=workdir)

        best = _best_of(plan, workdir, ours, theirs, clients, ours_runner=measure_ours)
        for result in best:
            _check_sizes(result, plan.archive_bytes, clients)
        figures.append(
            compared(
                SECTION,
                f"download {plan.archive_bytes // MIB} MiB, {clients} client"
                + ("s" if clients > 1 else ""),
                "MiB/s",
                best[0].bytes_per_second / MIB,
                best[1].bytes_per_second / MIB,
                "nginx, sendfile from disk",
                at_least=DOWNLOAD_AT_LEAST,
            )
        )
    figures.append(
        bounded(
            SECTION,
            f"server RSS growth, {busiest} downloads at once",
            "MiB",
            max(s.growth for s in samplers) / MIB,  # the worst round
            at_most=RSS_GROWTH_AT_MOST_MIB,
        )
    )
    return figures


def _best_of(
    plan: Plan,
    workdir: Path,
    ours: str,
    reference: str,
    connections: int,
    *,
    ours_runner: Callable[[str], WrkResult] | None = None,
) -> tuple[WrkResult, WrkResult]:
    """Rounds of (ours, reference) back to back; the best of each side (every response of a
    pair has the same size, so the most bytes per second is also the most requests)."""

    def plain(url: str) -> WrkResult:
        return run_wrk(url, connections=connections, seconds=plan.seconds, workdir=workdir)

    mine = ours_runner or plain
    if plan.rounds > 1:  # warm both up (first connections, the allocator's arenas)
        plain(ours)
        plain(reference)
    rounds = [(mine(ours), plain(reference)) for _ in range(plan.rounds)]
    return (
        max((r[0] for r in rounds), key=lambda r: r.bytes_per_second),
        max((r[1] for r in rounds), key=lambda r: r.bytes_per_second),
    )


def _check_download(url: str, size: int, sha256: str) -> None:
    """One whole download, hashed: both servers send the same bytes before any is timed."""
    digest = hashlib.sha256()
    total = 0
    with urllib.request.urlopen(url) as response:
        while block := response.read(1 << 20):
            digest.update(block)
            total += len(block)
    if (total, digest.hexdigest()) != (size, sha256):
        raise RuntimeError(f"{url} sent {total} bytes, sha256 {digest.hexdigest()}")


def _wait_for(path: Path, *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the download cache did not fill {path.name} in {timeout} s")
        time.sleep(0.05)


def _check_sizes(result: WrkResult, size: int, clients: int) -> None:
    """wrk reads and discards: its byte count must hold every completed response whole, and
    at most one unfinished response per connection besides (headers are < 4 KiB)."""
    if result.requests < 1:
        raise RuntimeError("no download completed within the run")
    low, high = result.requests * size, (result.requests + clients) * (size + 4096)
    if not low <= result.bytes <= high:
        raise RuntimeError(f"wrk read {result.bytes} bytes for {result.requests} downloads")
