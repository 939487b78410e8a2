"""Which chunks hold a byte span, and which part of each chunk is sent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.storage.chunks import CHUNK_SIZE, ChunkSpan

C = CHUNK_SIZE


@pytest.mark.parametrize(
    ("size", "start", "end", "first", "last"),
    [
        (10, 0, 10, 0, 0),
        (C, 0, C, 0, 0),
        (C + 1, 0, C + 1, 0, 1),
        (3 * C + 5, C - 1, C + 1, 0, 1),  # the middle of chunk 0 into chunk 1
        (3 * C + 5, 2 * C, 2 * C + 1, 2, 2),
        (3 * C + 5, 3 * C + 4, 3 * C + 5, 3, 3),  # the last byte
        (3 * C + 5, C, 3 * C, 1, 2),  # whole chunks
    ],
)
def test_span_seqs(size: int, start: int, end: int, first: int, last: int) -> None:
    span = ChunkSpan(size, start, end)
    assert (span.first_seq, span.last_seq) == (first, last)


def test_expected_lengths() -> None:
    span = ChunkSpan(2 * C + 7, 0, 2 * C + 7)
    assert [span.expected_length(s) for s in range(3)] == [C, C, 7]


def test_a_chunks_view_is_not_a_copy() -> None:
    chunk = bytes(range(256)) * (C // 256)
    view = ChunkSpan(2 * C, 10, C + 5).view(0, chunk)
    assert isinstance(view, memoryview)
    assert view.obj is chunk
    assert bytes(view) == chunk[10:]


@given(
    data=st.data(),
    size=st.integers(min_value=1, max_value=5 * 64),
    chunk_size=st.sampled_from([1, 3, 64]),
)
def test_the_views_of_the_chunks_in_a_span_are_the_span(
    data: st.DataObject, size: int, chunk_size: int
) -> None:
    content = bytes(i % 251 for i in range(size))
    start = data.draw(st.integers(min_value=0, max_value=size - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=size))
    span = ChunkSpan(size, start, end, chunk_size)
    chunks = [content[i : i + chunk_size] for i in range(0, size, chunk_size)]
    assert all(len(chunks[s]) == span.expected_length(s) for s in range(len(chunks)))
    sent = b"".join(
        bytes(span.view(seq, chunks[seq])) for seq in range(span.first_seq, span.last_seq + 1)
    )
    assert sent == content[start:end]
