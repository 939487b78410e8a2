"""Archive file names and checksum lines: ``gomoku-party-YYYY-MM-<16 hex>.sgf.gz``."""

from __future__ import annotations

import re

from gomoku_archive.profile.months import Month

ARCHIVE_NAME_PREFIX = "gomoku-party-"
ARCHIVE_SUFFIX = ".sgf.gz"
NAME_HASH_LENGTH = 16
"""Hex digits of the archive's SHA-256 that go into its download name."""
ARCHIVE_NAME_RE = re.compile(
    re.escape(ARCHIVE_NAME_PREFIX)
    + rf"([0-9]{{4}})-(0[1-9]|1[0-2])-([0-9a-f]{{{NAME_HASH_LENGTH}}})"
    + re.escape(ARCHIVE_SUFFIX)
)
CHECKSUM_SUFFIX = ".sha256"
TORRENT_SUFFIX = ".torrent"
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def archive_file_name(month: Month, sha256: str) -> str:
    """The content-addressed download name of a month's archive."""
    if not _SHA256_RE.fullmatch(sha256):
        raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
    return f"{ARCHIVE_NAME_PREFIX}{month}-{sha256[:NAME_HASH_LENGTH]}{ARCHIVE_SUFFIX}"


def checksum_line(file_name: str, sha256: str) -> str:
    """The companion ``.sha256`` file, as ``sha256sum -c`` and ``shasum -a 256 -c`` read it."""
    return f"{sha256}  {file_name}\n"


def is_archive_name(name: str) -> bool:
    return ARCHIVE_NAME_RE.fullmatch(name) is not None
