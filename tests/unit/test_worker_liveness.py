"""The liveness decision of ``gomoku-archive worker --check``: this host's freshest heartbeat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.jobs.liveness import host_of, worker_liveness
from gomoku_archive.jobs.queue_view import WorkerSeen

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
LIMIT = timedelta(seconds=60)


def beat(worker: str, seconds_ago: float) -> WorkerSeen:
    return WorkerSeen(
        worker=worker,
        started_at=NOW - timedelta(hours=1),
        last_seen=NOW - timedelta(seconds=seconds_ago),
    )


@pytest.mark.parametrize(
    ("heartbeats", "alive", "says"),
    [
        ([beat("pod-a:1", 5)], True, "worker pod-a:1 alive, reported 5 s ago"),
        ([beat("pod-a:1", 60)], True, "reported 60 s ago"),
        ([beat("pod-a:1", 61)], False, "worker pod-a:1 last reported 61 s ago (limit 60 s): stuck"),
        ([], False, "no heartbeat from a worker on pod-a (missing or expired; 0 workers"),
        # Another replica's fresh beat does not make this pod alive: that is the point.
        (
            [beat("pod-b:1", 1)],
            False,
            "no heartbeat from a worker on pod-a (missing or expired; 1 worker on",
        ),
        # A host whose name is a prefix of ours is another host.
        ([beat("pod-a-2:1", 1)], False, "no heartbeat from a worker on pod-a"),
        # A restarted process on the same host: the newest beat decides.
        ([beat("pod-a:1", 300), beat("pod-a:7", 2)], True, "worker pod-a:7 alive"),
        # A beat from the future (the clock stepped back) is fresh, not negative.
        ([beat("pod-a:1", -3)], True, "reported 0 s ago"),
    ],
)
def test_liveness_table(heartbeats: list[WorkerSeen], alive: bool, says: str) -> None:
    verdict = worker_liveness(heartbeats, host="pod-a", now=NOW, max_age=LIMIT)
    assert verdict.alive is alive
    assert says in verdict.message
    assert "\n" not in verdict.message


@pytest.mark.parametrize(
    ("worker", "host"),
    [("pod-a:1", "pod-a"), ("10.0.0.7:42", "10.0.0.7"), ("a:b:3", "a:b"), ("nohost", "")],
)
def test_host_of(worker: str, host: str) -> None:
    assert host_of(worker) == host
