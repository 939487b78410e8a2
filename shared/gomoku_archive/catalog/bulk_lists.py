"""The bulk text files of the database, from the manifest document: ``sha256sums.txt`` for
``sha256sum -c --ignore-missing``, ``list.txt`` for ``wget -i`` / ``aria2c -i``, and
``parquet.txt``, the Parquet companions' addresses (for ``wget -i`` too, and for data tools
that read a list of URLs).

Pure. They list the months' current files only, newest month first: a folder of current
downloads checks clean, and ``wget -i`` fetches each month once. Earlier files of rebuilt months
keep their own ``.sha256`` companions and are listed in the manifest's ``previousFiles``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gomoku_archive.profile.names import checksum_line


def current_files(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The months that have a file, in the manifest's order (newest first)."""
    return (month for month in document["months"] if month["file"] is not None)


def current_companions(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The current files' Parquet companions (the ``parquet`` objects), newest month first."""
    for month in current_files(document):
        if month.get("parquet") is not None:
            yield month["parquet"]


def sha256sums(document: Mapping[str, Any]) -> str:
    """``<sha256>  <file>`` lines, the format ``sha256sum`` and ``shasum -a 256`` read: each
    month's archive, then its Parquet companion."""
    lines = []
    for month in current_files(document):
        lines.append(checksum_line(month["file"], month["sha256"]))
        parquet = month.get("parquet")
        if parquet is not None:
            lines.append(checksum_line(parquet["file"], parquet["sha256"]))
    return "".join(lines)


def url_list(document: Mapping[str, Any], origin: str) -> str:
    """One absolute download URL a line, under ``origin`` (``https://host``)."""
    return "".join(f"{origin}{m['downloadUrl']}\n" for m in current_files(document))


def parquet_url_list(document: Mapping[str, Any], origin: str) -> str:
    """One absolute Parquet companion URL a line, under ``origin``."""
    return "".join(f"{origin}{p['downloadUrl']}\n" for p in current_companions(document))
