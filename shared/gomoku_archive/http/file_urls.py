"""Where a file, its checksum and its torrent live in the archive API's URL space.
The manifest and the bulk lists write these paths, and the web application routes them."""

from __future__ import annotations

from gomoku_archive.profile.names import CHECKSUM_SUFFIX, TORRENT_SUFFIX

FILES_PATH = "/api/v1/database/files/"
MIRROR_FILES_PATH = "/database/files/"
"""The same files below /database/, listed by an index that mirrors (rclone, wget --no-parent)
walk; the manifest keeps ``FILES_PATH``."""


def download_url(file_name: str) -> str:
    return FILES_PATH + file_name


def checksum_url(file_name: str) -> str:
    return FILES_PATH + file_name + CHECKSUM_SUFFIX


def torrent_url(file_name: str) -> str:
    return FILES_PATH + file_name + TORRENT_SUFFIX
