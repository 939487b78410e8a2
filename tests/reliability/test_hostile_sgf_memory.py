"""``sgf check`` on single huge games: memory at most ten times the input plus a constant (the
peak RSS of the command on a tiny file), and a clear answer. The checker streams each game node
by node; it used to build the whole tree, about 180 bytes per input byte (1.5 GB for 8 MB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.hostile_support import MIB, Outcome, run_cli

LETTERS = "abcdefghijklmno"
POINTS = [a + b for a in LETTERS for b in LETTERS]
ROOT = "(;GM[4]FF[4]CA[UTF-8]SZ[15]"


def main_line(size: int) -> str:
    """One game on one line: ``size`` bytes of moves going round the board (so it makes a five,
    then plays on: GK004), about 150,000 nodes per MB."""
    count = size // 7
    return ROOT + "".join(f";{'BW'[i % 2]}[{POINTS[i % 225]}]" for i in range(count)) + ")\n"


def nested(size: int) -> str:
    """One game written as one variation per move, as deep as ``size`` allows."""
    count = size // 8
    moves = "".join(f"(;{'BW'[i % 2]}[{POINTS[i % 225]}]" for i in range(count))
    return ROOT + moves + ")" * (count + 1) + "\n"


def comment(size: int) -> str:
    return ROOT + "C[" + "long comment, " * (size // 14) + "];B[hh])\n"


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory: pytest.TempPathFactory) -> int:
    tiny = tmp_path_factory.mktemp("tiny") / "tiny.sgf"
    tiny.write_text(ROOT + ";B[hh])\n")
    outcome = run_cli("sgf", "check", str(tiny))
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    return outcome.peak_rss


def check_huge(path: Path, text: str, baseline: int) -> Outcome:
    path.write_text(text)
    size = path.stat().st_size
    outcome = run_cli("sgf", "check", str(path), timeout=300)
    growth = outcome.peak_rss - baseline
    print(
        f"sgf check on a {size / MIB:.0f} MB single game ({path.stem}): exit "
        f"{outcome.returncode} in {outcome.seconds:.1f} s, peak RSS {outcome.peak_rss / MIB:.0f} "
        f"MiB, {max(growth, 0) / size:.1f} bytes per input byte over a tiny file's "
        f"{baseline / MIB:.0f} MiB"
    )
    assert outcome.clear, outcome.stderr
    assert outcome.returncode in (0, 2)
    assert outcome.stdout.rstrip().endswith(("errors", "warnings", "error", "warning"))
    assert growth <= 10 * size, f"{growth / size:.1f} bytes per input byte"
    return outcome


@pytest.mark.parametrize("shape", [main_line, nested])
def test_an_8_mb_single_game_needs_at_most_ten_times_its_size(
    tmp_path: Path, baseline_rss: int, shape: object
) -> None:
    assert callable(shape)
    outcome = check_huge(tmp_path / f"{shape.__name__}.sgf", shape(8 * MIB), baseline_rss)
    assert "GK004" in outcome.stdout


@pytest.mark.slow
def test_a_100_mb_single_line(tmp_path: Path, baseline_rss: int) -> None:
    outcome = check_huge(tmp_path / "comment.sgf", comment(100 * MIB), baseline_rss)
    assert outcome.returncode == 0
