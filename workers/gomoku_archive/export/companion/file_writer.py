"""The companion file: record batches in, in the archive's order, Parquet bytes out as they
are encoded. Rows are cut into row groups of exactly ``ROW_GROUP_ROWS`` (the last shorter)
whatever batches they came in, and each group is encoded from one contiguous table, so the
bytes depend on the rows alone: not on K, the ranges or how many workers made them. The
options are fixed (``schema``: zstd at a fixed level, dictionaries for the text enums,
statistics, the sort order); the footer holds no time, host or random value, and the writer's
version (``created_by``) is part of the file's identity, as K is the exporter's."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from gomoku_archive.companion.schema import (
    COLUMNS,
    COMPRESSION,
    COMPRESSION_LEVEL,
    ROW_GROUP_ROWS,
    SCHEMA_ID,
    Kind,
)
from gomoku_archive.export.companion.columns import SCHEMA
from gomoku_archive.export.companion.parts import read_part
from gomoku_archive.export.companion.sink import Drain

CREATED_BY = f"parquet-cpp-arrow version {pa.__version__}"
"""What pyarrow writes as the file's ``created_by`` (checked on every file written)."""
_PANDAS_METADATA = {
    "index_columns": [],
    "column_indexes": [],
    "columns": [
        {
            "name": c.name,
            "field_name": c.name,
            "pandas_type": c.kind.value,
            "numpy_type": "Int32",
            "metadata": None,
        }
        for c in COLUMNS
        if c.kind is Kind.INT32
    ],
}
"""pandas' own metadata for the nullable integers: pandas then reads ratings and time control
as ``Int32`` with ``<NA>`` (not floats with NaN) without being told, as it reads a file it
wrote itself. The other columns it reads natively."""
FILE_METADATA = {
    b"gomoku-party.schema": SCHEMA_ID.encode(),
    b"pandas": json.dumps(_PANDAS_METADATA, sort_keys=True, separators=(",", ":")).encode(),
}
"""The footer's key-value metadata: constants only."""
_NAMES = list(SCHEMA.names)


def writer_options() -> dict[str, object]:
    """``pyarrow.parquet.ParquetWriter``'s keyword arguments: the companion's fixed options."""
    return {
        "version": "2.6",
        "compression": COMPRESSION,
        "compression_level": COMPRESSION_LEVEL,
        "use_dictionary": [_leaf(c.name) for c in COLUMNS if c.dictionary],
        "write_statistics": [c.name for c in COLUMNS if c.statistics],
        "store_schema": False,
        "sorting_columns": [
            pq.SortingColumn(_NAMES.index("finish")),
            pq.SortingColumn(_NAMES.index("id")),
        ],
    }


def _leaf(name: str) -> str:
    """A column's leaf path in the file (a list's values are ``name.list.element``), as the
    writer's per-column options name it."""
    field_type = SCHEMA.field(name).type
    return f"{name}.list.element" if pa.types.is_list(field_type) else name


class ParquetStream:
    """One companion file, written as batches arrive (``add``), then ended (``finish``); each
    call returns the bytes encoded since the last. Holds at most one row group's rows."""

    def __init__(self, *, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        self._group_rows = row_group_rows
        self._sink = Drain()
        self._writer = pq.ParquetWriter(self._sink, SCHEMA, **writer_options())
        self._writer.add_key_value_metadata(FILE_METADATA)
        self._held: list[pa.RecordBatch] = []
        self._held_rows = 0
        self.rows = 0
        self.row_groups = 0

    def add(self, batch: pa.RecordBatch) -> bytes:
        """Take ``batch``'s rows (the next in order); the bytes of any row group it filled."""
        if not batch.schema.equals(SCHEMA):
            raise ValueError("a batch of another schema than the companion's")
        self._held.append(batch)
        self._held_rows += batch.num_rows
        while self._held_rows >= self._group_rows:
            held = pa.Table.from_batches(self._held, schema=SCHEMA)
            self._write_group(held.slice(0, self._group_rows))
            rest = held.slice(self._group_rows)
            self._held = rest.to_batches()
            self._held_rows = rest.num_rows
        return self._sink.take()

    def add_part(self, part: bytes) -> tuple[bytes, int]:
        """Take the rows of a stored range part (``parts.read_part``); the bytes encoded and
        the part's row count."""
        encoded = bytearray()
        rows = 0
        for batch in read_part(part):
            encoded += self.add(batch)
            rows += batch.num_rows
        return bytes(encoded), rows

    def finish(self) -> bytes:
        """The last (short) row group and the footer."""
        if self._held_rows:
            self._write_group(pa.Table.from_batches(self._held, schema=SCHEMA))
            self._held, self._held_rows = [], 0
        self._writer.close()
        return self._sink.take()

    def _write_group(self, rows: pa.Table) -> None:
        # One contiguous table: pages are cut the same way whatever batches the rows came in.
        group = rows.combine_chunks()
        self._writer.write_table(group, row_group_size=group.num_rows)
        self.rows += group.num_rows
        self.row_groups += 1
