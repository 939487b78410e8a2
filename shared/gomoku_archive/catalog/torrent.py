"""Deterministic v1 torrents (BEP 3) of archive files, with web seeds (BEP 19). Pure: the
piece hashes are computed elsewhere (``gomoku_archive.storage.pieces``) from the stored bytes.

The same file and the same web seeds give the same bytes: no creation date, a fixed piece
size chosen from the file's size alone, and a fixed ``created by``."""

from __future__ import annotations

from collections.abc import Sequence

from gomoku_archive.catalog.bencode import Bencodable, bencode

MIN_PIECE_LENGTH = 256 * 1024
"""256 KiB, the size of a stored chunk (``storage.chunks.CHUNK_SIZE``, a test holds them equal):
a piece is then always whole stored chunks."""
MAX_PIECE_LENGTH = 16 * 1024 * 1024
TARGET_PIECES = 1024
"""Around a thousand pieces: small .torrent files (20 bytes a piece), pieces small enough to
retry cheaply; the rule common torrent makers follow."""
CREATED_BY = "gomoku-archive"
SHA1_LENGTH = 20


def piece_length(size: int) -> int:
    """The smallest power of two from 256 KiB that cuts ``size`` bytes into at most 1,024
    pieces, capped at 16 MiB (files above 16 GiB get more pieces)."""
    length = MIN_PIECE_LENGTH
    while length < MAX_PIECE_LENGTH and -(-size // length) > TARGET_PIECES:
        length *= 2
    return length


def piece_count(size: int, length: int) -> int:
    return max(1, -(-size // length))


def build_torrent(
    *, name: str, size: int, pieces: bytes, web_seeds: Sequence[str], comment: str = ""
) -> bytes:
    """The .torrent file: one file called ``name``, its SHA-1 ``pieces`` (20 bytes each, as
    many as ``piece_length(size)`` makes), and ``url-list`` holding the URLs where the whole
    file can be fetched over HTTP (BEP 19: a URL not ending in ``/`` is the file itself)."""
    length = piece_length(size)
    if len(pieces) != SHA1_LENGTH * piece_count(size, length):
        raise ValueError(f"{len(pieces)} bytes of piece hashes do not fit {size} bytes")
    info: dict[str, Bencodable] = {
        "length": size,
        "name": name,
        "piece length": length,
        "pieces": pieces,
    }
    meta: dict[str, Bencodable] = {"created by": CREATED_BY, "info": info}
    if web_seeds:
        meta["url-list"] = list(web_seeds)
    if comment:
        meta["comment"] = comment
    return bencode(meta)
