"""The companion's row groups. Each range of a month's build gathers its games' rows as it
writes their lines (``GroupRows``) and encodes them, once the range is read, as one row group:
a whole one-group Parquet file by pyarrow (``encode_group``). The month's file is those groups
joined in range order (``companion.footer``): byte for byte the file pyarrow's own writer gives
for the same rows in one pass with a row group per range (a test holds them equal). So the bytes
depend on the rows and on the month's plan (which rows each range holds), as the archive's do,
not on which process ran which range or in what batches the rows came.

The options are fixed (``schema``: zstd at a fixed level, dictionaries for the text enums and
the moves, statistics, the sort order, no page index); the footer holds no time, host or random
value, and the writer's version (``created_by``) is part of the file's identity, as K is the
exporter's."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from gomoku_archive.companion.line_rows import text_columns
from gomoku_archive.companion.schema import COLUMNS, COMPRESSION, COMPRESSION_LEVEL, SCHEMA_ID, Kind
from gomoku_archive.export.companion.columns import ROWS_SCHEMA, SCHEMA, file_table, rows_batch
from gomoku_archive.export.companion.memory import use_kept_pages

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
    """A column's leaf path in the file (a list's values are ``name.list.element``, a list of
    lists' ``name.list.element.list.element``), as the writer's per-column options name it."""
    path, field_type = name, SCHEMA.field(name).type
    while pa.types.is_list(field_type):
        path, field_type = f"{path}.list.element", field_type.value_type
    return path


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


def encode_group(rows: pa.Table) -> bytes:
    """One row group (rows of ``ROWS_SCHEMA``) as a whole one-group Parquet file. Releases the
    GIL while pyarrow encodes: run it in a thread."""
    table = file_table(rows)
    sink = pa.BufferOutputStream()  # in C++: no call back into Python while it encodes
    with pq.ParquetWriter(sink, SCHEMA, **writer_options()) as writer:
        writer.add_key_value_metadata(FILE_METADATA)
        writer.write_table(table, row_group_size=table.num_rows)
    data: bytes = sink.getvalue().to_pybytes()
    return data


class GroupRows:
    """A row group's rows, gathered from its lines (each call: the next lines, in order) and
    held as Arrow (a few MB at K games) until ``encode``."""

    def __init__(self) -> None:
        use_kept_pages()
        self._batches: list[pa.RecordBatch] = []
        self.rows = 0

    def add(self, lines: list[str]) -> None:
        """The rows of ``lines`` (``companion.line_rows``; raises ``NotALine`` for a line that is
        not a game of the profile)."""
        if lines:
            batch = rows_batch(text_columns(lines))
            self._batches.append(batch)
            self.rows += batch.num_rows

    def encode(self) -> bytes:
        """The group's one-group Parquet file (``encode_group``), once; there must be a row.
        The rows are let go as it is encoded."""
        table = pa.Table.from_batches(self._batches, schema=ROWS_SCHEMA)
        self._batches = []
        return encode_group(table)


_ENCODER = ThreadPoolExecutor(1, thread_name_prefix="companion-encode")
"""The one thread a process encodes its groups in. jemalloc keeps a thread's freed pages for
its next group (``memory``): one thread keeps one group's worth, where the event loop's default
executor spread the groups over its threads and kept a group's worth for each (a 200,000-game
build's peak RSS grew with its ranges, 336 MiB against 155 without the companion)."""


async def encode_in_thread(group: GroupRows) -> tuple[bytes, float]:
    """``group.encode()`` in the encoding thread (pyarrow encodes without the GIL, and the
    event loop goes on), and that thread's CPU time for it."""
    return await asyncio.get_running_loop().run_in_executor(_ENCODER, _timed_encode, group)


def _timed_encode(group: GroupRows) -> tuple[bytes, float]:
    started = time.thread_time()
    data = group.encode()
    return data, time.thread_time() - started
