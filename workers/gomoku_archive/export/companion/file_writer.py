"""The companion file. Rows come in the archive's order (a range part's batches) and are cut
into row groups of exactly ``ROW_GROUP_ROWS`` (the last shorter) whatever batches they came in
(``RowGroups``); each group is encoded on its own as a whole one-group Parquet file by pyarrow
(``encode_group``, in a thread: row groups are encoded in parallel), and the groups are joined
into one file (``companion.footer.Joiner``): byte for byte the file pyarrow's own writer gives
for the same rows in one pass (a test holds them equal). So the bytes depend on the rows alone:
not on K, the ranges, the workers or the threads.

The options are fixed (``schema``: zstd at a fixed level, dictionaries for the text enums,
statistics, the sort order, no page index); the footer holds no time, host or random value, and
the writer's version (``created_by``) is part of the file's identity, as K is the exporter's."""

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
from gomoku_archive.export.companion.columns import PART_SCHEMA, SCHEMA, file_table

CREATED_BY = f"parquet-cpp-arrow version {pa.__version__}"
"""What pyarrow writes as the file's ``created_by`` (a test reads it back)."""
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


def _leaf(name: str) -> str:
    """A column's leaf path in the file (a list's values are ``name.list.element``), as the
    writer's per-column options name it."""
    field_type = SCHEMA.field(name).type
    return f"{name}.list.element" if pa.types.is_list(field_type) else name


def writer_options() -> dict[str, object]:
    """``pyarrow.parquet.ParquetWriter``'s keyword arguments: the companion's fixed options."""
    return {
        "version": "2.6",
        "compression": COMPRESSION,
        "compression_level": COMPRESSION_LEVEL,
        "use_dictionary": [_leaf(c.name) for c in COLUMNS if c.dictionary],
        "write_statistics": [c.name for c in COLUMNS if c.statistics],
        "store_schema": False,
        "write_page_index": False,
        "sorting_columns": [
            pq.SortingColumn(_NAMES.index("finish")),
            pq.SortingColumn(_NAMES.index("id")),
        ],
    }


def encode_group(part: pa.Table) -> bytes:
    """One row group (rows of ``PART_SCHEMA``) as a whole one-group Parquet file. Releases the
    GIL while pyarrow encodes: run it in threads."""
    table = file_table(part)
    sink = pa.BufferOutputStream()  # in C++: no call back into Python while it encodes
    with pq.ParquetWriter(sink, SCHEMA, **writer_options()) as writer:
        writer.add_key_value_metadata(FILE_METADATA)
        writer.write_table(table, row_group_size=table.num_rows)
    data: bytes = sink.getvalue().to_pybytes()
    return data


class RowGroups:
    """Batches of ``PART_SCHEMA`` in, in order; tables of exactly ``rows`` rows out, the last
    one shorter (``finish``). Holds at most one group's rows."""

    def __init__(self, *, rows: int = ROW_GROUP_ROWS) -> None:
        self._rows = rows
        self._held: list[pa.RecordBatch] = []
        self._held_rows = 0

    def add(self, batch: pa.RecordBatch) -> list[pa.Table]:
        if not batch.schema.equals(PART_SCHEMA):
            raise ValueError("a batch of another schema than the companion's parts")
        self._held.append(batch)
        self._held_rows += batch.num_rows
        groups = []
        while self._held_rows >= self._rows:
            held = pa.Table.from_batches(self._held, schema=PART_SCHEMA)
            groups.append(held.slice(0, self._rows))
            rest = held.slice(self._rows)
            self._held, self._held_rows = rest.to_batches(), rest.num_rows
        return groups

    def finish(self) -> list[pa.Table]:
        """The last, short group (none when the rows filled whole groups)."""
        if not self._held_rows:
            return []
        last = pa.Table.from_batches(self._held, schema=PART_SCHEMA)
        self._held, self._held_rows = [], 0
        return [last]
