"""The keys of our own that the worker writes for operators (the planner's last run, which
worker runs which export, worker heartbeats), and the watchdog's release of a dead worker's job."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix

from gomoku_archive.jobs.queue_view import RunningInfo
from gomoku_archive.queue.connection import NOW_MS_LUA, eval_script

PLANNER_LAST_RUN_KEY = "gomoku:planner:last_run"
RUNNING_KEY_PREFIX = "gomoku:running:"
"""``gomoku:running:<job id>``: which worker runs an export, since when, until when at most."""
WORKER_KEY_PREFIX = "gomoku:worker:"
"""``gomoku:worker:<host:pid>``: a worker's heartbeat, expiring a few beats after it stops."""


async def record_planner_run(client: ArqRedis, run: Mapping[str, Any]) -> None:
    await client.set(PLANNER_LAST_RUN_KEY, json.dumps(dict(run)))


async def mark_running(client: ArqRedis, info: RunningInfo) -> None:
    ttl = max(info.deadline - info.started_at, timedelta(seconds=1)) + timedelta(minutes=1)
    document = {
        "job_id": info.job_id,
        "worker": info.worker,
        "started_at": info.started_at.isoformat(),
        "deadline": info.deadline.isoformat(),
        "candidates": info.candidates,
        "attempt": info.attempt,
    }
    await client.set(RUNNING_KEY_PREFIX + info.job_id, json.dumps(document), px=ttl)


async def clear_running(client: ArqRedis, job_id: str) -> None:
    await client.delete(RUNNING_KEY_PREFIX + job_id)


async def announce_worker(
    client: ArqRedis, worker: str, *, started_at: datetime, ttl: float
) -> None:
    document = {
        "worker": worker,
        "started_at": started_at.isoformat(),
        "last_seen": datetime.now(UTC).isoformat(),
    }
    await client.set(WORKER_KEY_PREFIX + worker, json.dumps(document), px=int(ttl * 1000))


async def live_workers(client: ArqRedis) -> set[str]:
    """The workers whose heartbeat has not expired (``announce_worker``'s names)."""
    return {
        key.decode()[len(WORKER_KEY_PREFIX) :]
        async for key in client.scan_iter(match=WORKER_KEY_PREFIX + "*", count=500)
    }


async def retire_worker(client: ArqRedis, worker: str) -> None:
    await client.delete(WORKER_KEY_PREFIX + worker)


_RUN_TOKENS = (
    NOW_MS_LUA
    + """
local out = {}
for i, key in ipairs(KEYS) do
  local pttl = redis.call('PTTL', key)
  if pttl >= 0 then out[i] = now + pttl else out[i] = -1 end
end
return out
"""
)
"""Each in-progress key's expiry instant in Redis' own milliseconds: one value for as long as
that run's key lives, and a later one when a worker takes the job again (arq sets the key with
its full timeout at every start). Redis 6.2 has no PEXPIRETIME, hence TIME + PTTL."""

_RELEASE = (
    NOW_MS_LUA
    + """
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then return 0 end
if math.abs(now + pttl - tonumber(ARGV[1])) > tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"""
)
"""Delete a run's in-progress key only if it is still the run that was seen stale: atomic in
Redis, so of several watchdogs that saw the same dead run exactly one releases it, and none
can delete the key of the worker that took the job next."""

RUN_TOKEN_TOLERANCE_MS = 100
"""Two readings of one run's token differ by a millisecond or two (TIME and PTTL rounding); a
new run's token is later by at least the time the old one was watched (seconds)."""


async def running_exports(client: ArqRedis) -> dict[str, int]:
    """Export jobs a worker has marked in progress (arq's in-progress keys), each with the
    token of its current run (see ``_RUN_TOKENS``)."""
    keys = [key async for key in client.scan_iter(match=in_progress_key_prefix + "export:*")]
    if not keys:
        return {}
    tokens = await eval_script(client, _RUN_TOKENS, keys, [])
    return {
        key.decode()[len(in_progress_key_prefix) :]: int(token)
        for key, token in zip(keys, tokens, strict=True)
        if int(token) >= 0
    }


async def release_stale_job(client: ArqRedis, job_id: str, run_token: int) -> bool:
    """Free a job whose worker died (its in-progress key would otherwise block it until arq's
    in-progress timeout, hours for an export): the job stays queued and any worker takes it.
    Only the run whose token is ``run_token`` is released, atomically; False when another
    watchdog released it first or a worker has taken the job since."""
    keys = [in_progress_key_prefix + job_id, RUNNING_KEY_PREFIX + job_id]
    released = await eval_script(
        client, _RELEASE, keys, [str(run_token), str(RUN_TOKEN_TOLERANCE_MS)]
    )
    return bool(released)
