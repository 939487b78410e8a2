"""``verify`` on hostile archives: gzip bombs, and (below) truncated, bit-flipped, non-gzip and
wrong-header files. Each run must end with a documented exit code and a message, never a
traceback, in bounded time and constant memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.hostile_support import MIB, run_cli, write_gzip_bomb
from tests.support import bundled_archive_path

GIB = 1024 * MIB
BOMB_SECONDS = 60
"""Bound for 1 GiB of output: decompressing it takes a few seconds; the old per-line check of
blank lines projected to more than half an hour."""
RSS_GROWTH = 32 * MIB
"""Peak RSS allowed above that of verifying the small bundled example: the command's imports
alone take over 100 MiB, so the bound is on what the input adds."""


@pytest.fixture(scope="module")
def baseline_rss() -> int:
    outcome = run_cli("verify", str(bundled_archive_path()))
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    return outcome.peak_rss


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    for name, pattern in (("newlines", b"\n"), ("zeros", b"\0"), ("short-lines", b"x\n")):
        path = folder / f"{name}.sgf.gz"
        write_gzip_bomb(path, pattern, GIB)
        made[name] = path
    return made


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["newlines", "zeros", "short-lines"])
def test_a_gzip_bomb_gets_a_clear_answer_in_bounded_time_and_memory(
    bombs: dict[str, Path], baseline_rss: int, kind: str
) -> None:
    path = bombs[kind]
    outcome = run_cli("verify", str(path), timeout=BOMB_SECONDS * 2)
    print(
        f"verify on a {path.stat().st_size:,}-byte gzip of 1 GiB of {kind}: exit "
        f"{outcome.returncode} in {outcome.seconds:.1f} s, peak RSS "
        f"{outcome.peak_rss / MIB:.0f} MiB (the bundled example: {baseline_rss / MIB:.0f} MiB)"
    )
    assert outcome.clear, outcome.stderr
    assert outcome.returncode == 1
    assert "uncompressed" in outcome.stdout and "PROBLEMS" in outcome.stdout
    assert outcome.seconds < BOMB_SECONDS
    assert outcome.peak_rss < baseline_rss + RSS_GROWTH
