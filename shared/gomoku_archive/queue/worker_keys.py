"""The keys of our own that the worker writes for operators (the planner's last run, which
worker runs which export, worker heartbeats), and the watchdog's release of a dead worker's job."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix

from gomoku_archive.jobs.queue_view import RunningInfo
from gomoku_archive.queue.connection import NOW_MS_LUA, eval_script

PLANNER_LAST_RUN_KEY = "gomoku:planner:last_run"
RUNNING_KEY_PREFIX = "gomoku:running:"
"""``gomoku:running:<job id>``: which worker runs an export, since when, until when at most,
and whether it is still counting: the run's proof of life, written before its first database
statement and refreshed every ``RUNNING_REFRESH_SECONDS`` while it runs; it expires
``RUNNING_TTL_SECONDS`` after its run stopped refreshing it (a killed worker)."""
RUNNING_REFRESH_SECONDS = 2.0
RUNNING_TTL_SECONDS = 10.0
WORKER_KEY_PREFIX = "gomoku:worker:"
"""``gomoku:worker:<host:pid>``: a worker's heartbeat, expiring a few beats after it stops."""


async def record_planner_run(client: ArqRedis, run: Mapping[str, Any]) -> None:
    await client.set(PLANNER_LAST_RUN_KEY, json.dumps(dict(run)))


def _running_document(info: RunningInfo) -> str:
    return json.dumps(
        {
            "job_id": info.job_id,
            "worker": info.worker,
            "started_at": info.started_at.isoformat(),
            "deadline": info.deadline.isoformat(),
            "candidates": info.candidates,
            "attempt": info.attempt,
            "phase": info.phase,
            "run": info.run,
        }
    )


async def mark_running(client: ArqRedis, info: RunningInfo) -> None:
    """A run's record as it starts: this run is the job's now (a run before it, released, finds
    it taken at its next refresh)."""
    await client.set(
        RUNNING_KEY_PREFIX + info.job_id,
        _running_document(info),
        px=int(RUNNING_TTL_SECONDS * 1000),
    )


_REFRESH = """
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current)['run'] ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
"""
"""Refresh a run's record unless another run of the job wrote its own since (atomic)."""


async def refresh_running(client: ArqRedis, info: RunningInfo) -> bool:
    """Keep the run's record alive (and say what it does now); False when another run of the
    same job has taken the record: this run was released and must stop."""
    refreshed = await eval_script(
        client,
        _REFRESH,
        [RUNNING_KEY_PREFIX + info.job_id],
        [_running_document(info), info.run, str(int(RUNNING_TTL_SECONDS * 1000))],
    )
    return bool(refreshed)


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
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""
)
"""Delete a run's in-progress key only if it is still the run that was seen stale and no run
keeps its running record alive: atomic in Redis, so of several watchdogs that saw the same
dead run exactly one releases it, none can delete the key of the worker that took the job
next, and a run that is alive (counting behind a table lock, say) is never released."""

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
    Only the run whose token is ``run_token`` is released, and only while no run refreshes the
    job's running record, atomically; False when another watchdog released it first, a worker
    has taken the job since, or its run is alive."""
    keys = [in_progress_key_prefix + job_id, RUNNING_KEY_PREFIX + job_id]
    released = await eval_script(
        client, _RELEASE, keys, [str(run_token), str(RUN_TOKEN_TOLERANCE_MS)]
    )
    return bool(released)
