"""The manifest as served: rendered once (plain and gzip bytes, their strong ETags) and kept in
memory, so neither the API nor the public page queries the database per request.

It is reloaded when an archive is published (LISTEN on ``ARCHIVES_CHANNEL``; the publish
transaction NOTIFYs on commit) and at least every ``ttl`` seconds. If the LISTEN connection
drops, the TTL alone keeps the copy fresh while the cache reconnects; if a reload fails, the
last good copy keeps being served and ``last_error`` says why (``/readyz`` checks the database
itself)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import DATABASE_ERRORS, Connection, Pool, connect
from gomoku_archive.errors import ArchiveError, DatabaseUnavailable
from gomoku_archive.http.conditions import EntityTag
from gomoku_archive.logs import get_logger
from gomoku_archive.web.metrics import Metrics
from gomoku_archive.web.server.encoded import encode

log = get_logger(__name__)

RELOAD_ERRORS = DATABASE_ERRORS
_QUERY_TIMEOUT = 10.0
_RECONNECT_INTERVAL = 5.0


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One rendering of the manifest."""

    document: Mapping[str, Any]
    body: bytes
    gzip_body: bytes
    etag: EntityTag
    gzip_etag: EntityTag
    loaded_at: float
    """``time.monotonic()`` when it was read from the database."""

    @property
    def archives(self) -> int:
        return len(self.document["months"])


def render(document: Mapping[str, Any], *, loaded_at: float = 0.0) -> Snapshot:
    """Serialise the manifest deterministically; the ETag is a hash of the exact bytes, and the
    gzip variant (fixed mtime, so identical input gives identical bytes) has its own."""
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    encoded = encode(body)
    return Snapshot(
        document=document,
        body=encoded.body,
        gzip_body=encoded.gzip_body,
        etag=encoded.etag,
        gzip_etag=encoded.gzip_etag,
        loaded_at=loaded_at,
    )


class ManifestCache:
    def __init__(
        self,
        pool: Pool,
        dsn: str,
        *,
        ttl: float,
        metrics: Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pool = pool
        self._dsn = dsn
        self._ttl = ttl
        self._metrics = metrics
        self._clock = clock
        self._snapshot: Snapshot | None = None
        self._changed = asyncio.Event()
        self._listener: Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self.last_error: str | None = None

    @property
    def snapshot(self) -> Snapshot:
        assert self._snapshot is not None, "ManifestCache.start() loads the first copy"
        return self._snapshot

    @property
    def listening(self) -> bool:
        return self._listener is not None and not self._listener.is_closed()

    def age(self) -> float:
        return 0.0 if self._snapshot is None else self._clock() - self._snapshot.loaded_at

    async def start(self) -> None:
        """Load the first copy (errors propagate: the app cannot start without it), LISTEN,
        and start the refresh loop."""
        try:
            await self._load()
        except asyncpg.UndefinedTableError as exc:
            raise ArchiveError(f"{exc}: run `gomoku-archive migrate` first") from exc
        except RELOAD_ERRORS as exc:  # connection errors include timeouts
            raise DatabaseUnavailable(f"cannot load the manifest: {exc}") from exc
        await self._listen()
        self._task = asyncio.create_task(self._run(), name="manifest-cache")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # closing must not fail the app's cleanup
                log.warning("manifest_cache_close_failed", error=f"{type(exc).__name__}: {exc}")
            self._task = None
        await self._unlisten()

    async def refresh(self) -> bool:
        """Reload now; on any failure keep the last good copy and return False (the refresh
        loop must outlive every error: the next NOTIFY or TTL tick tries again)."""
        try:
            await self._load()
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            self._metrics.manifest_refreshes.labels("error").inc()
            log.warning(
                "manifest_refresh_failed",
                error=self.last_error,
                age_s=round(self.age()),
                exc_info=not isinstance(exc, RELOAD_ERRORS),  # a bug, not an outage: trace it
            )
            return False
        return True

    async def _load(self) -> None:
        async with asyncio.timeout(_QUERY_TIMEOUT), self._pool.acquire() as conn:
            summaries = await archive_store.manifest_summaries(conn)
        snapshot = render(build_manifest(summaries), loaded_at=self._clock())
        if self._snapshot is None or snapshot.etag != self._snapshot.etag:
            log.info("manifest_loaded", months=snapshot.archives, etag=str(snapshot.etag))
        self._snapshot = snapshot
        self.last_error = None
        self._metrics.manifest_refreshes.labels("ok").inc()
        self._metrics.published_archives.set(snapshot.archives)

    async def _run(self) -> None:
        while True:
            if not self.listening:
                await self._listen()
            timeout = self._ttl if self.listening else min(self._ttl, _RECONNECT_INTERVAL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout)
            self._changed.clear()
            await self.refresh()

    def _on_notify(self, conn: object, pid: int, channel: str, payload: object) -> None:
        self._changed.set()

    def _on_terminated(self, conn: object) -> None:
        log.warning("manifest_listen_lost")
        self._changed.set()  # wake the loop: it reloads and reconnects

    async def _listen(self) -> None:
        await self._unlisten()
        try:
            async with asyncio.timeout(_QUERY_TIMEOUT):
                conn = await connect(self._dsn)
                try:
                    await conn.add_listener(archive_store.ARCHIVES_CHANNEL, self._on_notify)
                except BaseException:
                    conn.terminate()
                    raise
        except Exception as exc:  # DatabaseUnavailable, timeouts, SQL errors: the TTL covers it
            log.warning("manifest_listen_failed", error=f"{type(exc).__name__}: {exc}")
            return
        conn.add_termination_listener(self._on_terminated)
        self._listener = conn

    async def _unlisten(self) -> None:
        conn, self._listener = self._listener, None
        if conn is None or conn.is_closed():
            return
        conn.remove_termination_listener(self._on_terminated)  # closing on purpose is no loss
        try:
            async with asyncio.timeout(2):
                await conn.close()
        except Exception:
            conn.terminate()
