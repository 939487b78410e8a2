"""A graceful stop that sends the last bytes too.

aiohttp's graceful shutdown waits for handlers, then closes each connection's transport;
``close()`` sends what the transport still buffers only as the event loop runs on. A slow
client's download ends with its last write returning once the buffer is under asyncio's
low-water mark (up to 16 KiB still queued), and ``web.run_app`` closes the loop right after
the app's cleanup, so those bytes were lost: a download that the access log calls complete
came up short at its very end. The app's cleanup now waits, within the stop's time limit,
until every transport that carried a response has handed its bytes to the kernel."""

from __future__ import annotations

import asyncio
import weakref

from aiohttp import web

_POLL_SECONDS = 0.02


def finish_sending_on_stop(app: web.Application, *, timeout: float) -> None:
    """On stop, keep the loop running until every response's bytes left the process, or until
    ``timeout`` seconds after the stop began (a client that stopped reading gets cut then)."""
    transports: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()
    stop_began: list[float] = []

    async def remember(request: web.Request, response: web.StreamResponse) -> None:
        if request.transport is not None:
            transports.add(request.transport)

    async def note_stop(app: web.Application) -> None:
        stop_began.append(asyncio.get_running_loop().time())

    async def drain(app: web.Application) -> None:
        loop = asyncio.get_running_loop()
        deadline = (stop_began[0] if stop_began else loop.time()) + timeout
        # Polled: asyncio has no "buffer empty" callback for a transport it is closing.
        while any(_unsent(t) for t in list(transports)):
            if loop.time() >= deadline:
                break
            await asyncio.sleep(_POLL_SECONDS)
        await asyncio.sleep(0)  # let the flushed transports finish closing their sockets

    app.on_response_prepare.append(remember)
    app.on_shutdown.append(note_stop)
    app.on_cleanup.append(drain)


def _unsent(transport: asyncio.BaseTransport) -> int:
    if not isinstance(transport, asyncio.WriteTransport):
        return 0
    return transport.get_write_buffer_size()
