"""The mirror's multipart parts are exactly the archive cut at every ``part_size`` bytes,
whatever the chunk and part sizes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.storage.mirror import cut_parts


def split(data: bytes, chunk: int, part_size: int) -> list[bytes]:
    async def views() -> AsyncIterator[memoryview]:
        for i in range(0, len(data), chunk):
            yield memoryview(data)[i : i + chunk]

    async def collect() -> list[bytes]:
        return [p async for p in cut_parts(views(), part_size)]

    return asyncio.run(collect())


@given(
    data=st.binary(max_size=3000),
    chunk=st.integers(min_value=1, max_value=700),
    part_size=st.integers(min_value=1, max_value=900),
)
def test_parts_cut_the_archive_at_every_part_size(data: bytes, chunk: int, part_size: int) -> None:
    parts = split(data, chunk, part_size)
    assert b"".join(parts) == data
    assert all(len(p) == part_size for p in parts[:-1])
    assert not parts or 0 < len(parts[-1]) <= part_size


def test_chunk_aligned_parts() -> None:
    data = bytes(range(256)) * 40
    assert split(data, 1024, 2048) == [data[i : i + 2048] for i in range(0, len(data), 2048)]
