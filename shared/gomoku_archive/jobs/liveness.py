"""Is this machine's worker running its job loop? The decision behind ``gomoku-archive worker
--check``, the worker's liveness probe.

Every worker process writes a heartbeat file at each turn of its job loop (``worker.loop_beat``:
arq's poll loop turns twice a second; the file is rewritten every few seconds), whether Redis
answered that turn or not: during a Redis outage the loop goes on and asks again, and exports
that need no Redis keep running. The check reads the files of this machine (of this container:
its temporary directory), so "a fresh file" is "this pod's worker loop runs", which is what a
restart could change. Redis being away is said, not failed: a restart would not bring it back,
and would cancel every export under way; ``/ops/`` and the ``NoLiveWorker`` alert watch Redis.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

DEFAULT_MAX_AGE = timedelta(seconds=60)
"""Well above the file's rewrite interval (2 s) and a turn of the loop held by a Redis command
that times out (5 s, ``queue.connection.WORKER_COMMAND_SECONDS``)."""


@dataclass(frozen=True, slots=True)
class LoopBeat:
    """One worker process's last turn of its job loop, as its heartbeat file records it."""

    worker: str
    """``host:pid``."""
    loop_at: datetime
    redis_down_since: datetime | None = None
    """When Redis stopped answering the loop (None: it answered the last turn)."""
    redis_error: str | None = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "worker": self.worker,
                "loop_at": self.loop_at.isoformat(),
                "redis_down_since": (
                    None if self.redis_down_since is None else self.redis_down_since.isoformat()
                ),
                "redis_error": self.redis_error,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> LoopBeat | None:
        """The beat a file holds, or None when it holds none (half written by another tool,
        or not ours)."""
        try:
            data = json.loads(text)
            down = data.get("redis_down_since")
            return cls(
                worker=str(data["worker"]),
                loop_at=datetime.fromisoformat(data["loop_at"]),
                redis_down_since=None if down is None else datetime.fromisoformat(down),
                redis_error=data.get("redis_error"),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True, slots=True)
class Liveness:
    alive: bool
    message: str
    """One line for a person (or a probe's event): which worker, how long ago, or what is wrong."""


def loop_liveness(
    beats: Iterable[LoopBeat], *, now: datetime, max_age: timedelta = DEFAULT_MAX_AGE, where: str
) -> Liveness:
    """Alive when a worker's loop turned within ``max_age`` of ``now`` (a beat from the future,
    a clock step, counts as fresh); ``where`` names the files' folder for the message."""
    seen = list(beats)
    if not seen:
        return Liveness(False, f"no worker loop heartbeat in {where} (no worker runs here)")
    newest = max(seen, key=lambda beat: beat.loop_at)
    age = max((now - newest.loop_at).total_seconds(), 0.0)
    if age > max_age.total_seconds():
        return Liveness(
            False,
            f"worker {newest.worker}'s loop last turned {age:.0f} s ago "
            f"(limit {max_age.total_seconds():.0f} s): stuck",
        )
    message = f"worker {newest.worker} alive, its loop turned {age:.0f} s ago"
    if newest.redis_down_since is not None:
        down = max((now - newest.redis_down_since).total_seconds(), 0.0)
        message += (
            f"; Redis has not answered for {down:.0f} s ({newest.redis_error}): "
            "jobs wait for it, exports under way go on"
        )
    return Liveness(True, message)
