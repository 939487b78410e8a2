"""Ranges compressed apart and joined into one gzip member: crc32_combine against zlib and an
independent polynomial computation, a single range byte for byte ArchiveStream's, and many
ranges (empty ones included) decoding as exactly one member whatever the cuts and write sizes."""

from __future__ import annotations

import gzip
import itertools
import random
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.profile.deflate_parts import (
    PartCompressor,
    PartSummary,
    crc32_combine,
    gzip_trailer,
)
from gomoku_archive.profile.stream import BLOCK_SIZE, GZIP_HEADER, ArchiveStream
from tests.budget import examples
from tests.unit.profile.test_archive_stream import sample

CRCS = st.integers(0, 0xFFFFFFFF)
DATA = sample(200 * 1024)
"""200 KiB: three full blocks and a partial one."""


# --- crc32_combine -------------------------------------------------------------------------------


def reference_combine(crc1: int, crc2: int, len2: int) -> int:
    """crc32_combine computed another way: polynomial arithmetic mod CRC-32's generator.

    The register (bit-reflected: bit 31 holds x**0) advanced over len2 zero bytes is the register
    times x**(8*len2) mod P; x**(8*len2) mod P by square-and-multiply on Python ints."""
    generator = 0x104C11DB7

    def reverse32(value: int) -> int:
        return int(f"{value:032b}"[::-1], 2)

    def mulmod(a: int, b: int) -> int:
        product = 0
        while b:
            if b & 1:
                product ^= a
            b >>= 1
            a <<= 1
            if a >> 32:
                a ^= generator
        return product

    power, base, exponent = 1, 2, 8 * len2  # 2 is the polynomial x
    while exponent:
        if exponent & 1:
            power = mulmod(power, base)
        base = mulmod(base, base)
        exponent >>= 1
    return reverse32(mulmod(reverse32(crc1), power)) ^ crc2


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=3000), st.binary(max_size=3000))
def test_combine_is_the_crc_of_the_concatenation(a: bytes, b: bytes) -> None:
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


@given(CRCS)
def test_combine_with_an_empty_second_part_keeps_the_first(crc1: int) -> None:
    assert crc32_combine(crc1, zlib.crc32(b""), 0) == crc1
    assert crc32_combine(zlib.crc32(b""), crc1, 1234) == crc1  # an empty first part adds nothing


def test_combine_rejects_a_negative_length() -> None:
    with pytest.raises(ValueError, match="negative"):
        crc32_combine(1, 2, -1)


@given(st.binary(max_size=200), st.binary(max_size=200))
def test_the_reference_agrees_with_zlib(a: bytes, b: bytes) -> None:
    # The reference is only a witness for huge lengths if it is right where zlib can check it.
    assert reference_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


@settings(max_examples=examples(200), deadline=None)
@given(CRCS, CRCS, st.integers(0, 2**40))
def test_combine_matches_the_reference_up_to_2_to_the_40(crc1: int, crc2: int, len2: int) -> None:
    assert crc32_combine(crc1, crc2, len2) == reference_combine(crc1, crc2, len2)


@pytest.mark.parametrize("first", [0, 1, 65_536, 3_333_333, 9_999_999, 10**7])
def test_combine_of_ten_million_zeros_matches_zlib(first: int) -> None:
    total = 10**7
    whole = zlib.crc32(bytes(total))
    head, tail = zlib.crc32(bytes(first)), zlib.crc32(bytes(total - first))
    assert crc32_combine(head, tail, total - first) == whole


@pytest.mark.slow  # zlib runs CRCs over 2 x 4 GiB: several seconds
def test_combine_past_2_to_the_32_matches_zlib() -> None:
    def crc_of_zeros(length: int, crc: int = 0) -> int:
        chunk = bytes(1 << 26)
        for _ in range(length // len(chunk)):
            crc = zlib.crc32(chunk, crc)
        return zlib.crc32(bytes(length % len(chunk)), crc)

    prefix = b"(;FF[4])\n"
    length = 2**32 + 12_345
    zeros = crc_of_zeros(length)
    whole = crc_of_zeros(length, zlib.crc32(prefix))
    assert crc32_combine(zlib.crc32(prefix), zeros, length) == whole
    trailer = gzip_trailer([(zlib.crc32(prefix), len(prefix)), (zeros, length)])
    assert trailer == struct.pack("<II", whole, len(prefix) + 12_345)


# --- assembling ----------------------------------------------------------------------------------


def compress_part(chunks: list[bytes], *, last: bool) -> tuple[bytes, PartSummary]:
    part = PartCompressor(last=last)
    out = b"".join(part.write(chunk) for chunk in chunks) + part.finish()
    summary = part.summary()
    assert summary.deflate_bytes == len(out)
    assert summary.raw_bytes == sum(map(len, chunks))
    assert summary.crc32 == zlib.crc32(b"".join(chunks))
    return out, summary


def assemble(ranges: list[list[bytes]]) -> bytes:
    """The member from ranges given as their write() calls; the last range is the last part."""
    bodies = []
    summaries = []
    for index, chunks in enumerate(ranges):
        body, summary = compress_part(chunks, last=index == len(ranges) - 1)
        bodies.append(body)
        summaries.append(summary)
    trailer = gzip_trailer((s.crc32, s.raw_bytes) for s in summaries)
    return GZIP_HEADER + b"".join(bodies) + trailer


def archive_stream(chunks: list[bytes]) -> bytes:
    stream = ArchiveStream()
    return b"".join(stream.write(chunk) for chunk in chunks) + stream.finish()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(min(cut, len(data)) for cut in cuts), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def assert_one_member_of(member: bytes, text: bytes) -> None:
    """Every reader gets ``text`` back, and the member ends exactly where its trailer does."""
    assert gzip.decompress(member) == text
    reader = zlib.decompressobj(wbits=31)
    assert reader.decompress(member) == text
    assert reader.eof
    assert reader.unused_data == b""
    # Bytes after the trailer are left over, not read as a second member or a longer stream.
    reader = zlib.decompressobj(wbits=31)
    assert reader.decompress(member + GZIP_HEADER) == text
    assert reader.eof
    assert reader.unused_data == GZIP_HEADER
    # The raw deflate stream has exactly one BFINAL block, the last part's, right before the
    # trailer.
    raw = zlib.decompressobj(-15)
    assert raw.decompress(member[len(GZIP_HEADER) :]) == text
    assert raw.eof
    assert raw.unused_data == member[-8:]
    crc, size = struct.unpack("<II", member[-8:])
    assert (crc, size) == (zlib.crc32(text), len(text) & 0xFFFFFFFF)


@pytest.mark.parametrize("size", [0, 1, 1000, BLOCK_SIZE - 1, BLOCK_SIZE, len(DATA)])
def test_a_single_last_part_is_archive_stream_byte_for_byte(size: int) -> None:
    text = DATA[:size]
    member = assemble([[text]])
    assert member == archive_stream([text])
    assert_one_member_of(member, text)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(0, len(DATA)), max_size=12), st.lists(st.integers(0, len(DATA))))
