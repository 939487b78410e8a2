"""The bulk text files of the database, from the manifest document: ``sha256sums.txt`` for
``sha256sum -c --ignore-missing`` and ``list.txt`` for ``wget -i`` / ``aria2c -i``.

Pure. Both list the months' current files only, newest month first: a folder of current
downloads checks clean, and ``wget -i`` fetches each month once. Earlier files of rebuilt months
keep their own ``.sha256`` companions and are listed in the manifest's ``previousFiles``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gomoku_archive.profile.names import checksum_line


def current_files(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The months that have a file, in the manifest's order (newest first)."""
    return (month for month in document["months"] if month["file"] is not None)


def sha256sums(document: Mapping[str, Any]) -> str:
    """``<sha256>  <file>`` lines, the format ``sha256sum`` and ``shasum -a 256`` read."""
    return "".join(checksum_line(m["file"], m["sha256"]) for m in current_files(document))


def url_list(document: Mapping[str, Any], origin: str) -> str:
    """One absolute download URL a line, under ``origin`` (``https://host``)."""
    return "".join(f"{origin}{m['downloadUrl']}\n" for m in current_files(document))
