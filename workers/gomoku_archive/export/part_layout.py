"""Where every byte of the month's file comes from, once the parts' lengths are known: the
file is the gzip header, the parts' deflate data in order, and the trailer, cut into chunks of
``CHUNK_SIZE``. A part starts at the header's length plus the earlier parts' lengths, so the
chunks that lie wholly inside one part can be copied from that part's segments on their own, in
parallel and inside PostgreSQL; only the chunks that cross an edge (a part's, the header's or
the trailer's) are put together from slices.

A part's segments are ``CHUNK_SIZE`` long (the last one shorter), so a chunk inside a part is the
tail of one segment and the head of the next, with the same split for every chunk of the part."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from gomoku_archive.storage.chunks import CHUNK_SIZE


@dataclass(frozen=True, slots=True)
class PlacedPart:
    """A range's part and its place in the file."""

    range_seq: int
    attempt: int
    offset: int
    length: int

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True, slots=True)
class InteriorCopy:
    """Chunks ``first_chunk .. first_chunk + count - 1``, all inside ``part``: chunk
    ``first_chunk + i`` is segment ``first_segment + i`` from byte ``split`` on, followed by the
    first ``split`` bytes of the next segment (``split`` 0: the segment itself)."""

    part: PlacedPart
    first_chunk: int
    count: int
    first_segment: int
    split: int


@dataclass(frozen=True, slots=True)
class PartSlice:
    """Bytes ``[start, start + length)`` of segment ``segment`` of a part."""

    range_seq: int
    attempt: int
    segment: int
    start: int
    length: int


Source = bytes | PartSlice
"""Where a run of an edge chunk's bytes comes from: the header or trailer, or a part."""


@dataclass(frozen=True, slots=True)
class EdgeChunk:
    """A chunk that crosses an edge, as the runs that make it, in order."""

    seq: int
    length: int
    sources: tuple[Source, ...]


class FileLayout:
    """The month's file: ``header``, the parts of ``lengths`` (``(range_seq, attempt,
    deflate_bytes)`` in archive order), ``trailer``."""

    def __init__(
        self,
        header: bytes,
        parts: list[tuple[int, int, int]],
        trailer: bytes,
        *,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self.header = header
        self.trailer = trailer
        self.chunk_size = chunk_size
        placed = []
        offset = len(header)
        for range_seq, attempt, length in parts:
            placed.append(PlacedPart(range_seq, attempt, offset, length))
            offset += length
        self.parts = placed
        self._ends = [part.end for part in placed]
        self.trailer_offset = offset
        self.size = offset + len(trailer)

    @property
    def chunks(self) -> int:
        return -(-self.size // self.chunk_size)

    def interior_chunks(self, part: PlacedPart) -> range:
        """The chunks wholly inside ``part`` (perhaps none)."""
        size = self.chunk_size
        return range(-(-part.offset // size), part.end // size)

    def interior_copies(self, *, batch: int) -> Iterator[InteriorCopy]:
        """Every part's inside chunks, at most ``batch`` chunks a copy."""
        size = self.chunk_size
        for part in self.parts:
            inside = self.interior_chunks(part)
            for first in range(inside.start, inside.stop, batch):
                count = min(batch, inside.stop - first)
                into_part = first * size - part.offset
                yield InteriorCopy(part, first, count, into_part // size, into_part % size)

    def edge_chunks(self) -> Iterator[EdgeChunk]:
        """Every chunk that is not wholly inside one part, with where its bytes come from."""
        inside: set[int] = set()
        for part in self.parts:
            inside.update(self.interior_chunks(part))
        for seq in range(self.chunks):
            if seq not in inside:
                yield self._edge(seq)

    def _edge(self, seq: int) -> EdgeChunk:
        size = self.chunk_size
        start, end = seq * size, min((seq + 1) * size, self.size)
        sources: list[Source] = []
        if start < len(self.header):
            sources.append(self.header[start:end])
        for part in self.parts[bisect.bisect_right(self._ends, start) :]:
            if part.offset >= end:
                break
            lo, hi = max(start, part.offset), min(end, part.end)
            while lo < hi:
                segment, at = divmod(lo - part.offset, size)
                take = min(hi - lo, size - at)
                sources.append(PartSlice(part.range_seq, part.attempt, segment, at, take))
                lo += take
        if end > self.trailer_offset:
            lo = max(start, self.trailer_offset) - self.trailer_offset
            sources.append(self.trailer[lo : end - self.trailer_offset])
        return EdgeChunk(seq, end - start, tuple(sources))
