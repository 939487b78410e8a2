import hashlib
import io

import pytest
import torf

from gomoku_archive.catalog.torrent import (
    MIN_PIECE_LENGTH,
    build_torrent,
    piece_count,
    piece_length,
)
from gomoku_archive.storage.chunks import CHUNK_SIZE

KIB, MIB, GIB = 1024, 1024**2, 1024**3


@pytest.mark.parametrize(
    ("size", "length"),
    [
        (1, 256 * KIB),
        (256 * MIB, 256 * KIB),  # exactly 1,024 pieces
        (256 * MIB + 1, 512 * KIB),
        (1 * GIB, 1 * MIB),
        (3 * GIB, 4 * MIB),
        (16 * GIB, 16 * MIB),
        (100 * GIB, 16 * MIB),  # capped: more pieces
    ],
)
def test_piece_length(size: int, length: int) -> None:
    assert piece_length(size) == length
    assert piece_count(size, length) <= 1024 or length == 16 * MIB


def pieces_of(data: bytes, length: int) -> bytes:
    return b"".join(
        hashlib.sha1(data[i : i + length]).digest() for i in range(0, max(len(data), 1), length)
    )


def test_a_torrent_torf_reads_and_verifies() -> None:
    data = bytes(range(256)) * 4000  # 1,024,000 bytes: 4 pieces, the last one short
    length = piece_length(len(data))
    body = build_torrent(
        name="gomoku-party-2026-09-0123456789abcdef.sgf.gz",
        size=len(data),
        pieces=pieces_of(data, length),
        web_seeds=["https://gomokuparty.com/api/v1/database/files/x.sgf.gz"],
        comment="c",
    )
    assert body == build_torrent(
        name="gomoku-party-2026-09-0123456789abcdef.sgf.gz",
        size=len(data),
        pieces=pieces_of(data, length),
        web_seeds=["https://gomokuparty.com/api/v1/database/files/x.sgf.gz"],
        comment="c",
    ), "deterministic"
    torrent = torf.Torrent.read_stream(io.BytesIO(body))
    assert torrent.name == "gomoku-party-2026-09-0123456789abcdef.sgf.gz"
    assert torrent.size == len(data)
    assert torrent.piece_size == 256 * KIB
    assert torrent.pieces == 4
    assert torrent.creation_date is None
    assert torrent.webseeds == ["https://gomokuparty.com/api/v1/database/files/x.sgf.gz"]
    for index in range(4):
        piece = data[index * length : (index + 1) * length]
        assert torrent.hashes[index] == hashlib.sha1(piece).digest()


def test_wrong_piece_hashes_are_refused() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        build_torrent(name="x", size=300 * KIB, pieces=b"\0" * 20, web_seeds=[])


def test_a_piece_is_whole_stored_chunks() -> None:
    assert MIN_PIECE_LENGTH == CHUNK_SIZE
