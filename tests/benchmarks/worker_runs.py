"""Worker processes for the sections that run the pool: N ``gomoku-archive worker`` processes
(or the same command through ``tests.integration.range_hook``), their JSON log lines, a forced
rebuild queued through arq and waited for, SIGKILLs, each process's CPU time, and the
machine's busy cores from ``/proc/stat``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import QUEUE_NAME, queue_client

from .support import ROOT, cpu_seconds

T = TypeVar("T")
HOOK = "tests.integration.range_hook"
"""The command line with a range's stand-in (see that module)."""


def wait_for(check: Callable[[], T | None], what: str, *, seconds: float, poll: float = 0.1) -> T:
    """``check()`` once it is truthy."""
    deadline = time.monotonic() + seconds
    while not (value := check()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what} after {seconds:.0f} s")
        time.sleep(poll)
    return value


def instant(event: dict[str, Any]) -> float:
    """A log line's timestamp, as seconds since the epoch."""
    return datetime.fromisoformat(str(event["timestamp"])).timestamp()


class Worker:
    """One worker process and its log file."""

    def __init__(self, env: dict[str, str], log: Path, module: str) -> None:
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", module, "worker"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.name = f"{socket.gethostname()}:{self.process.pid}"
        self.killed_at: float | None = None
        self._read = 0
        self._seen: list[dict[str, Any]] = []

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The log's JSON lines so far (read once each: a pool of 64 is polled often)."""
        with self.log.open("rb") as log:
            log.seek(self._read)
            data = log.read()
        complete, newline, _ = data.rpartition(b"\n")  # a line being written waits
        self._read += len(complete) + len(newline)
        for line in complete.decode(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if isinstance(event, dict):
                    self._seen.append(event)
        return [e for e in self._seen if name is None or e.get("event") == name]

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid) or 0.0

    def kill(self) -> None:
        self.killed_at = time.time()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)


@dataclass
class WorkerPool:
    """``count`` worker processes, started at once, stopped (SIGTERM, then SIGKILL) on exit."""

    env: dict[str, str]
    workdir: Path
    count: int
    tag: str
    module: str = "gomoku_archive"

    def __post_init__(self) -> None:
        self.workers: list[Worker] = []

    def __enter__(self) -> WorkerPool:
        for n in range(self.count):
            log = self.workdir / f"{self.tag}-{n}.log"
            self.workers.append(Worker(self.env, log, self.module))
        return self

    def __exit__(self, *exc: object) -> None:
        alive = [w for w in self.workers if w.process.poll() is None]
        for worker in alive:
            worker.process.send_signal(signal.SIGTERM)
        for worker in alive:
            try:
                worker.process.wait(60)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait(10)

    def wait_started(self, *, seconds: float = 600) -> None:
        """Every worker up, and the planner's start-up run done (with nothing to queue)."""
        wait_for(
            lambda: all(w.events("worker_started") for w in self.workers),
            f"{self.count} workers",
            seconds=seconds,
            poll=0.5,
        )
        wait_for(
            lambda: any(w.events("plan_months_finished") for w in self.workers),
            "the planner",
            seconds=seconds,
        )

    def events(self, name: str | None = None) -> Iterator[tuple[Worker, dict[str, Any]]]:
        for worker in self.workers:
            for event in worker.events(name):
                yield worker, event

    def rebuild(self, redis_url: str, month: Month, k: int) -> str:
        """Queue a forced rebuild of ``month`` with ranges of ``k``; its job id."""
        job_id = f"bench:{month}:{self.tag}:{time.monotonic_ns()}"
        asyncio.run(_enqueue(redis_url, job_id, month, k))
        return job_id

    def job_end(self, job_id: str) -> dict[str, Any] | None:
        for _, event in self.events("export_job"):
            if event["job_id"] == job_id and event["outcome"] != "retry":
                return event
        return None

    def wait_job(self, job_id: str, *, seconds: float = 7200) -> dict[str, Any]:
        outcome = wait_for(lambda: self.job_end(job_id), "the rebuild", seconds=seconds, poll=0.05)
        if outcome["outcome"] not in ("published", "unchanged", "restored"):
            raise RuntimeError(f"the rebuild ended {outcome}")
        return outcome

    def coordinator(self, job_id: str) -> Worker:
        return next(w for w, e in self.events("export_planned") if e.get("job_id") == job_id)


async def _enqueue(redis_url: str, job_id: str, month: Month, k: int) -> None:
    async with queue_client(redis_url) as client:
        job = await client.enqueue_job(
            "export_month",
            _job_id=job_id,
            _queue_name=QUEUE_NAME,
            month=str(month),
            force=True,
            range_candidates=k,
        )
        if job is None:
            raise RuntimeError(f"{job_id} was not queued")


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """The first line of ``/proc/stat``: the machine's jiffies busy and in all."""

    busy: int
    total: int

    @classmethod
    def now(cls) -> CpuTimes:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
        busy = user + nice + system + irq + softirq + steal
        return cls(busy, busy + idle + iowait)


def cores_busy(before: CpuTimes, after: CpuTimes) -> float:
    """How many of the machine's cores were busy on average between two readings."""
    total = after.total - before.total
    return (os.cpu_count() or 1) * (after.busy - before.busy) / total if total else 0.0
