"""A bounded local cache of archive files, for downloads served with sendfile.

Archives are immutable and content-addressed, so a copy on local disk can never go stale: a
file is named by its full SHA-256 and enters the cache only once its bytes, read from the
chunks in PostgreSQL (the one reader, ``gomoku_archive.storage.chunks``), hashed to the row's sha256
and counted to its size while they were written to a temporary file; then it is renamed into
place (atomic), so a reader never sees a partial file. The least recently served files are
deleted to keep the total under the bound. A file deleted while it is being sent is harmless:
the sender holds it open.

One directory belongs to one process (each API process has its own index of it)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

from gomoku_archive.db.pool import Pool
from gomoku_archive.logs import get_logger
from gomoku_archive.storage.chunks import ChunkReadError, iter_archive

log = get_logger(__name__)

PARTIAL_SUFFIX = ".partial"
CONCURRENT_FILLS = 2
"""Copies made at once: after a restart every file is missed at the same time, and the
downloads themselves need the pool's connections more than the copies do."""
_NAME = re.compile(r"[0-9a-f]{64}")


class FileCache:
    """``open`` a cached copy (or None), ``fill`` one in the background; see the module."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self._sizes: OrderedDict[str, int] = OrderedDict()
        """sha256 -> size, least recently served first."""
        self._filling: dict[str, asyncio.Task[None]] = {}
        self._fill_slots = asyncio.Semaphore(CONCURRENT_FILLS)
        self.total = 0

    def start(self) -> None:
        """Create the directory, drop what a killed fill left, index what earlier runs kept
        (oldest first), and evict down to the bound, which may have shrunk since."""
        self.directory.mkdir(parents=True, exist_ok=True)
        found = []
        for entry in os.scandir(self.directory):
            if entry.name.endswith(PARTIAL_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
            elif _NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                stat = entry.stat(follow_symlinks=False)
                found.append((stat.st_mtime, entry.name, stat.st_size))
        for _, name, size in sorted(found):
            self._sizes[name] = size
            self.total += size
        self._evict(0)

    async def close(self) -> None:
        """Cancel fills in progress (their temporary files are removed)."""
        tasks = list(self._filling.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def open(self, sha256: str, size: int) -> BinaryIO | None:
        """The cached copy opened for reading, or None. A local open is quick enough for the
        event loop; holding the file open keeps it readable even if it is evicted meanwhile."""
        if self._sizes.get(sha256) != size:
            return None
        try:
            handle = (self.directory / sha256).open("rb")
        except FileNotFoundError:  # removed behind our back: forget it, fill it again later
            self.total -= self._sizes.pop(sha256)
            return None
        self._sizes.move_to_end(sha256)
        return handle

    def fill(self, pool: Pool, archive_id: int, sha256: str, size: int) -> None:
        """Start copying an archive into the cache unless it is there, being copied, or larger
        than the whole cache."""
        if sha256 in self._sizes or sha256 in self._filling or size > self.max_bytes:
            return
        if not _NAME.fullmatch(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        task = asyncio.create_task(self._fill(pool, archive_id, sha256, size))
        self._filling[sha256] = task
        task.add_done_callback(lambda _: self._filling.pop(sha256, None))

    async def _fill(self, pool: Pool, archive_id: int, sha256: str, size: int) -> None:
        async with self._fill_slots:
            await self._copy(pool, archive_id, sha256, size)

    async def _copy(self, pool: Pool, archive_id: int, sha256: str, size: int) -> None:
        partial = self.directory / f"{sha256}.{os.getpid()}{PARTIAL_SUFFIX}"
        digest = hashlib.sha256()
        written = 0
        try:
            with partial.open("wb") as out:
                async for view in iter_archive(pool, archive_id, size):
                    digest.update(view)
                    written += len(view)
                    await asyncio.to_thread(out.write, view)
                # A crash after the rename must not leave a name over unwritten blocks.
                await asyncio.to_thread(os.fsync, out.fileno())
            if written != size or digest.hexdigest() != sha256:
                log.error(
                    "download_cache_mismatch", archive_id=archive_id, bytes=written, sha256=sha256
                )
                return
            self._evict(size)
            os.replace(partial, self.directory / sha256)
            self._sizes[sha256] = size
            self.total += size
            log.info("download_cache_filled", archive_id=archive_id, bytes=size)
        except (ChunkReadError, OSError) as exc:
            log.warning("download_cache_fill_failed", archive_id=archive_id, error=str(exc))
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()

    def _evict(self, room: int) -> None:
        """Delete least recently served files until ``room`` more bytes fit."""
        while self._sizes and self.total + room > self.max_bytes:
            name, size = self._sizes.popitem(last=False)
            self.total -= size
            with contextlib.suppress(FileNotFoundError):
                (self.directory / name).unlink()
            log.info("download_cache_evicted", sha256=name, bytes=size)
