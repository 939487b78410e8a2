"""SGF files as downloaders have them: ``.sgf.gz`` archives or plain ``.sgf`` text, told apart
by gzip's magic bytes, never by the name (a file renamed, or decompressed by a browser on the
way, must still be read)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from gomoku_archive.errors import UnreadableFile
from gomoku_archive.verify.archive import inflate_blocks
from gomoku_archive.verify.report import Check

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(prefix: bytes) -> bool:
    """Whether bytes starting with ``prefix`` (at least two of them) are gzip."""
    return prefix[:2] == GZIP_MAGIC


def open_sgf(path: str) -> BinaryIO:
    """The file's SGF bytes, decompressed when it is gzip. Raises OSError like ``open`` (and
    ``gzip.BadGzipFile``, an OSError, while reading a broken archive)."""
    with open(path, "rb") as probe:
        compressed = is_gzip(probe.read(2))
    if compressed:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


_READ_BLOCK = 1024 * 1024


class FirstMember:
    """The SGF bytes of a file as ``verify`` reads an archive: for gzip, the first member only,
    decompressed in bounded blocks (CRC and size checked by zlib), with what follows it said in
    ``after`` rather than read as more games; plain text as it is.

    ``gzip.open`` reads every member as one stream, so a file of two concatenated archives gave
    every game twice without a word."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.after: tuple[Check, str] | None = None
        """After ``blocks()``: what follows the gzip member, as ``verify`` reports it; None when
        nothing does, or for plain text."""

    def blocks(self) -> Iterator[bytes]:
        """The decompressed bytes, in blocks of at most 256 KiB. Raises ``zlib.error`` for a
        corrupt member and ``EOFError`` when the file ends inside it."""
        read = self._stream.read
        first = read(_READ_BLOCK)
        if not is_gzip(first):
            while first:
                yield first
                first = read(_READ_BLOCK)
            return
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)  # gzip: header and trailer checked
        chunk = first
        while chunk:
            yield from inflate_blocks(inflater, chunk)
            if inflater.eof:
                self._read_after(bytes(inflater.unused_data))
                return
            chunk = read(_READ_BLOCK)
        raise EOFError("the compressed data ends early")

    def _read_after(self, rest: bytes) -> None:
        while len(rest) < 2 and (more := self._stream.read(2 - len(rest))):
            rest += more
        if rest:
            self.after = (
                (Check.GZIP_MEMBERS, "a second gzip member follows the first (not read)")
                if is_gzip(rest)
                else (Check.TRAILING_DATA, "bytes follow the gzip member (not read)")
            )


ARCHIVE_PATTERNS = ("*.sgf.gz", "*.sgf")
"""What a directory argument stands for: its archives and plain SGF files (not its
sub-directories, so ``sync``'s ``superseded/`` is never read with the current months)."""


def expand_paths(arguments: Sequence[str]) -> list[Path]:
    """The files the command-line arguments name: a file as given (whether it exists or not:
    the command reports it), a directory as its ``ARCHIVE_PATTERNS`` files in name order, so
    months come oldest first. Raises ``UnreadableFile`` for a directory without any."""
    found: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        if not path.is_dir():
            found.append(path)
            continue
        inside = sorted(
            {p for pattern in ARCHIVE_PATTERNS for p in path.glob(pattern) if p.is_file()}
        )
        if not inside:
            raise UnreadableFile(f"{path} holds no .sgf.gz or .sgf file")
        found.extend(inside)
    return found
