"""Archive file names and checksum lines: ``gomoku-party-YYYY-MM-<16 hex>.sgf.gz``."""

from __future__ import annotations

import re

from shared.archive.months import Month

CHUNK_SIZE = 262_144
"""Archive bytes are stored (and served) in chunks of exactly 256 KiB; the last may be shorter."""

FILES_PATH = "/api/v1/database/files/"

ARCHIVE_NAME_PREFIX = "gomoku-party-"
ARCHIVE_SUFFIX = ".sgf.gz"
NAME_HASH_LENGTH = 16
ARCHIVE_NAME_RE = re.compile(
    re.escape(ARCHIVE_NAME_PREFIX)
    + rf"(\d{{4}})-(0[1-9]|1[0-2])-([0-9a-f]{{{NAME_HASH_LENGTH}}})"
    + re.escape(ARCHIVE_SUFFIX)
)
CHECKSUM_SUFFIX = ".sha256"
TORRENT_SUFFIX = ".torrent"

IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"
"""File names embed their content hash: a URL's bytes never change (API and bucket alike)."""
ARCHIVE_CONTENT_TYPE = "application/gzip"
CHECKSUM_CONTENT_TYPE = "text/plain; charset=utf-8"
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


def download_url(file_name: str) -> str:
    return FILES_PATH + file_name


def checksum_url(file_name: str) -> str:
    return FILES_PATH + file_name + CHECKSUM_SUFFIX


def torrent_url(file_name: str) -> str:
    return FILES_PATH + file_name + TORRENT_SUFFIX


def attachment(file_name: str) -> str:
    """``Content-Disposition`` for a download saved under its own name (names are ASCII)."""
    return f'attachment; filename="{file_name}"'
