"""The download cache's start-up scan of its folder, without a server (the cache's HTTP
behaviour is tests/integration/test_download_cache.py)."""

from __future__ import annotations

import os
from pathlib import Path

from gomoku_archive.storage.file_cache import FileCache


def test_start_indexes_kept_files_and_drops_partial_ones(tmp_path: Path) -> None:
    old, new = "a" * 64, "b" * 64
    tmp_path.joinpath(old).write_bytes(b"x" * 100)
    os.utime(tmp_path / old, (1, 1))
    tmp_path.joinpath(new).write_bytes(b"y" * 100)
    tmp_path.joinpath(f"{'c' * 64}.123.partial").write_bytes(b"z")
    tmp_path.joinpath("unrelated.txt").write_bytes(b"kept, not counted")
    cache = FileCache(tmp_path, max_bytes=150)  # room for one: the older goes
    cache.start()
    assert sorted(os.listdir(tmp_path)) == [new, "unrelated.txt"]
    assert cache.total == 100
    handle = cache.open(new, 100)
    assert handle is not None
    handle.close()
    assert cache.open(new, 99) is None  # a size that is not the row's is not this file
