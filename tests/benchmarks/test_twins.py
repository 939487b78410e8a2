"""The twins' benchmark times like with like: on a small month, each pair's fast side computes
exactly what its reference side computes (the same digest), so a speed-up is never the price of
a different answer."""

from __future__ import annotations

import pytest

from tests.benchmarks.twins import PAIRS, main, run


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_both_sides_compute_the_same(name: str) -> None:
    pair = PAIRS[name]
    _, _, fast = run(pair, "fast", 1, 40)
    _, _, reference = run(pair, "reference", 1, 40)
    assert fast == reference


def test_the_command_runs_a_side_and_lists_the_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["timestamps", "fast", "--rounds", "1", "--games", "40"]) == 0
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "timestamps fast: 1 rounds" in out
    assert all(name in out for name in PAIRS)
