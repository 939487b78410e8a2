"""The assembly's layout: the chunks copied inside parts and the chunks put together across
edges make exactly header + parts + trailer, every chunk once, with small chunks so that parts
shorter than a chunk, parts of exact multiples and empty parts all occur."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.export.part_layout import FileLayout, PartSlice

SIZE = 16


def segments(data: bytes) -> list[bytes]:
    return [data[i : i + SIZE] for i in range(0, len(data), SIZE)]


def built(header: bytes, parts: list[bytes], trailer: bytes) -> dict[int, bytes]:
    """The chunks as the assembly writes them, from segments only (as PostgreSQL would)."""
    layout = FileLayout(
        header, [(seq, 1, len(p)) for seq, p in enumerate(parts)], trailer, chunk_size=SIZE
    )
    stored = {seq: segments(p) for seq, p in enumerate(parts)}
    chunks: dict[int, bytes] = {}
    for copy in layout.interior_copies(batch=3):
        own = stored[copy.part.range_seq]
        for i in range(copy.count):
            segment = own[copy.first_segment + i]
            assert len(segment) == SIZE
            data = (
                segment
                if copy.split == 0
                else segment[copy.split :] + own[copy.first_segment + i + 1][: copy.split]
            )
            assert copy.first_chunk + i not in chunks
            chunks[copy.first_chunk + i] = data
    for edge in layout.edge_chunks():
        data = b""
        for source in edge.sources:
            if isinstance(source, PartSlice):
                segment = stored[source.range_seq][source.segment]
                data += segment[source.start : source.start + source.length]
            else:
                data += source
        assert len(data) == edge.length
        assert edge.seq not in chunks
        chunks[edge.seq] = data
    assert sorted(chunks) == list(range(layout.chunks))
    return chunks


@given(
    parts=st.lists(st.binary(max_size=5 * SIZE), max_size=8),
    trailer=st.binary(min_size=8, max_size=8),
)
def test_the_chunks_make_the_file(parts: list[bytes], trailer: bytes) -> None:
    header = b"H" * 10
    chunks = built(header, parts, trailer)
    whole = b"".join(chunks[i] for i in range(len(chunks)))
    assert whole == header + b"".join(parts) + trailer
    assert all(len(chunks[i]) == SIZE for i in range(len(chunks) - 1))


def test_a_part_on_a_chunk_edge_is_copied_segment_for_segment() -> None:
    layout = FileLayout(
        b"h" * 6, [(0, 1, 10), (1, 1, 3 * SIZE), (2, 1, 5)], b"t" * 8, chunk_size=SIZE
    )
    copies = list(layout.interior_copies(batch=2))
    assert [
        (c.part.range_seq, c.first_chunk, c.count, c.first_segment, c.split) for c in copies
    ] == [
        (1, 1, 2, 0, 0),
        (1, 3, 1, 2, 0),
    ]
    assert [e.seq for e in layout.edge_chunks()] == [0, 4]


def test_an_unaligned_part_splits_every_segment_the_same_way() -> None:
    layout = FileLayout(b"h" * 10, [(0, 1, 4 * SIZE)], b"t" * 8, chunk_size=SIZE)
    (copy,) = layout.interior_copies(batch=8)
    assert (copy.first_chunk, copy.count, copy.first_segment, copy.split) == (1, 3, 0, SIZE - 10)
    assert [e.seq for e in layout.edge_chunks()] == [0, 4, 5]  # the trailer ends at 82
