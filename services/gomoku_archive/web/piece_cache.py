"""Torrent piece hashes per file, in memory.

They are the costly part of a torrent (one read of the file) and never change for a file, so
they are kept, bounded, and computed once however many requests ask at the same time. Memory
rather than a table: the API only reads the archive tables, a restart costs one read per file
asked for, and the hashes are 20 bytes a piece (about 20 KiB a file)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from gomoku_archive.catalog.torrent import piece_length
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.storage.pieces import piece_hashes

DEFAULT_PIECE_CACHE_BYTES = 16 * 1024 * 1024
"""About 800 files' hashes."""


class PieceCache:
    """Piece hashes by the file's sha256, least recently used dropped past ``bound`` bytes."""

    def __init__(self, bound: int = DEFAULT_PIECE_CACHE_BYTES) -> None:
        self._bound = bound
        self._size = 0
        self._hashes: OrderedDict[str, bytes] = OrderedDict()
        self._running: dict[str, asyncio.Future[bytes]] = {}

    async def get(self, pool: Pool, row: ArchiveRow) -> bytes:
        assert row.sha256 is not None
        key = row.sha256
        if (found := self._hashes.get(key)) is not None:
            self._hashes.move_to_end(key)
            return found
        running = self._running.get(key)
        if running is None:
            task = piece_hashes(pool, row.id, row.bytes, piece_length(row.bytes))
            running = asyncio.ensure_future(task)
            self._running[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        # shield: a client that leaves must not cancel the work other requests wait for.
        return await asyncio.shield(running)

    def _finished(self, key: str, done: asyncio.Future[bytes]) -> None:
        del self._running[key]
        if done.cancelled() or done.exception() is not None:
            return
        hashes = done.result()
        self._hashes[key] = hashes
        self._size += len(hashes)
        while self._size > self._bound and len(self._hashes) > 1:
            _, dropped = self._hashes.popitem(last=False)
            self._size -= len(dropped)
