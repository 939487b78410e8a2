"""SGF files as downloaders have them: ``.sgf.gz`` archives or plain ``.sgf`` text, told apart
by gzip's magic bytes, never by the name (a file renamed, or decompressed by a browser on the
way, must still be read)."""

from __future__ import annotations

import gzip
from typing import BinaryIO

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
