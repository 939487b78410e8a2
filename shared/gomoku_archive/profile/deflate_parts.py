"""One gzip member from ranges compressed apart: a big month is cut into ranges that different
processes or machines compress, and their deflate data are joined without recompressing anything.

The member is ``GZIP_HEADER``, then each range's raw deflate bytes in order, then
``gzip_trailer``. Each range gets a fresh compressor (no back-reference can cross a range, so
no range needs another's window), fed in ``BLOCK_SIZE`` blocks counted from the range's own first
byte. Every range but the last ends with Z_SYNC_FLUSH: a non-final empty stored block that leaves
the stream byte aligned, so the next range's first block starts on a byte and the plain
concatenation is one valid deflate stream. The last range ends with Z_FINISH, the only BFINAL
block. So for a single range the bytes are exactly ``ArchiveStream``'s (both feed the same
``BlockDeflate``).

The trailer needs the CRC-32 of the whole text, which no process sees: ``crc32_combine`` derives
it from each range's CRC and length (zlib's algorithm; CPython 3.11 does not expose it).
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from gomoku_archive.profile.stream import BlockDeflate

_CRC32_POLYNOMIAL = 0xEDB88320
"""CRC-32's polynomial, bit-reflected, as zlib's tables use it."""

_Matrix = tuple[int, ...]
"""A 32x32 matrix over GF(2): 32 columns, each an int of 32 bits (column n is the image of 1<<n)."""


def _gf2_times(matrix: _Matrix, vector: int) -> int:
    """``matrix`` applied to ``vector``: the XOR of the columns picked by vector's set bits."""
    total = 0
    column = 0
    while vector:
        if vector & 1:
            total ^= matrix[column]
        vector >>= 1
        column += 1
    return total


def _gf2_square(matrix: _Matrix) -> _Matrix:
    """``matrix`` times itself: the operator applied twice."""
    return tuple(_gf2_times(matrix, matrix[n]) for n in range(32))


@functools.cache
def _zeros_operator(power: int) -> _Matrix:
    """The operator that advances a CRC register over 2**power zero bytes.

    Cached: zlib squares from one zero bit up on every call; the chain is the same every time,
    so each square is computed once per process (at most 64 for any length below 2**64)."""
    if power == 0:
        # One zero bit shifts the register right and XORs the polynomial in when bit 0 was set;
        # three squarings make that one zero byte.
        bit: _Matrix = (_CRC32_POLYNOMIAL, *(1 << n for n in range(31)))
        return _gf2_square(_gf2_square(_gf2_square(bit)))
    return _gf2_square(_zeros_operator(power - 1))


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of A + B from ``crc1`` = crc32(A), ``crc2`` = crc32(B) and ``len2`` = len(B).

    zlib's ``crc32_combine``: the CRC register is linear over GF(2), so crc32(A + B) is crc1
    advanced over len2 zero bytes, XOR crc2 (the pre- and post-conditioning cancel). Advancing
    is the zero-byte operator raised to len2, built from the squares for len2's set bits:
    O(log len2) 32x32 products, exact for any length (a range may exceed 2**32 bytes)."""
    if len2 < 0:
        raise ValueError(f"negative length {len2}")
    power = 0
    while len2:
        if len2 & 1:
            crc1 = _gf2_times(_zeros_operator(power), crc1)
        len2 >>= 1
        power += 1
    return crc1 ^ crc2


@dataclass(frozen=True)
class PartSummary:
    """What assembling needs from a compressed range besides its bytes."""

    crc32: int
    """CRC-32 of the range's uncompressed text."""
    raw_bytes: int
    """The range's uncompressed length (the full count, not mod 2**32)."""
    deflate_bytes: int
    """Length of the range's deflate bytes (where the next range starts in the member)."""


class PartCompressor:
    """Raw deflate of one range: ``write`` then ``finish``; the bytes go between the header and the
    trailer of the assembled member, in range order, with exactly one ``last=True`` range at the
    end.

    A range that is not last and got no input contributes no bytes at all: a sync flush of an
    empty compressor would still emit an empty stored block (``00 00 00 ff ff``), so the member
    would depend on where the empty ranges fell rather than only on the text."""

    def __init__(self, *, last: bool) -> None:
        self.last = last
        self._deflate = BlockDeflate()
        self._finished = False
        self.crc32 = 0
        """CRC-32 of the bytes written so far (the range's once finished)."""
        self.raw_bytes = 0
        """Uncompressed bytes written so far (the full count)."""
        self.deflate_bytes = 0
        """Deflate bytes returned so far (the range's share of the member once finished)."""

    def write(self, data: bytes) -> bytes:
        """Add uncompressed bytes; returns the deflate bytes this produced (may be empty)."""
        if self._finished:
            raise ValueError("write() after finish()")
        self.crc32 = zlib.crc32(data, self.crc32)
        self.raw_bytes += len(data)
        return self._emit(self._deflate.feed(data))

    def finish(self) -> bytes:
        """Compress what is pending and end the range: Z_FINISH if last, else Z_SYNC_FLUSH."""
        if self._finished:
            raise ValueError("finish() called twice")
        self._finished = True
        if not self.last and self.raw_bytes == 0:
            return b""
        return self._emit(self._deflate.end(zlib.Z_FINISH if self.last else zlib.Z_SYNC_FLUSH))

    def summary(self) -> PartSummary:
        """The finished range's CRC and lengths, to send back to whoever assembles the member."""
        if not self._finished:
            raise ValueError("summary() before finish()")
        return PartSummary(self.crc32, self.raw_bytes, self.deflate_bytes)

    def _emit(self, chunk: bytes) -> bytes:
        self.deflate_bytes += len(chunk)
        return chunk


def gzip_trailer(parts: Iterable[tuple[int, int]]) -> bytes:
    """The member's 8-byte trailer from each range's ``(crc32, raw_bytes)`` in order: the CRC-32
    of the whole text and its length mod 2**32, little-endian, as gzip (RFC 1952) requires."""
    crc = 0
    total = 0
    for part_crc, part_bytes in parts:
        crc = crc32_combine(crc, part_crc, part_bytes)
        total += part_bytes
    return struct.pack("<II", crc, total & 0xFFFFFFFF)
