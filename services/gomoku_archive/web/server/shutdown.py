"""Stopping the API within one bound, whatever aiohttp does inside.

aiohttp's own graceful stop cannot keep a bound: ``RequestHandler.shutdown(timeout)`` first
waits up to ``timeout`` for the handler, then cancels the request's payload and waits up to
``timeout`` *again* for the same handler (a download blocked in a write never sees that
cancellation), so a slow client kept a pod for twice the time given (61 s for 30). And its
``close()`` of a transport sends what the transport still buffers only while the loop runs on:
a download whose last write returned with up to 16 KiB still queued lost them when the process
exited right after.

So the stop is ours: ``InFlight`` knows every request being answered (the task aiohttp runs it
in) and every connection that still has bytes to send; ``stop_within`` closes the listening
sockets, waits until nothing is in flight or the grace is over, then cuts what is left (aborts
its connection and cancels its handler), and only then hands the runners to aiohttp's cleanup,
which then finds nothing to wait for; ``exit_now`` then ends the process at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
import sys
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from aiohttp import web

from gomoku_archive.logs import get_logger

log = get_logger(__name__)

POLL_SECONDS = 0.02
"""Polled: asyncio has no "buffer empty" callback for a transport, nor a "handlers done" one."""
HANDLER_UNWIND_SECONDS = 0.1
"""In the cut, how long the cancelled handlers get before their connections are aborted (the
first part of ``CUT_SETTLE_SECONDS``; see ``InFlight.cut``)."""
CUT_SETTLE_SECONDS = 1.0
"""After the cut, how long the cancelled handlers get to unwind (release their database
connections) before the resources are closed."""
CLEANUP_SECONDS = 2.0
"""The runners' own cleanup (on_shutdown, the pool, the manifest's LISTEN connection): nothing
is in flight by then, so it takes milliseconds (0.02-0.2 s measured at a load of 10 on 2
cores); this bounds it against a database that hangs, or a download cut inside a PostgreSQL
read whose cancellation the server acknowledges late (asyncpg's graceful close waits for it:
2 of 10 stops of 40 downloads at that load). What it leaves open, the process's exit closes."""
RUNNER_SHUTDOWN_TIMEOUT = 0.5
"""aiohttp's ``shutdown_timeout`` for the runners: only a connection that slipped past the cut
could still wait on it (twice), and nothing should."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class StopReport:
    grace_used_s: float
    cut_requests: int
    """Requests still being answered when the grace ended (their connections aborted)."""
    cut_connections: int
    """Connections of finished responses still sending when the grace ended (aborted)."""


class InFlight:
    """The requests an application is answering and the connections still sending; install it
    on every application the runners serve."""

    def __init__(self) -> None:
        self._handlers: dict[asyncio.Task[Any], web.BaseRequest] = {}
        self._transports: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()

    def install(self, app: web.Application) -> None:
        # First: it sees every request, also one a later middleware answers or fails.
        app.middlewares.insert(0, self._track)

    @web.middleware
    async def _track(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        # The task aiohttp answers this request in: it ends once the response is written
        # (finish_response included), which is when the request stops being in flight.
        task = asyncio.current_task()
        if task is not None:
            self._handlers[task] = request
            task.add_done_callback(self._forget)
        if request.transport is not None:
            self._transports.add(request.transport)
        return await handler(request)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._handlers.pop(task, None)

    def requests(self) -> int:
        return sum(1 for task in self._handlers if not task.done())

    def sending(self) -> int:
        return sum(1 for t in list(self._transports) if _unsent(t))

    def busy(self) -> bool:
        return self.requests() > 0 or self.sending() > 0

    async def cut(self) -> tuple[int, int]:
        """Cancel every handler still answering, abort its connection and every other one
        with bytes unsent, and give the handlers a moment to unwind; returns (requests,
        connections) cut.

        The handlers are cancelled first and their connections aborted a moment later
        (``HANDLER_UNWIND_SECONDS``): a download from the download cache runs inside
        ``loop.sendfile``, and on Python 3.11 a transport aborted under it fails the
        transport's finished empty-buffer future a second time, an InvalidStateError that
        asyncio logs as an error-level traceback, one per download cut (CPython gh-157025 and
        its neighbours: later versions check the future first). Cancelled first, the sendfile
        unwinds and lets go of that future before the abort."""
        tasks = [task for task in list(self._handlers) if not task.done()]
        transports = [self._handlers[task].transport for task in tasks]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=HANDLER_UNWIND_SECONDS)
        for request_transport in transports:
            if request_transport is not None:
                _reset(request_transport)
        sending = [t for t in list(self._transports) if _unsent(t)]
        for transport in sending:
            _reset(transport)
        if tasks:
            await asyncio.wait(tasks, timeout=CUT_SETTLE_SECONDS - HANDLER_UNWIND_SECONDS)
        return len(tasks), len(sending)


async def stop_within(
    runners: list[web.AppRunner],
    in_flight: InFlight,
    *,
    grace_seconds: float,
    cut_now: asyncio.Event,
) -> StopReport:
    """Stop accepting, let what is in flight finish for at most ``grace_seconds`` (or until
    ``cut_now`` is set), cut the rest, then clean the runners up (bounded too)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + grace_seconds
    for runner in runners:
        for site in list(runner.sites):
            await site.stop()  # the listening socket closes: new connections are refused
        if runner.server is not None:
            runner.server.pre_shutdown()  # idle keep-alive connections close now
    while in_flight.busy() and loop.time() < deadline and not cut_now.is_set():  # noqa: ASYNC110
        await asyncio.sleep(POLL_SECONDS)  # nothing to wait on: see POLL_SECONDS
    grace_used = loop.time() - started
    requests, connections = (0, 0)
    if in_flight.busy():
        requests, connections = await in_flight.cut()
        log.warning(
            "serve_cut",
            requests=requests,
            connections=connections,
            after_s=round(grace_used, 3),
            reason="signal" if cut_now.is_set() else "grace over",
        )
    # One deadline for every runner's clean-up (the API's and the metrics port's), not one
    # each: the bound after the cut is CUT_SETTLE_SECONDS + CLEANUP_SECONDS.
    try:
        async with asyncio.timeout(CLEANUP_SECONDS):
            for runner in reversed(runners):
                await runner.cleanup()
    except TimeoutError:
        log.warning("serve_cleanup_timeout", seconds=CLEANUP_SECONDS)
    return StopReport(round(grace_used, 3), requests, connections)


def exit_now(code: int) -> NoReturn:
    """End the process once the stop is done, without the interpreter's finalization: every
    connection, pool and task is closed by then (what a timed-out clean-up left, the kernel
    closes), and tearing down the modules' objects is CPU work that a loaded node starves.
    Under 8 busy loops on 2 cores with 40 downloads cut, the process exited 1.3-3.3 s after
    the cut, 1.1-3.0 s of it after the stop was done, against the chart's 5 s margin for all
    of it (4.4 s at a load of 24); now 0.2-0.6 s. The log lines written so far are flushed
    first."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _reset(transport: asyncio.BaseTransport) -> None:
    """Abort with a TCP reset: the client learns at once that its response was cut, and what
    the kernel still buffers for it is dropped (after a plain close the kernel would go on
    trickling it out to a slow client, which would learn of the cut only minutes later)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if isinstance(transport, asyncio.WriteTransport):
        transport.abort()
    else:
        transport.close()


def _unsent(transport: asyncio.BaseTransport) -> int:
    if not isinstance(transport, asyncio.WriteTransport):
        return 0
    return transport.get_write_buffer_size()
