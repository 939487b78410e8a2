"""A process's ear for the ranges' notifications: one dedicated connection that LISTENs on
``range_store.RANGES_QUEUED_CHANNEL``, where a plan, a new plan or a failure to try again is
announced as its transaction commits; the process's range slot waits there, so whoever wakes
reads the ranges.

A notification only shortens a wait: the waiter also wakes on its own timeout. A lost
connection therefore costs latency, never a range: the next wait connects again (at most
every ``RECONNECT_SECONDS``), and the loss itself wakes the waiter, since a notification may
have gone with it."""

from __future__ import annotations

import asyncio
import time

from gomoku_archive.db.pool import Connection, connect
from gomoku_archive.db.range_store import RANGES_QUEUED_CHANNEL
from gomoku_archive.logs import get_logger

log = get_logger(__name__)

RECONNECT_SECONDS = 5.0
"""How often a process whose LISTEN connection is gone tries again."""
_CONNECT_TIMEOUT = 10.0


class RangeNotices:
    """An event set by the notifications; ``wait_queued`` waits for it. Set while nobody waits,
    it stays set, so the next wait returns at once (a claim too many, never one too few)."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._conn: Connection | None = None
        self._queued = asyncio.Event()
        self._next_try = 0.0
        self._lost = False

    @property
    def listening(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    async def start(self) -> None:
        """Connect and listen; a failure is logged, and the first wait tries again."""
        await self._listen()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None or conn.is_closed():
            return
        conn.remove_termination_listener(self._on_terminated)  # closing on purpose is no loss
        try:
            async with asyncio.timeout(2):
                await conn.close()
        except Exception:  # the server is away: drop the socket
            conn.terminate()

    async def wait_queued(self, seconds: float) -> bool:
        """Until ranges of some build became claimable, at most ``seconds``; True when a
        notification (or a lost connection, which may have hidden one) said so."""
        if not self.listening and time.monotonic() >= self._next_try:
            await self._listen()
        try:
            async with asyncio.timeout(max(seconds, 0.0)):
                await self._queued.wait()
        except TimeoutError:
            return False
        self._queued.clear()
        return True

    def _on_notify(self, conn: object, pid: int, channel: str, payload: object) -> None:
        self._queued.set()

    def _on_terminated(self, conn: object) -> None:
        self._conn = None
        self._lost = True
        log.warning("range_notices_lost", consequence="waits end on their timeouts until back")
        self._queued.set()  # what the lost connection may have hidden is looked at now

    async def _listen(self) -> None:
        self._next_try = time.monotonic() + RECONNECT_SECONDS
        try:
            async with asyncio.timeout(_CONNECT_TIMEOUT):
                conn = await connect(self._dsn)
                try:
                    await conn.add_listener(RANGES_QUEUED_CHANNEL, self._on_notify)
                except BaseException:
                    conn.terminate()
                    raise
        except Exception as exc:  # the database is away: waits end on their timeouts
            log.warning("range_notices_listen_failed", error=f"{type(exc).__name__}: {exc}")
            return
        conn.add_termination_listener(self._on_terminated)
        self._conn = conn
        if self._lost:
            self._lost = False
            log.info("range_notices_back")
            self._queued.set()
