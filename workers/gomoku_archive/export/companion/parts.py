"""A range's companion part: its rows (``columns.PART_SCHEMA``) as an Arrow IPC stream, buffers
compressed with lz4, stored beside the range's deflate part until the month's file is written
from the parts in order. The per-game Python work (a line's match) is done here, in the
ranges, in parallel; what follows is pyarrow's C++."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from gomoku_archive.companion.lines import text_columns
from gomoku_archive.export.companion.columns import PART_SCHEMA, part_batch
from gomoku_archive.export.companion.sink import Drain

PART_COMPRESSION = "lz4"
"""Fast, and a part lives only until its month's file is written."""


class PartWriter:
    """Lines in (each call: some of the range's lines, in order), IPC bytes out."""

    def __init__(self) -> None:
        self._sink = Drain()
        options = pa.ipc.IpcWriteOptions(compression=PART_COMPRESSION)
        self._writer = pa.ipc.new_stream(self._sink, PART_SCHEMA, options=options)
        self.rows = 0

    def write(self, lines: list[str]) -> bytes:
        """The part's bytes so far not taken, after ``lines``' rows."""
        if lines:
            batch = part_batch(text_columns(lines))
            self._writer.write_batch(batch)
            self.rows += batch.num_rows
        return self._sink.take()

    def finish(self) -> bytes:
        """The rest of the part, its end-of-stream marker included."""
        self._writer.close()
        return self._sink.take()


def read_part(data: bytes) -> Iterator[pa.RecordBatch]:
    """The batches of a stored part, in order; raises ``pyarrow.ArrowInvalid`` for bytes that
    are not a whole part."""
    reader = pa.ipc.open_stream(pa.py_buffer(data))
    if not reader.schema.equals(PART_SCHEMA):
        raise pa.ArrowInvalid("the part's schema is not the companion's")
    yield from reader
