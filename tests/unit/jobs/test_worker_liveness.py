"""The liveness decision of ``gomoku-archive worker --check``: the freshest turn of a worker's
job loop on this machine; Redis being away is said, never failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.jobs.liveness import LoopBeat, loop_liveness

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
LIMIT = timedelta(seconds=60)


def beat(worker: str, seconds_ago: float, *, redis_down_for: float | None = None) -> LoopBeat:
    down = None if redis_down_for is None else NOW - timedelta(seconds=redis_down_for)
    return LoopBeat(
        worker=worker,
        loop_at=NOW - timedelta(seconds=seconds_ago),
        redis_down_since=down,
        redis_error=None if down is None else "ConnectionError: Connection refused",
    )


@pytest.mark.parametrize(
    ("beats", "alive", "says"),
    [
        ([beat("pod-a:1", 5)], True, "worker pod-a:1 alive, its loop turned 5 s ago"),
        ([beat("pod-a:1", 60)], True, "turned 60 s ago"),
        ([beat("pod-a:1", 61)], False, "worker pod-a:1's loop last turned 61 s ago (limit 60 s)"),
        ([], False, "no worker loop heartbeat in /tmp/x (no worker runs here)"),
        # A restarted process: the newest beat decides.
        ([beat("pod-a:1", 300), beat("pod-a:7", 2)], True, "worker pod-a:7 alive"),
        # A beat from the future (the clock stepped back) is fresh, not negative.
        ([beat("pod-a:1", -3)], True, "turned 0 s ago"),
        # Redis away for longer than the probe's window: alive all the same, and said.
        (
            [beat("pod-a:1", 1, redis_down_for=600)],
            True,
            "alive, its loop turned 1 s ago; Redis has not answered for 600 s "
            "(ConnectionError: Connection refused): jobs wait for it",
        ),
    ],
)
def test_liveness_table(beats: list[LoopBeat], alive: bool, says: str) -> None:
    verdict = loop_liveness(beats, now=NOW, max_age=LIMIT, where="/tmp/x")
    assert verdict.alive is alive
    assert says in verdict.message
    assert "\n" not in verdict.message


@pytest.mark.parametrize(
    "recorded", [beat("pod-a:1", 2), beat("pod-a:1", 2, redis_down_for=30)], ids=["up", "down"]
)
def test_a_beat_reads_back_as_written(recorded: LoopBeat) -> None:
    assert LoopBeat.from_json(recorded.to_json()) == recorded


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"worker": "a"}', '{"worker": "a", "loop_at": "yesterday"}', "null"]
)
def test_what_is_no_beat_is_passed_over(text: str) -> None:
    assert LoopBeat.from_json(text) is None
