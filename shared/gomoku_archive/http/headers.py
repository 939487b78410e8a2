"""The headers an archive file (or its Parquet companion) and its checksum file are delivered
with, by the API and, as the objects' own metadata, by the S3 mirror: both must say the same."""

from __future__ import annotations

from gomoku_archive.companion.file_names import is_companion_name

IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"
"""File names embed their content hash: a URL's bytes never change (API and bucket alike)."""
ARCHIVE_CONTENT_TYPE = "application/gzip"
PARQUET_CONTENT_TYPE = "application/vnd.apache.parquet"
"""The media type IANA registered for Parquet (2024)."""
CHECKSUM_CONTENT_TYPE = "text/plain; charset=utf-8"


def file_content_type(file_name: str) -> str:
    """A served file's media type: an archive's, or its companion's."""
    return PARQUET_CONTENT_TYPE if is_companion_name(file_name) else ARCHIVE_CONTENT_TYPE


def attachment(file_name: str) -> str:
    """``Content-Disposition`` for a download saved under its own name (names are ASCII)."""
    return f'attachment; filename="{file_name}"'
