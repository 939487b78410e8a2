"""The companion's rows as Arrow arrays: each column of ``companion.schema`` from the text
``companion.lines`` read, in one vectorised step per column (digits cast to integers, times
parsed, the move nodes cut into points), so the per-game Python work is the line's match."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from gomoku_archive.companion.lines import TextColumns
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
"""The Arrow schema of the parts and of the file (nothing in its metadata)."""
_NODE = 6
"""``;B[hh]``: the points are its bytes 3 and 4."""
_LETTER_A = ord("a")


def record_batch(columns: TextColumns) -> pa.RecordBatch:
    """The rows as one record batch of ``SCHEMA``."""
    moves = pa.array(columns.moves, pa.string())
    plies = pc.divide(pc.binary_length(moves), _NODE)
    offsets = pa.concat_arrays(
        [pa.array([0], pa.int32()), pc.cumulative_sum(plies).cast(pa.int32())]
    )
    points = _points(columns.moves)
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
        "plies": plies.cast(pa.int16()),
        "moves": pa.ListArray.from_arrays(offsets, _pairs(points)),
        "sgf_moves": pa.ListArray.from_arrays(offsets, points.cast(pa.string())),
    }
    return pa.RecordBatch.from_arrays([arrays[name] for name in SCHEMA.names], schema=SCHEMA)


def _instants(texts: list[str]) -> pa.Array:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC as milliseconds since the epoch."""
    parsed = pc.strptime(pa.array(texts, pa.string()), format="%Y-%m-%dT%H:%M:%S", unit="ms")
    return parsed.cast(pa.timestamp("ms", tz="UTC"))


def _integers(texts: list[str | None]) -> pa.Array:
    """Decimal digits (None: null) as int32; a value outside int32 raises."""
    return pa.array(texts, pa.string()).cast(pa.int32())


def _points(nodes: list[str]) -> pa.Array:
    """Every move's two letters (``hh``), all games' moves in one array, from the nodes'
    bytes 3 and 4."""
    flat = "".join(nodes).encode("ascii")
    count = len(flat) // _NODE
    whole = pa.Array.from_buffers(pa.binary(_NODE), count, [None, pa.py_buffer(flat)])
    return pc.binary_slice(whole, 3, 5)


def _pairs(points: pa.Array) -> pa.Array:
    """``hh`` -> ``[7, 7]``: each letter's offset from ``a``, two to a list."""
    letters = pa.Array.from_buffers(pa.uint8(), 2 * len(points), [None, points.buffers()[1]])
    numbers = pc.subtract(letters, pa.scalar(_LETTER_A, pa.uint8())).cast(pa.int8())
    return pa.FixedSizeListArray.from_arrays(numbers, 2).cast(pa.list_(pa.int8()))
