"""Running the API until a stop signal, with a drain that lets rolling updates refuse nothing
and a stop that keeps one bound.

On SIGTERM (or SIGINT) the API first drains: ``/readyz`` answers 503 at once, so load balancers
and Kubernetes take the pod out of rotation, while the listening socket stays open and every
request, new connections included, is still served (responses then carry ``Connection:
close`` so keep-alive clients move on). After ``drain_seconds`` it stops accepting and lets the
responses in flight finish for at most ``grace_seconds``, then cuts what is left
(``gomoku_archive.web.server.shutdown``). A further signal ends the phase it arrives in: the
drain, then the grace. Without the drain, a pod refused connections during the seconds it took
the endpoints to learn it was going."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from gomoku_archive.logs import get_logger
from gomoku_archive.web.server.shutdown import (
    RUNNER_SHUTDOWN_TIMEOUT,
    InFlight,
    StopReport,
    stop_within,
)

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
    grace_seconds: float,
    announce: Callable[[], None],
    draining: asyncio.Event,
) -> StopReport:
    """Serve every listener until a stop signal; ``draining`` is set when the drain begins
    (the API's ``/readyz`` then fails). Returns what the stop had to cut."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, signalled.set)
    in_flight = InFlight()
    runners: list[web.AppRunner] = []
    try:
        for listener in listeners:
            in_flight.install(listener.app)
            runner = web.AppRunner(
                listener.app,
                access_log=None,  # gomoku_archive.web.middleware writes one line per request
                handle_signals=False,
                shutdown_timeout=RUNNER_SHUTDOWN_TIMEOUT,
            )
            runners.append(runner)
            await runner.setup()
            try:
                await web.TCPSite(runner, listener.host, listener.port).start()
            except OSError as exc:
                raise CannotListen(listener.host, listener.port, exc) from exc
        announce()
        await signalled.wait()
        draining.set()
        log.info("serve_draining", seconds=drain_seconds)
        signalled.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(signalled.wait(), drain_seconds)  # a second signal ends it
        signalled.clear()
        log.info(
            "serve_stopping",
            grace_s=grace_seconds,
            requests_in_flight=in_flight.requests(),
        )
        report = await stop_within(
            runners, in_flight, grace_seconds=grace_seconds, cut_now=signalled
        )
        runners.clear()
        return report
    finally:
        for runner in reversed(runners):  # start-up failed, or the task was cancelled
            await runner.cleanup()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
