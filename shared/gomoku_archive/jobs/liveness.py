"""Is this machine's worker alive? The decision behind ``gomoku-archive worker --check``, the
worker's liveness probe.

Every worker process announces itself every few seconds under ``gomoku:worker:<host>:<pid>``
(``worker.watchdog``; the key expires a few beats after the last one). The check looks at the
heartbeats of *its own host* only: arq's ``<queue>:health-check`` key is one key shared by every
worker of the queue, so it stays fresh while any replica lives and cannot tell which pod is stuck.
A pod's hostname is its name, so "a fresh heartbeat from this host" is "this pod's worker runs".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from gomoku_archive.jobs.queue_view import WorkerSeen

DEFAULT_MAX_AGE = timedelta(seconds=60)
"""Well above the watchdog's beat (10 s by default) and its key's lifetime (3 beats + 5 s)."""


@dataclass(frozen=True, slots=True)
class Liveness:
    alive: bool
    message: str
    """One line for a person (or a probe's event): which worker, how long ago, or what is wrong."""


def host_of(worker: str) -> str:
    """``"pod-7:1"`` → ``"pod-7"`` (the worker names are ``<host>:<pid>``)."""
    return worker.rpartition(":")[0]


def worker_liveness(
    heartbeats: Iterable[WorkerSeen],
    *,
    host: str,
    now: datetime,
    max_age: timedelta = DEFAULT_MAX_AGE,
) -> Liveness:
    """Alive when a worker on ``host`` reported within ``max_age`` of ``now``; a beat from the
    future (a clock step) counts as fresh."""
    seen = list(heartbeats)
    mine = [h for h in seen if host_of(h.worker) == host]
    if not mine:
        others = len(seen)
        return Liveness(
            False,
            f"no heartbeat from a worker on {host} (missing or expired; "
            f"{others} worker{'s' if others != 1 else ''} on other hosts)",
        )
    newest = max(mine, key=lambda h: h.last_seen)
    age = max((now - newest.last_seen).total_seconds(), 0.0)
    if age > max_age.total_seconds():
        return Liveness(
            False,
            f"worker {newest.worker} last reported {age:.0f} s ago "
            f"(limit {max_age.total_seconds():.0f} s): stuck",
        )
    return Liveness(True, f"worker {newest.worker} alive, reported {age:.0f} s ago")