def test_a_single_part_matches_archive_stream_whatever_the_write_sizes(
    part_cuts: list[int], stream_cuts: list[int]
) -> None:
    assert assemble([split(DATA, part_cuts)]) == archive_stream(split(DATA, stream_cuts))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(0, len(DATA)), max_size=8),
    st.lists(st.integers(0, 8), max_size=4),
    st.booleans(),
)
def test_ranges_assemble_into_one_member(
    cuts: list[int], empty_at: list[int], empty_last: bool
) -> None:
    ranges = [[span] for span in split(DATA, cuts)]
    for index in empty_at:  # empty ranges at random places, the middle included
        ranges.insert(min(index, len(ranges)), [])
    if empty_last:
        ranges.append([])
    assert_one_member_of(assemble(ranges), DATA)


def test_fixed_ranges_with_empty_ones_in_the_middle_and_at_the_end() -> None:
    cuts = [0, 10, 10, BLOCK_SIZE, BLOCK_SIZE, 150_000, len(DATA), len(DATA)]
    ranges = [[span] for span in split(DATA, cuts)]
    assert [len(r[0]) for r in ranges] == [0, 10, 0, BLOCK_SIZE - 10, 0, 84_464, 54_800, 0, 0]
    assert_one_member_of(assemble(ranges), DATA)
    # Empty ranges contribute nothing: dropping them (keeping a last part) gives the same bytes.
    non_empty = [r for r in ranges if r[0]] + [[]]
    assert assemble(ranges) == assemble(non_empty)


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_write_sizes_within_a_range_do_not_change_the_member(data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    cuts = sorted(rng.randrange(len(DATA) + 1) for _ in range(rng.randrange(5)))
    spans = split(DATA, cuts)
    whole = assemble([[span] for span in spans])
    rewritten = [
        split(span, data.draw(st.lists(st.integers(0, len(span)), max_size=6))) for span in spans
    ]
    assert assemble(rewritten) == whole


def test_an_empty_range_that_is_not_last_contributes_no_bytes() -> None:
    part = PartCompressor(last=False)
    assert part.write(b"") == b""
    assert part.finish() == b""
    assert part.summary() == PartSummary(crc32=0, raw_bytes=0, deflate_bytes=0)


def test_what_the_flushes_of_an_empty_compressor_emit() -> None:
    # Why the empty range is special-cased: a sync flush with no input still writes an empty
    # stored block (BFINAL 0, LEN 0, NLEN ffff), 5 bytes; Z_FINISH writes an empty fixed block.
    assert zlib.compressobj(6, zlib.DEFLATED, -15).flush(zlib.Z_SYNC_FLUSH) == bytes.fromhex(
        "00 00 00 ff ff"
    )
    assert zlib.compressobj(6, zlib.DEFLATED, -15).flush(zlib.Z_FINISH) == bytes.fromhex("03 00")
    empty_last = PartCompressor(last=True)
    assert empty_last.finish() == bytes.fromhex("03 00")


def test_a_range_that_is_not_last_ends_byte_aligned_with_a_sync_marker() -> None:
    body, _ = compress_part([DATA[:5000]], last=False)
    assert body.endswith(bytes.fromhex("00 00 ff ff"))
    raw = zlib.decompressobj(-15)
    assert raw.decompress(body) == DATA[:5000]
    assert not raw.eof  # no BFINAL: more deflate data may follow


def test_output_comes_out_while_writing() -> None:
    part = PartCompressor(last=False)
    produced = sum(len(part.write(sample(BLOCK_SIZE, seed=i))) for i in range(8))
    assert produced > 0
    assert part.deflate_bytes == produced
    assert part.raw_bytes == 8 * BLOCK_SIZE


def test_misuse_is_an_error() -> None:
    part = PartCompressor(last=True)
    with pytest.raises(ValueError, match="before finish"):
        part.summary()
    part.finish()
    with pytest.raises(ValueError, match="after finish"):
        part.write(b"x")
    with pytest.raises(ValueError, match="twice"):
        part.finish()


def test_the_trailer_size_is_the_total_mod_2_to_the_32() -> None:
    parts = [(0x12345678, 2**32 - 1), (0x9ABCDEF0, 7), (0, 0)]
    crc = crc32_combine(crc32_combine(0x12345678, 0x9ABCDEF0, 7), 0, 0)
    assert gzip_trailer(parts) == struct.pack("<II", crc, 6)
    assert gzip_trailer([]) == struct.pack("<II", 0, 0)
