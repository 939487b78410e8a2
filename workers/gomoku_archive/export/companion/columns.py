"""The companion's rows as Arrow arrays, each column of ``companion.schema`` from the text
``companion.line_rows`` read, in one vectorised step per column (digits cast to integers, times
parsed, the move nodes cut into points), so the per-game Python work is the line's match.

Two shapes: a row group's rows as they are gathered (``ROWS_SCHEMA``, a batch of lines at a
time) carry each game's moves as its points' letters (``hhih...``, two bytes a move), cheap to
make and to hold; the file's rows (``SCHEMA``) have ``plies``, ``moves`` and ``sgf_moves``
made from them once per group (``file_table``), just before it is encoded."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from gomoku_archive.companion.line_rows import TextColumns
from gomoku_archive.companion.schema import COLUMNS, Kind

_TYPES: dict[Kind, pa.DataType] = {
    Kind.TEXT: pa.string(),
    Kind.CATEGORY: pa.string(),
    Kind.INSTANT: pa.timestamp("ms", tz="UTC"),
    Kind.INT32: pa.int32(),
    Kind.INT16: pa.int16(),
    Kind.POINTS: pa.list_(pa.list_(pa.int8())),
    Kind.SGF_POINTS: pa.list_(pa.string()),
}
SCHEMA = pa.schema([pa.field(c.name, _TYPES[c.kind], nullable=c.nullable) for c in COLUMNS])
"""The file's Arrow schema (nothing in its metadata)."""
_FROM_MOVES = ("plies", "moves", "sgf_moves")
POINTS = "points"
ROWS_SCHEMA = pa.schema(
    [f for f in SCHEMA if f.name not in _FROM_MOVES]
    + [pa.field(POINTS, pa.binary(), nullable=False)]
)
"""A group's rows as gathered: the file's columns but those made from the moves, and the
points' letters."""
_NODE = 6
"""``;B[hh]``: the points are its bytes 3 and 4."""
_LETTER_A = pa.scalar(ord("a"), pa.uint8())
SLICE_ROWS = 4096
"""Rows the Parquet writer is given at a time: it makes a column's levels and dictionary
indices a chunk of its input at a time, so its memory is a slice's, not the row group's (a
sixth of the page faults and a quarter less of the encoding's CPU on a 30,000-row group,
measured)."""


def rows_batch(columns: TextColumns) -> pa.RecordBatch:
    """The rows as one record batch of ``ROWS_SCHEMA``."""
    arrays = {
        "id": pa.array(columns.id, pa.string()),
        "month": pa.array(columns.month, pa.string()),
        "start": _instants(columns.start),
        "finish": _instants(columns.finish),
        "winner": pa.array(columns.winner, pa.string()),
        "result": pa.array(columns.result, pa.string()),
        "termination": pa.array(columns.termination, pa.string()),
        "black_rating": _integers(columns.black_rating),
        "white_rating": _integers(columns.white_rating),
        "time_control": _integers(columns.time_control),
        POINTS: _points(columns.moves),
    }
    return pa.RecordBatch.from_arrays([arrays[n] for n in ROWS_SCHEMA.names], schema=ROWS_SCHEMA)


def file_table(rows: pa.Table) -> pa.Table:
    """Rows of ``ROWS_SCHEMA`` as the file's (``SCHEMA``), in chunks of ``SLICE_ROWS`` rows
    from the first (the writer's bytes do not depend on the chunks, a test holds it; these are
    the same whatever batches the rows came in)."""
    if rows.num_rows == 0:
        raise ValueError("a file's rows are one game or more")
    slices = rows.combine_chunks().to_batches(max_chunksize=SLICE_ROWS)
    return pa.Table.from_batches(list(map(_file_batch, slices)), schema=SCHEMA)


def _file_batch(part: pa.RecordBatch) -> pa.RecordBatch:
    points = part.column(POINTS)
    # Into the data buffer, whatever slice of it the array is.
    offsets = pa.Array.from_buffers(
        pa.int32(), len(points) + 1, [None, points.buffers()[1]], offset=points.offset
    )
    first = offsets[0].as_py()
    starts = pc.divide(pc.subtract(offsets, first), 2).cast(pa.int32())  # each game's first move
    count = starts[-1].as_py()
    data = points.buffers()[2]
    letters = pa.Array.from_buffers(pa.uint8(), 2 * count, [None, data], offset=first)
    pairs = pa.Array.from_buffers(pa.binary(2), count, [None, data], offset=first // 2)
    numbers = pc.subtract(letters, _LETTER_A).cast(pa.int8())
    made = {
        "plies": pc.pairwise_diff(starts)[1:].cast(pa.int16()),
        "moves": pa.ListArray.from_arrays(
            starts, pa.FixedSizeListArray.from_arrays(numbers, 2).cast(pa.list_(pa.int8()))
        ),
        "sgf_moves": pa.ListArray.from_arrays(starts, pairs.cast(pa.string())),
    }
    arrays = [made[n] if n in made else part.column(n) for n in SCHEMA.names]
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


def record_batch(columns: TextColumns) -> pa.RecordBatch:
    """The rows as the file has them (a gathered batch made into the file's rows)."""
    table = file_table(pa.Table.from_batches([rows_batch(columns)])).combine_chunks()
    (batch,) = table.to_batches()
    return batch


def _instants(texts: list[str]) -> pa.Array:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC as milliseconds since the epoch (Arrow's ISO 8601 cast:
    half the time of ``strptime`` with a format)."""
    naive = pa.array(texts, pa.string()).cast(pa.timestamp("ms"))
    return naive.cast(pa.timestamp("ms", tz="UTC"))


def _integers(texts: list[str | None]) -> pa.Array:
    """Decimal digits (None: null) as int32; a value outside int32 raises."""
    return pa.array(texts, pa.string()).cast(pa.int32())


def _points(nodes: list[str]) -> pa.Array:
    """Each game's points' letters (``hhih...``), cut from its nodes' bytes 3 and 4: one
    binary value a game over one buffer of every move's two letters."""
    flat = "".join(nodes).encode("ascii")
    whole = pa.Array.from_buffers(pa.binary(_NODE), len(flat) // _NODE, [None, pa.py_buffer(flat)])
    letters = pc.binary_slice(whole, 3, 5)  # fixed_size_binary(2): one buffer, no offsets
    lengths = pa.array(list(map(len, nodes)), pa.int32())
    offsets = pa.concat_arrays(
        [pa.array([0], pa.int32()), pc.cumulative_sum(pc.divide(lengths, 3)).cast(pa.int32())]
    )
    return pa.Array.from_buffers(
        pa.binary(), len(nodes), [None, offsets.buffers()[1], letters.buffers()[1]]
    )
