"""Where the API looks for the tool's wheel, and when a checkout's wheel is stale."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gomoku_archive.settings import Settings
from gomoku_archive.web.tools_wheel import (
    CHECKOUT,
    SHARE_DIR,
    candidate_dirs,
    find_wheel,
    is_checkout,
    source_changed_after,
    wheel_name,
)


def test_tools_dir_is_the_only_place_when_set(tmp_path: Path) -> None:
    settings = Settings(tools_dir=tmp_path)
    assert candidate_dirs(settings) == [tmp_path]
    assert find_wheel(settings) is None
    (tmp_path / wheel_name()).write_bytes(b"PK")
    assert find_wheel(settings) == tmp_path / wheel_name()
    (tmp_path / wheel_name()).unlink()
    (tmp_path / wheel_name("0.9.0")).write_bytes(b"PK")  # another version's is not this one
    assert find_wheel(settings) is None


def test_the_installation_then_the_checkout() -> None:
    assert is_checkout(CHECKOUT)  # the tests run from one
    assert candidate_dirs(Settings()) == [SHARE_DIR, CHECKOUT / "dist"]
    assert not is_checkout(CHECKOUT / "docs")


def test_a_source_file_newer_than_the_wheel_makes_it_stale(tmp_path: Path) -> None:
    for top in ("shared", "services", "workers"):
        (tmp_path / top / "gomoku_archive").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('name = "gomoku-party-archive"\n')
    module = tmp_path / "shared" / "gomoku_archive" / "a.py"
    module.write_text("x = 1\n")
    built = time.time() + 10
    assert not source_changed_after(tmp_path, built)
    os.utime(module, (built + 5, built + 5))
    assert source_changed_after(tmp_path, built)
