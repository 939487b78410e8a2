"""The deterministic gzip stream: exact header, round trip, independence from write() sizes,
agreement with CPython's gzip module, and a golden digest of a fixed set of games."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import random
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.demo.examples import EXAMPLE_MONTH, build_archive, example_records
from gomoku_archive.profile.stream import BLOCK_SIZE, COMPRESSION_LEVEL, GZIP_HEADER, ArchiveStream
from tests.budget import examples

# sha256 of the archive of demo.examples.example_records(): 200 games through game_line and
# ArchiveStream. Computed once; any change to a byte of the profile, the order or the stream
# must show up here (and the bundled example must then be regenerated on purpose).
GOLDEN_SHA256 = "33ef3c90e4bfe4e729771a80b31fd546d4db4c2be4a2fc771a3b82e3ad4bcb0b"


def sample(size: int, seed: int = 7) -> bytes:
    """Compressible, SGF-like text that is not trivially repetitive."""
    rng = random.Random(seed)
    lines = []
    total = 0
    while total < size:
        moves = "".join(
            f";B[{rng.choice('abcdefghijklmno')}{rng.choice('hijk')}]" for _ in range(9)
        )
        line = f"(;FF[4]GN[{rng.getrandbits(128):032x}]XTC[{rng.choice((60, 180))}]{moves})\n"
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()[:size]


def compress(chunks: list[bytes]) -> tuple[bytes, ArchiveStream]:
    stream = ArchiveStream()
    out = b"".join(stream.write(chunk) for chunk in chunks) + stream.finish()
    return out, stream


def test_header_is_exact() -> None:
    out, _ = compress([b"(;)\n"])
    assert out[:10] == bytes.fromhex("1f 8b 08 00 00 00 00 00 00 ff")
    assert out[:10] == GZIP_HEADER
    assert COMPRESSION_LEVEL == 6


@pytest.mark.parametrize("size", [0, 1, 1000, BLOCK_SIZE - 1, BLOCK_SIZE, 3 * BLOCK_SIZE + 17])
def test_round_trip_and_counters(size: int) -> None:
    data = sample(size)
    out, stream = compress([data])
    assert gzip.decompress(out) == data
    assert stream.uncompressed_bytes == len(data)
    assert stream.compressed_bytes == len(out)
    assert stream.sha256 == hashlib.sha256(out).hexdigest()
    crc, isize = struct.unpack("<II", out[-8:])
    assert crc == zlib.crc32(data)
    assert isize == len(data)


@pytest.mark.parametrize("size", [0, 5000, 2 * BLOCK_SIZE + 5])
def test_matches_cpython_gzip_byte_for_byte(size: int) -> None:
    data = sample(size)
    out, _ = compress([data])
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz:
        gz.write(data)
    assert out == buffer.getvalue()
    # gzip.compress(mtime=0) in CPython 3.11 hands the whole job to zlib, whose header carries
    # the build machine's OS (3 = Unix) instead of 255; every other byte is the same.
    compressed = gzip.compress(data, compresslevel=6, mtime=0)
    assert out == compressed[:9] + b"\xff" + compressed[10:]


def test_output_comes_out_while_writing() -> None:
    stream = ArchiveStream()
    first = stream.write(b"x")
    assert first == GZIP_HEADER  # the header at once, the data waits for a full block
    produced = sum(len(stream.write(sample(BLOCK_SIZE, seed=i))) for i in range(8))
    assert produced > 0
    assert stream.compressed_bytes == len(first) + produced


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(0, 3 * BLOCK_SIZE), max_size=12))
def test_write_boundaries_do_not_change_the_bytes(cuts: list[int]) -> None:
    data = sample(3 * BLOCK_SIZE)
    whole, _ = compress([data])
    bounds = [0, *sorted(cuts), len(data)]
    spans = [data[a:b] for a, b in itertools.pairwise(bounds)]
    split, _ = compress(spans)
    assert split == whole


def test_zlib_itself_does_not_depend_on_call_boundaries() -> None:
    # Why the fixed blocks are belt and braces rather than a fix: raw zlib at this level gives
    # the same bytes for one-byte calls as for one call. If this ever fails, the blocks matter.
    data = sample(20_000)

    def raw(chunks: list[bytes]) -> bytes:
        deflate = zlib.compressobj(COMPRESSION_LEVEL, zlib.DEFLATED, -15)
        return b"".join(deflate.compress(c) for c in chunks) + deflate.flush()

    assert raw([data[i : i + 1] for i in range(len(data))]) == raw([data])


def test_no_bom_is_added() -> None:
    out, _ = compress([b"(;FF[4])\n"])
    assert gzip.decompress(out).startswith(b"(;")


def test_write_after_finish_is_an_error() -> None:
    stream = ArchiveStream()
    stream.finish()
    with pytest.raises(ValueError, match="after finish"):
        stream.write(b"x")
    with pytest.raises(ValueError, match="twice"):
        stream.finish()


def test_golden_digest_of_the_example_games() -> None:
    built = build_archive(example_records(), EXAMPLE_MONTH)
    assert built.games == 200
    assert built.sha256 == GOLDEN_SHA256
    assert hashlib.sha256(built.data).hexdigest() == GOLDEN_SHA256
