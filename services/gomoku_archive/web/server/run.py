"""Running the API until a stop signal, with a drain that lets rolling updates refuse nothing.

On SIGTERM (or SIGINT) the API first drains: ``/readyz`` answers 503 at once, so load balancers
and Kubernetes take the pod out of rotation, while the listening socket stays open and every
request, new connections included, is still served (responses then carry ``Connection:
close`` so keep-alive clients move on). After ``drain_seconds`` (or at a second signal) it
stops accepting and lets the requests in flight finish within ``shutdown_timeout``, as
aiohttp's graceful shutdown does. Without the drain, a pod refused connections during the
seconds it took the endpoints to learn it was going."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from gomoku_archive.logs import get_logger

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Listener:
    """One listening socket and what it serves."""

    app: web.Application
    host: str
    port: int


class CannotListen(OSError):
    """A listening socket could not be opened (the port is taken, the address is not ours)."""

    def __init__(self, host: str, port: int, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.host = host
        self.port = port


async def serve(
    listeners: list[Listener],
    *,
    drain_seconds: float,
    shutdown_timeout: float,
    announce: Callable[[], None],
    draining: asyncio.Event,
) -> None:
    """Serve every listener until a stop signal; ``draining`` is set when the drain begins
    (the API's ``/readyz`` then fails)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    runners: list[web.AppRunner] = []
    try:
        for listener in listeners:
            runner = web.AppRunner(
                listener.app,
                access_log=None,  # gomoku_archive.web.middleware writes one line per request
                handle_signals=False,
                shutdown_timeout=shutdown_timeout,
            )
            runners.append(runner)
            await runner.setup()
            try:
                await web.TCPSite(runner, listener.host, listener.port).start()
            except OSError as exc:
                raise CannotListen(listener.host, listener.port, exc) from exc
        announce()
        await stop.wait()
        draining.set()
        log.info("serve_draining", seconds=drain_seconds)
        stop.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), drain_seconds)  # a second signal cuts it short
        log.info("serve_stopping", shutdown_timeout_s=shutdown_timeout)
    finally:
        for runner in reversed(runners):
            await runner.cleanup()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
