"""Companion file names, addressed like the archive's: ``gomoku-party-YYYY-MM-<16 hex>.parquet``,
the hex being the first digits of the companion's own SHA-256 (not the archive's)."""

from __future__ import annotations

import re

from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import ARCHIVE_NAME_PREFIX, NAME_HASH_LENGTH

COMPANION_SUFFIX = ".parquet"
COMPANION_NAME_RE = re.compile(
    re.escape(ARCHIVE_NAME_PREFIX)
    + rf"([0-9]{{4}})-(0[1-9]|1[0-2])-([0-9a-f]{{{NAME_HASH_LENGTH}}})"
    + re.escape(COMPANION_SUFFIX)
)
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def companion_file_name(month: Month, sha256: str) -> str:
    """The content-addressed download name of a month's companion."""
    if not _SHA256_RE.fullmatch(sha256):
        raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
    return f"{ARCHIVE_NAME_PREFIX}{month}-{sha256[:NAME_HASH_LENGTH]}{COMPANION_SUFFIX}"


def is_companion_name(name: str) -> bool:
    return COMPANION_NAME_RE.fullmatch(name) is not None
