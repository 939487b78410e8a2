"""Joining one-group Parquet files (companion.footer): the footer's codec gives pyarrow's bytes
back, the groups placed by their footers and lengths alone make pyarrow's one-pass file, and
parts it cannot place are refused rather than joined wrong."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gomoku_archive.companion import footer
from gomoku_archive.companion.footer import NotJoinable


def parquet(table: pa.Table, **options: object) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)  # type: ignore[arg-type]
    return sink.getvalue()


TABLE = pa.table(
    {
        "n": pa.array(range(300), pa.int64()),
        "text": pa.array([f"v{i % 7}" for i in range(300)]),
        "lists": pa.array([[i % 100, None, i % 90] for i in range(300)], pa.list_(pa.int8())),
        "flag": pa.array([i % 3 == 0 for i in range(300)]),
        "x": pa.array([i / 7 for i in range(300)]),
    }
)


def test_the_codec_gives_the_footer_back() -> None:
    data = parquet(TABLE, row_group_size=100, sorting_columns=[pq.SortingColumn(0)])
    length = int.from_bytes(data[-8:-4], "little")
    raw = data[-8 - length : -8]
    assert footer.encode(footer.decode(raw)) == raw


def test_joined_groups_are_the_one_pass_file() -> None:
    options = {"compression": "zstd", "sorting_columns": [pq.SortingColumn(0)]}
    whole = parquet(TABLE, row_group_size=100, **options)
    parts = [parquet(TABLE.slice(i, 100), row_group_size=100, **options) for i in (0, 100, 200)]
    assert b"".join(footer.join(parts)) == whole
    joined = pq.read_table(io.BytesIO(whole))
    assert joined.equals(TABLE)


def test_footers_and_lengths_alone_place_the_groups() -> None:
    """What a month's build does: each part's group's bytes copied by someone else to where
    ``place`` says, the joined footer after them."""
    options = {"compression": "zstd", "sorting_columns": [pq.SortingColumn(0)]}
    whole = parquet(TABLE, row_group_size=100, **options)
    parts = [parquet(TABLE.slice(i, 100), row_group_size=100, **options) for i in (0, 100, 200)]
    joiner = footer.Joiner()
    file = bytearray(footer.MAGIC)
    for part in map(footer.split, parts):
        assert joiner.place(part.footer, len(part.body)) == len(file)
        file += part.body
        assert joiner.size == len(file)
    assert bytes(file) + joiner.finish() == whole
    assert (joiner.rows, joiner.row_groups) == (300, 3)


def test_a_footer_whose_group_is_not_the_body_s_length_is_refused() -> None:
    part = footer.split(parquet(TABLE.slice(0, 100)))
    with pytest.raises(NotJoinable, match="column chunks are"):
        footer.Joiner().place(part.footer, len(part.body) - 1)


def test_parts_that_cannot_be_placed_are_refused() -> None:
    one = parquet(TABLE.slice(0, 100))
    with pytest.raises(NotJoinable, match="one row group"):
        list(footer.join([parquet(TABLE, row_group_size=100)]))
    with pytest.raises(NotJoinable, match="page index"):
        list(footer.join([parquet(TABLE.slice(0, 100), write_page_index=True)]))
    with pytest.raises(NotJoinable, match="differ"):
        list(footer.join([one, parquet(TABLE.slice(100, 100).drop_columns(["x"]))]))
    with pytest.raises(NotJoinable, match="not a Parquet file"):
        list(footer.join([b"PAR1"]))
    with pytest.raises(NotJoinable):
        footer.decode(one[-40:-8])
    with pytest.raises(NotJoinable, match="no part"):
        list(footer.join([]))
