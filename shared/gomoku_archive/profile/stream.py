"""A deterministic gzip writer: the same uncompressed bytes always give the same archive bytes.

The member is written by hand rather than through ``gzip.GzipFile`` so that every header byte is
fixed by this module: ``1f 8b 08 00 00000000 00 ff`` (deflate, no flags, so no file name or
comment; MTIME 0; XFL 0, what gzip writes for level 6; OS 255 "unknown", the byte CPython's gzip
module writes, so the build machine's OS does not leak into the bytes). Then raw deflate at
``COMPRESSION_LEVEL`` and the trailer: CRC-32 and the input size mod 2**32, little-endian.

Input is handed to zlib in blocks of exactly ``BLOCK_SIZE`` bytes whatever the caller's write
sizes, so the output depends only on the bytes written (zlib's output with Z_NO_FLUSH does not
depend on call boundaries in practice; the fixed blocks make that a property of this code rather
than of zlib's internals). Memory stays bounded by one block plus zlib's fixed state.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

COMPRESSION_LEVEL = 6
"""zlib's default level and what the ``gzip`` command uses; part of the archive's identity."""

BLOCK_SIZE = 64 * 1024
"""Bytes handed to the compressor per call."""

GZIP_HEADER = bytes([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF])
"""Magic, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255."""

_WINDOW_BITS = -15  # negative: raw deflate, the gzip framing is ours


class BlockDeflate:
    """Raw deflate at ``COMPRESSION_LEVEL``, fed in ``BLOCK_SIZE`` blocks from its first byte on.

    Shared by ``ArchiveStream`` and the range compressor (profile/deflate_parts.py), so that a
    single range's deflate bytes are ArchiveStream's by construction, not by two copies agreeing.
    """

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(COMPRESSION_LEVEL, zlib.DEFLATED, _WINDOW_BITS)
        self._pending = bytearray()

    def feed(self, data: bytes) -> bytes:
        """Buffer ``data``; compress every full block now buffered and return what zlib emits."""
        out = []
        pending = self._pending
        pending += data
        if len(pending) >= BLOCK_SIZE:
            view = memoryview(pending)
            full = len(pending) - len(pending) % BLOCK_SIZE
            for start in range(0, full, BLOCK_SIZE):
                out.append(self._compressor.compress(view[start : start + BLOCK_SIZE]))
            view.release()
            del pending[:full]
        return b"".join(out)

    def end(self, mode: int) -> bytes:
        """Compress the partial block left, then ``flush(mode)``: Z_FINISH ends the stream (the
        last block has BFINAL set), Z_SYNC_FLUSH byte-aligns it so more deflate data can follow."""
        out = []
        if self._pending:
            out.append(self._compressor.compress(bytes(self._pending)))
            self._pending.clear()
        out.append(self._compressor.flush(mode))
        return b"".join(out)


class ArchiveStream:
    """Incremental gzip writer: feed lines, get compressed bytes out as they are produced."""

    def __init__(self) -> None:
        self._deflate = BlockDeflate()
        self._hash = hashlib.sha256()
        self._crc = 0
        self._header_sent = False
        self._finished = False
        self.compressed_bytes = 0
        """Compressed bytes returned so far (the archive's size once finished)."""
        self.uncompressed_bytes = 0
        """Bytes written so far (the full count, not mod 2**32)."""

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of every compressed byte returned so far; the archive's after finish()."""
        return self._hash.hexdigest()

    def write(self, data: bytes) -> bytes:
        """Add uncompressed bytes; returns the compressed bytes this produced (may be empty)."""
        if self._finished:
            raise ValueError("write() after finish()")
        self._crc = zlib.crc32(data, self._crc)
        self.uncompressed_bytes += len(data)
        return self._emit(self._header() + self._deflate.feed(data))

    def finish(self) -> bytes:
        """Flush the compressor; returns the remaining bytes including the 8-byte trailer."""
        if self._finished:
            raise ValueError("finish() called twice")
        self._finished = True
        tail = [self._header(), self._deflate.end(zlib.Z_FINISH)]
        tail.append(struct.pack("<II", self._crc, self.uncompressed_bytes & 0xFFFFFFFF))
        return self._emit(b"".join(tail))

    def _header(self) -> bytes:
        if self._header_sent:
            return b""
        self._header_sent = True
        return GZIP_HEADER

    def _emit(self, chunk: bytes) -> bytes:
        self._hash.update(chunk)
        self.compressed_bytes += len(chunk)
        return chunk
