"""A stored archive's torrent piece hashes: SHA-1 of each ``piece_length`` bytes, read once in
order through ``storage.chunks`` (bounded memory, a pool connection per query only)."""

from __future__ import annotations

import hashlib

from gomoku_archive.db.pool import Pool
from gomoku_archive.storage.chunks import iter_archive


async def piece_hashes(pool: Pool, archive_id: int, size: int, piece_length: int) -> bytes:
    """The concatenated 20-byte digests. Raises ``ChunkReadError`` as downloads do."""
    digests: list[bytes] = []
    piece = hashlib.sha1(usedforsecurity=False)  # BEP 3's piece hash, not a security choice here
    filled = 0
    async for block in iter_archive(pool, archive_id, size):
        view = memoryview(block)
        while view:
            take = min(len(view), piece_length - filled)
            piece.update(view[:take])
            filled += take
            view = view[take:]
            if filled == piece_length:
                digests.append(piece.digest())
                piece, filled = hashlib.sha1(usedforsecurity=False), 0
    if filled or not digests:
        digests.append(piece.digest())
    return b"".join(digests)
