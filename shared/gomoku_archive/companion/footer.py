"""One Parquet file from files of one row group each, encoded apart (in parallel, in the ranges
of a month's build): the groups' bytes in order, and one footer that lists every group at its new
place. A Parquet file is ``PAR1``, its row groups' column chunks, the footer (Thrift's compact
protocol: the schema, each group's column chunks with their byte offsets, the key-value metadata,
``created_by``), the footer's length and ``PAR1``. A column chunk's pages hold no offset, so a
group's bytes are the same wherever it lies; only the offsets in the footer move. So a group's
bytes can be copied to their place by whoever holds them (the build copies them inside
PostgreSQL): ``Joiner.place`` needs only each part's footer and its group's length.

``join`` gives byte for byte the file one writer gives for the same groups (a test holds them
equal for pyarrow's): the first part's footer with every part's group shifted to its place,
its ordinal set, and the row count summed. Files with a page index or bloom filters (whose own
structures hold offsets) are refused; the companion writes neither.

The codec reads and writes the compact protocol generically (``decode`` then ``encode`` gives
the bytes back); only the fields named here are interpreted. Pure."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAGIC = b"PAR1"

# Compact protocol types.
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT = 9, 10, 11, 12


class NotJoinable(ValueError):
    """A part that is not a one-group Parquet file this module can place."""


@dataclass(slots=True)
class Field:
    id: int
    type: int
    value: object
    """bool, int, float, bytes, ``Struct``, ``Collection`` or ``Mapping`` by ``type``."""


@dataclass(slots=True)
class Struct:
    fields: list[Field]

    def get(self, field_id: int) -> Field | None:
        return next((f for f in self.fields if f.id == field_id), None)


@dataclass(slots=True)
class Collection:
    """A list or a set."""

    element_type: int
    items: list[object]


@dataclass(slots=True)
class Mapping:
    key_type: int
    value_type: int
    items: list[tuple[object, object]]


# --- the codec -------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise NotJoinable("the footer ends inside a value")
        value = self.data[self.at]
        self.at += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise NotJoinable("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, count: int) -> bytes:
        if count < 0 or self.at + count > len(self.data):
            raise NotJoinable("the footer ends inside a value")
        value = self.data[self.at : self.at + count]
        self.at += count
        return value

    def value(self, kind: int) -> object:
        if kind in (_TRUE, _FALSE):  # inside a collection: one byte
            return self.byte() == _TRUE
        if kind == _BYTE:
            return self.byte()
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if kind == _BINARY:
            return self.take(self.varint())
        if kind in (_LIST, _SET):
            header = self.byte()
            size = header >> 4
            if size == 15:
                size = self.varint()
            element = header & 0x0F
            return Collection(element, [self.value(element) for _ in range(size)])
        if kind == _MAP:
            size = self.varint()
            if size == 0:
                return Mapping(0, 0, [])
            types = self.byte()
            key, value = types >> 4, types & 0x0F
            return Mapping(key, value, [(self.value(key), self.value(value)) for _ in range(size)])
        if kind == _STRUCT:
            return self.struct()
        raise NotJoinable(f"unknown compact type {kind}")

    def struct(self, spans: list[tuple[int, int, int]] | None = None) -> Struct:
        """The struct here; ``spans``, when given, gets each field's id and where its bytes
        start and end."""
        fields: list[Field] = []
        last = 0
        while True:
            start = self.at
            header = self.byte()
            if header == 0:
                return Struct(fields)
            kind, delta = header & 0x0F, header >> 4
            field_id = last + delta if delta else self.zigzag()
            if kind in (_TRUE, _FALSE):
                fields.append(Field(field_id, kind, kind == _TRUE))
            else:
                fields.append(Field(field_id, kind, self.value(kind)))
            if spans is not None:
                spans.append((field_id, start, self.at))
            last = field_id


def decode(data: bytes, spans: list[tuple[int, int, int]] | None = None) -> Struct:
    """A compact-protocol struct (a Parquet footer's ``FileMetaData``); ``spans`` gets each of
    its fields' id, start and end."""
    reader = _Reader(data)
    found = reader.struct(spans)
    if reader.at != len(data):
        raise NotJoinable("bytes after the footer's struct")
    return found


def _varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def _value(out: bytearray, kind: int, value: object) -> None:
    if kind in (_TRUE, _FALSE):
        out.append(_TRUE if value else _FALSE)
    elif kind == _BYTE:
        assert isinstance(value, int)
        out.append(value)
    elif kind in (_I16, _I32, _I64):
        assert isinstance(value, int)
        _zigzag(out, value)
    elif kind == _DOUBLE:
        assert isinstance(value, float)
        out += struct.pack("<d", value)
    elif kind == _BINARY:
        assert isinstance(value, bytes)
        _varint(out, len(value))
        out += value
    elif kind in (_LIST, _SET):
        assert isinstance(value, Collection)
        size = len(value.items)
        if size < 15:
            out.append(size << 4 | value.element_type)
        else:
            out.append(0xF0 | value.element_type)
            _varint(out, size)
        for item in value.items:
            _value(out, value.element_type, item)
    elif kind == _MAP:
        assert isinstance(value, Mapping)
        _varint(out, len(value.items))
        if value.items:
            out.append(value.key_type << 4 | value.value_type)
            for key, item in value.items:
                _value(out, value.key_type, key)
                _value(out, value.value_type, item)
    elif kind == _STRUCT:
        assert isinstance(value, Struct)
        _struct(out, value)
    else:
        raise NotJoinable(f"unknown compact type {kind}")


def _struct(out: bytearray, value: Struct) -> None:
    last = 0
    for field in value.fields:
        kind = field.type
        if kind in (_TRUE, _FALSE):
            kind = _TRUE if field.value else _FALSE
        if 0 < field.id - last <= 15:
            out.append((field.id - last) << 4 | kind)
        else:
            out.append(kind)
            _zigzag(out, field.id)
        if kind not in (_TRUE, _FALSE):
            _value(out, kind, field.value)
        last = field.id
    out.append(0)


def encode(value: Struct) -> bytes:
    out = bytearray()
    _struct(out, value)
    return bytes(out)


# --- joining one-group files -------------------------------------------------------------------

# parquet.thrift's field ids
_FILE_NUM_ROWS, _FILE_ROW_GROUPS = 3, 4
_GROUP_COLUMNS, _GROUP_NUM_ROWS, _GROUP_FILE_OFFSET, _GROUP_COMPRESSED, _GROUP_ORDINAL = (
    1,
    3,
    5,
    6,
    7,
)
_CHUNK_META = 3
_CHUNK_OFFSET_INDEX, _CHUNK_COLUMN_INDEX = 4, 6
_META_COMPRESSED = 7
_META_DATA_PAGE, _META_INDEX_PAGE, _META_DICTIONARY_PAGE, _META_BLOOM = 9, 10, 11, 14


@dataclass(frozen=True, slots=True)
class Part:
    """A one-group file cut into its group's bytes and its footer."""

    body: bytes
    """The row group's column chunks: the file without ``PAR1``, footer, length and ``PAR1``."""
    footer: bytes
    """The file's footer (its ``FileMetaData``) as written."""


def split(data: bytes) -> Part:
    """A Parquet file, cut as ``Joiner.place`` takes it (which checks that it has one group)."""
    if len(data) < 12 or data[:4] != MAGIC or data[-4:] != MAGIC:
        raise NotJoinable("not a Parquet file")
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    if start < 4:
        raise NotJoinable("the footer's length is past the file's start")
    return Part(data[4:start], data[start:-8])


def _field(value: Struct, field_id: int) -> Field:
    found = value.get(field_id)
    if found is None:
        raise NotJoinable(f"field {field_id} is missing")
    return found


def _int(value: Struct, field_id: int) -> int:
    found = _field(value, field_id).value
    assert isinstance(found, int)
    return found


def _shift(value: Struct, field_id: int, by: int) -> None:
    found = value.get(field_id)
    if found is not None:
        assert isinstance(found.value, int)
        found.value += by


def _chunks(group: Struct) -> list[Struct]:
    columns = _field(group, _GROUP_COLUMNS).value
    assert isinstance(columns, Collection)
    chunks = []
    for chunk in columns.items:
        assert isinstance(chunk, Struct)
        meta = _field(chunk, _CHUNK_META).value
        assert isinstance(meta, Struct)
        chunks.append(meta)
        if chunk.get(_CHUNK_OFFSET_INDEX) or chunk.get(_CHUNK_COLUMN_INDEX):
            raise NotJoinable("a page index holds offsets of its own")
        if meta.get(_META_BLOOM) is not None:
            raise NotJoinable("a bloom filter's offset is not moved here")
        # ColumnChunk.file_offset (2) is deprecated; parquet-cpp writes 0 and leaves it so.
    return chunks


def _placed(group: Struct, by: int, ordinal: int) -> Struct:
    """The row group's metadata with every offset moved ``by`` bytes and its ordinal set."""
    _shift(group, _GROUP_FILE_OFFSET, by)
    found = group.get(_GROUP_ORDINAL)
    if found is not None:
        found.value = ordinal
    for meta in _chunks(group):
        for field_id in (_META_DATA_PAGE, _META_INDEX_PAGE, _META_DICTIONARY_PAGE):
            _shift(meta, field_id, by)
    return group


def _without_groups(footer: bytes, spans: list[tuple[int, int, int]]) -> bytes:
    """The footer's bytes but its row count's and row groups': what the parts of one file share
    (their schema, metadata and writer), compared as bytes (faster than decoded)."""
    return b"".join(
        footer[start:end]
        for field_id, start, end in spans
        if field_id not in (_FILE_NUM_ROWS, _FILE_ROW_GROUPS)
    )


class Joiner:
    """The file of one-group parts (of one schema, options and writer) given in order: write
    ``MAGIC``, then each part's group's bytes as it is placed (``place``; or ``add`` a whole
    part and write what it returns, ``MAGIC`` included), then what ``finish`` returns (the
    footer)."""

    def __init__(self) -> None:
        self._position = len(MAGIC)
        self._groups: list[object] = []
        self._first: Struct | None = None
        self._shared = b""
        self.rows = 0

    @property
    def row_groups(self) -> int:
        return len(self._groups)

    @property
    def size(self) -> int:
        """Bytes so far: ``MAGIC`` and the groups placed."""
        return self._position

    def place(self, footer: bytes, body_bytes: int) -> int:
        """The next group: a one-group file's ``footer`` whose group is ``body_bytes`` long (the
        file's bytes after ``MAGIC``). Returns where the group's bytes go in the joined file.
        Raises ``NotJoinable`` for a footer of another file, schema or size."""
        spans: list[tuple[int, int, int]] = []
        decoded = decode(footer, spans)
        shared = _without_groups(footer, spans)
        groups = _field(decoded, _FILE_ROW_GROUPS).value
        if not isinstance(groups, Collection) or len(groups.items) != 1:
            raise NotJoinable("not a file of exactly one row group")
        (group,) = groups.items
        assert isinstance(group, Struct)
        chunked = sum(_int(meta, _META_COMPRESSED) for meta in _chunks(group))
        if chunked != body_bytes:
            raise NotJoinable(f"the group's column chunks are {chunked} bytes, not {body_bytes}")
        if self._first is None:
            self._first, self._shared = decoded, shared
        elif shared != self._shared:
            raise NotJoinable("the parts' schemas, metadata or writers differ")
        self.rows += _int(group, _GROUP_NUM_ROWS)
        offset = self._position
        self._groups.append(_placed(group, offset - len(MAGIC), len(self._groups)))
        self._position += body_bytes
        return offset

    def add(self, data: bytes) -> bytes:
        """The bytes of part ``data``'s group (after ``MAGIC``, for the first)."""
        part = split(data)
        head = b"" if self._groups else MAGIC
        self.place(part.footer, len(part.body))
        return head + part.body

    def finish(self) -> bytes:
        """The footer: the first part's, every group in it at its place."""
        first = self._first
        if first is None:
            raise NotJoinable("no part")
        _field(first, _FILE_NUM_ROWS).value = self.rows
        groups = _field(first, _FILE_ROW_GROUPS)
        assert isinstance(groups.value, Collection)
        groups.value = Collection(groups.value.element_type, self._groups)
        footer = encode(first)
        return footer + len(footer).to_bytes(4, "little") + MAGIC


def join(parts: Iterable[bytes]) -> Iterator[bytes]:
    """The file of ``parts`` as it comes (``Joiner``)."""
    joiner = Joiner()
    for data in parts:
        yield joiner.add(data)
    yield joiner.finish()
