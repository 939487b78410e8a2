"""The headers an archive file and its checksum file are delivered with, by the API and, as the
objects' own metadata, by the S3 mirror: both must say the same."""

from __future__ import annotations

IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"
"""File names embed their content hash: a URL's bytes never change (API and bucket alike)."""
ARCHIVE_CONTENT_TYPE = "application/gzip"
CHECKSUM_CONTENT_TYPE = "text/plain; charset=utf-8"


def attachment(file_name: str) -> str:
    """``Content-Disposition`` for a download saved under its own name (names are ASCII)."""
    return f'attachment; filename="{file_name}"'
