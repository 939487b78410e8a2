"""The worker pool (issue 37): how close the pool's hand-out of ranges comes to the ideal, with
real worker processes throughout.

**The real pool.** One seeded month (``seed_month``) exported by 1 and by 2 ``gomoku-archive
worker`` processes with ranges of K, and by 1 and by ``many`` processes with ranges of a
smaller K (many ranges), interleaved, each run a forced rebuild queued through arq and timed by
its own ``export_job`` line. The machine's busy cores are read from ``/proc/stat`` over each
run: one worker and its database backends keep ``b`` of the ``n`` cores busy, so the cores
allow ``n / b`` times one worker's speed; the 2-worker speed-up is compared with that, and the
``many``-worker time with the cores' ideal, one worker's time times ``b / n``.

**The simulated pool.** 16, 32 and 64 worker processes do not fit on this machine's 2 cores
as exporters, so each range's work is replaced by a calibrated stand-in: the worker runs through
``tests.integration.range_hook`` (``RANGE_HOOK_SECONDS_PER_PLANNED``; nothing of it is in the
service), so each claimed range first waits the measured cost of a range of K real candidates
(its planned candidates times the cost per candidate of the real 1-worker runs), beating its
heartbeat, then does its real work on its few rows. Everything else is the service's: the
coordinator, arq, the range slots' claims and notifications, the consistency check, the
assembly. On a PostgreSQL cluster of the run's own (``private_postgres``: the machine's server
allows 100 connections) and a Redis of its own. For each pool size, a build without kills,
then one where 10 % of the workers (never the coordinator's) are SIGKILLed inside a range once
half the ranges are done. From the workers' log lines: the makespan (the ``export_job``'s
seconds) against the ideal (the stand-ins' total over the workers, plus the serial parts the
coordinator logged: the plan's count, the consistency check, the assembly), each worker's idle
time, the queue latency (claimed minus claimable, from the table's clock), the hand-out gaps
(a worker's finish to its next claim), claims beyond one per range, the killed workers' ranges'
takeover, and the coordinator's own CPU (its process's, less the median of the other workers').
With kills the ideal is a pool that loses the same workers at the same instant and wastes
nothing. ``pool-details.json`` keeps what the projection section uses."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from gomoku_archive.db.migrate import migrate
from gomoku_archive.db.range_store import STALE_SECONDS
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.profile.months import Month
from tests.integration.conftest import private_redis

from .data import seed_month
from .figures import Figure, Size, bounded, compared
from .private_postgres import private_cluster
from .support import ROOT, scratch_database
from .worker_runs import HOOK, CpuTimes, Worker, WorkerPool, cores_busy, instant, wait_for

SECTION = "pool"
MONTH = Month(2026, 8)
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    k: int
    k_small: int
    many: int
    rounds: int
    sim_workers: tuple[int, ...]
    sim_ranges: int
    range_seconds: float | None
    """A simulated range's cost; None: calibrated from the real runs' ranges of K."""


PLANS = {
    Size.SMOKE: Plan(
        games=2_000,
        k=500,
        k_small=250,
        many=3,
        rounds=1,
        sim_workers=(4,),
        sim_ranges=24,
        range_seconds=0.2,
    ),
    Size.FULL: Plan(
        games=1_000_000,
        k=RANGE_CANDIDATES,
        k_small=10_000,
        many=8,
        rounds=2,
        sim_workers=(16, 32, 64),
        sim_ranges=2_000,
        range_seconds=None,
    ),
}
SPEEDUP_SHARE_AT_LEAST = 0.9
"""Of what the idle cores allow, reached by 2 workers."""
MANY_OVER_IDEAL_AT_MOST = 1.15
EFFICIENCY_AT_LEAST = 0.9
KILLED_SHARE = 0.1
FIRST_WAVE_WAIT_AT_MOST = 1.0
"""Seconds: the p99 wait of a plan's first wave, claimed by workers that were idle."""
HANDOUT_GAP_AT_MOST = 1.0
"""Seconds: the p99 gap between a worker's finish and its next claim while ranges waited."""
TAKEOVER_MARGIN = 5.0
COORDINATOR_SHARE_AT_MOST = 0.05
"""Of one core, over its build."""
MAX_CONNECTIONS = 600
"""64 workers hold about 4 connections each (claims and parts, source reads, LISTEN, the
watchdog's), the coordinator up to 4 more for the month's reads."""


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    real, seconds_per_candidate = _real_pool(plan, workdir)
    range_seconds = plan.range_seconds or RANGE_CANDIDATES * seconds_per_candidate
    sims = _simulated_pool(plan, workdir, range_seconds)
    figures = _real_figures(plan, real)
    for sim in sims:
        figures += _sim_figures(sim)
    details = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "range_seconds": round(range_seconds, 4),
        "real": [asdict(r) for r in real],
        "simulated": [asdict(s) for s in sims],
    }
    target = HERE if size is Size.FULL else workdir
    (target / "pool-details.json").write_text(json.dumps(details, indent=2) + "\n")
    return figures


# --- the real pool ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RealRun:
    workers: int
    k: int
    seconds: float
    cores_busy: float
    ranges: int
    sha256: str
    candidates_per_second: list[float]


def _env(dsn: str, redis_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "EXPORT_", "RANGE_"))}
    return env | {
        "DATABASE_URL": dsn,
        "REDIS_URL": redis_url,
        "EXPORT_FIRST_MONTH": str(MONTH),
        "EXPORT_PROCESSES": "1",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }


def _publish_months(dsn: str) -> None:
    """The month and the ones after it published by the command: the workers' planner then has
    nothing to queue, and each run times its rebuild alone."""
    subprocess.run(
        [sys.executable, "-m", "gomoku_archive", "export", "--missing"],
        cwd=ROOT,
        env=_env(dsn, "redis://127.0.0.1:1"),
        capture_output=True,
        check=True,
    )


def _real_pool(plan: Plan, workdir: Path) -> tuple[list[RealRun], float]:
    """The real runs, and the seconds a candidate costs in a range of K on one worker (the
    median range of the 1-worker runs)."""
    runs: list[RealRun] = []
    with scratch_database(SECTION) as dsn, private_redis() as redis_url:
        asyncio.run(seed_month(dsn, MONTH, plan.games))
        _publish_months(dsn)
        for round_ in range(plan.rounds):
            for workers, k in (
                (1, plan.k),
                (2, plan.k),
                (1, plan.k_small),
                (plan.many, plan.k_small),
            ):
                tag = f"real-{round_}-{workers}-{k}"
                runs.append(_real_run(dsn, redis_url, workdir, workers, k, tag))
    rates = [
        r for run in runs if run.workers == 1 and run.k == plan.k for r in run.candidates_per_second
    ]
    return runs, 1 / statistics.median(rates)


def _real_run(dsn: str, redis_url: str, workdir: Path, workers: int, k: int, tag: str) -> RealRun:
    with WorkerPool(_env(dsn, redis_url), workdir, workers, tag) as pool:
        pool.wait_started()
        before = CpuTimes.now()
        job_id = pool.rebuild(redis_url, MONTH, k)
        outcome = pool.wait_job(job_id)
        after = CpuTimes.now()
        planned = next(e for _, e in pool.events("export_planned") if e.get("job_id") == job_id)
        ranges = [
            e
            for _, e in pool.events("export_range")
            if e["archive_id"] == planned["archive_id"] and e["outcome"] == "done"
        ]
    return RealRun(
        workers=workers,
        k=k,
        seconds=float(outcome["duration_s"]),
        cores_busy=cores_busy(before, after),
        ranges=int(planned["ranges"]),
        sha256=str(outcome["sha256"]),
        candidates_per_second=[float(e["candidates"]) / float(e["seconds"]) for e in ranges],
    )


def _best(runs: list[RealRun], workers: int, k: int) -> RealRun:
    return min((r for r in runs if r.workers == workers and r.k == k), key=lambda r: r.seconds)


def _real_figures(plan: Plan, runs: list[RealRun]) -> list[Figure]:
    cores = os.cpu_count() or 1
    one, two = _best(runs, 1, plan.k), _best(runs, 2, plan.k)
    allowed = cores / one.cores_busy
    small, many = _best(runs, 1, plan.k_small), _best(runs, plan.many, plan.k_small)
    ideal = small.seconds * small.cores_busy / cores

    def listed(workers: int, k: int) -> str:
        return ", ".join(
            f"{r.seconds:.1f} s ({r.cores_busy:.2f} cores)"
            for r in runs
            if r.workers == workers and r.k == k
        )

    return [
        compared(
            SECTION,
            f"2 worker processes' speed-up over 1, {one.ranges} ranges of K = {plan.k:,}",
            "x",
            one.seconds / two.seconds,
            allowed,
            f"what the idle cores allow: {cores} / {one.cores_busy:.2f} cores busy with 1",
            at_least=SPEEDUP_SHARE_AT_LEAST,
            note=f"1 worker: {listed(1, plan.k)}; 2 workers: {listed(2, plan.k)}",
        ),
        Figure(
            SECTION,
            f"{plan.many} worker processes, {many.ranges} ranges of K = {plan.k_small:,}",
            "s",
            many.seconds,
            ideal,
            f"the cores' ideal: 1 worker's {small.seconds:.1f} s x {small.cores_busy:.2f} / "
            f"{cores} cores",
            "<=",
            MANY_OVER_IDEAL_AT_MOST,
            note=f"1 worker: {listed(1, plan.k_small)}; {plan.many} workers: "
            f"{listed(plan.many, plan.k_small)}",
        ),
        bounded(
            SECTION,
            "SHA-256s of the month from 1, 2 and more workers at each K",
            "distinct per K",
            float(max(len({r.sha256 for r in runs if r.k == k}) for k in {r.k for r in runs})),
            at_most=1.0,
        ),
    ]


# --- the simulated pool ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimRun:
    workers: int
    killed: int
    ranges: int
    range_seconds: float
    makespan: float
    ideal: float
    serial: float
    range_phase: float
    handout_efficiency: float
    """The ranges' cost over the workers (the capacity left, with kills) against the range
    phase's wall time: the pool's own loss."""
    idle_mean: float
    idle_max: float
    wait_p50: float
    wait_p99: float
    first_wave_wait_p99: float
    gap_p50: float
    gap_p99: float
    extra_claims: int
    takeovers: list[float]
    """Seconds from each kill to its range's new claim."""
    coordinator_cpu: float
    start_latency: float
    """From the plan's log line to the first claim."""
    end_latency: float
    """From the last range's end to the consistency check's start."""
    cores_busy: float
    """The machine's busy cores over the build (``/proc/stat``): the stand-ins' own work, the
    database's, the pool's idle loops, and anything else the machine ran."""
    worker_cpu_per_range: float
    """The worker processes' CPU seconds over the build, per range (not the database's)."""

    @property
    def efficiency(self) -> float:
        return self.ideal / self.makespan


def _simulated_pool(plan: Plan, workdir: Path, range_seconds: float) -> list[SimRun]:
    sims: list[SimRun] = []
    with private_cluster(max_connections=MAX_CONNECTIONS) as admin, private_redis() as redis_url:
        dsn = asyncio.run(_database(admin))
        candidates = asyncio.run(seed_month(dsn, MONTH, plan.sim_ranges * 50))
        _publish_months(dsn)
        k = max(candidates // plan.sim_ranges, 1)
        env = _env(dsn, redis_url) | {"RANGE_HOOK_SECONDS_PER_PLANNED": str(range_seconds / k)}
        for workers in plan.sim_workers:
            with WorkerPool(env, workdir, workers, f"sim-{workers}", module=HOOK) as pool:
                pool.wait_started()
                for killed in (0, max(1, round(KILLED_SHARE * workers))):
                    sims.append(_sim_run(pool, dsn, redis_url, k, range_seconds, killed))
    return sims


async def _database(admin: str) -> str:
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute("CREATE DATABASE pool")
    finally:
        await conn.close()
    dsn = admin.rsplit("/", 1)[0] + "/pool"
    conn = await asyncpg.connect(dsn)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return dsn


def _sim_run(
    pool: WorkerPool, dsn: str, redis_url: str, k: int, range_seconds: float, killed: int
) -> SimRun:
    alive = [w for w in pool.workers if w.process.poll() is None]
    cpu_before = {w.name: w.cpu() for w in alive}
    machine_before = CpuTimes.now()
    job_id = pool.rebuild(redis_url, MONTH, k)
    planned = wait_for(lambda: _planned(pool, job_id), "the plan", seconds=600, poll=0.05)
    victims: list[Worker] = []
    if killed:
        coordinator = pool.coordinator(job_id)
        wait_for(
            lambda: _done(pool, planned["archive_id"]) >= planned["ranges"] // 2,
            "half the ranges",
            seconds=7200,
            poll=0.1,
        )
        holding = asyncio.run(_holders(dsn, planned["archive_id"]))
        victims = [w for w in alive if w is not coordinator and w.name in holding][:killed]
        for worker in victims:
            worker.kill()
    outcome = pool.wait_job(job_id)
    busy = cores_busy(machine_before, CpuTimes.now())
    cpu = {w.name: w.cpu() - cpu_before[w.name] for w in alive if w not in victims}
    return _analyse(pool, job_id, planned, outcome, range_seconds, k, victims, cpu, busy)


def _planned(pool: WorkerPool, job_id: str) -> dict[str, Any] | None:
    return next((e for _, e in pool.events("export_planned") if e.get("job_id") == job_id), None)


def _done(pool: WorkerPool, archive_id: int) -> int:
    return sum(
        e["archive_id"] == archive_id and e["outcome"] == "done"
        for _, e in pool.events("export_range")
    )


async def _holders(dsn: str, archive_id: int) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT worker FROM archive_ranges WHERE archive_id = $1 AND state = 'running'",
            archive_id,
        )
    finally:
        await conn.close()
    return {r["worker"] for r in rows}


@dataclass(frozen=True, slots=True)
class _Claim:
    worker: str
    seq: int
    attempt: int
    start: float
    end: float
    waited: float
    planned: int


def _analyse(
    pool: WorkerPool,
    job_id: str,
    planned: dict[str, Any],
    outcome: dict[str, Any],
    range_seconds: float,
    k: int,
    victims: list[Worker],
    cpu: dict[str, float],
    busy_cores: float,
) -> SimRun:
    archive_id = planned["archive_id"]
    # A claim's instant is the hook's line (the range's own line times its real work only).
    claimed = {
        (worker.name, int(e["range"]), int(e["attempt"])): instant(e)
        for worker, e in pool.events("range_hook_claimed")
        if e["archive_id"] == archive_id
    }
    claims = sorted(
        (
            _Claim(
                worker.name,
                int(e["range"]),
                int(e["attempt"]),
                claimed[(worker.name, int(e["range"]), int(e["attempt"]))],
                instant(e),
                float(e["waited_s"]),
                int(e["planned"]),
            )
            for worker, e in pool.events("export_range")
            if e["archive_id"] == archive_id and e["outcome"] == "done"
        ),
        key=lambda c: c.start,
    )
    alive = [w for w in pool.workers if w.process.poll() is None]
    workers = len(alive) + len(victims)
    cost = sum(c.planned for c in claims) * range_seconds / k
    first, last = claims[0].start, max(c.end for c in claims)
    phase = last - first
    if victims:
        # A pool that loses the same workers at the same instant and wastes nothing.
        lost = min(v.killed_at or first for v in victims) - first
        capacity_phase = lost + (cost - workers * lost) / (workers - len(victims))
    else:
        capacity_phase = cost / workers
    serial = _serial(pool, job_id)
    busy: dict[str, float] = {}
    for c in claims:
        busy[c.worker] = busy.get(c.worker, 0.0) + c.end - c.start
    idle = [phase - busy.get(w.name, 0.0) for w in alive]
    # While ranges waited for a worker: up to the last first claim (a takeover waits for
    # its range to go stale, not for a worker).
    last_claim = max(c.start for c in claims if c.attempt == 1)
    gaps = [
        b.start - a.end
        for w in alive
        for a, b in _pairs([c for c in claims if c.worker == w.name])
        if b.start <= last_claim
    ]
    waits = [c.waited for c in claims]
    killed_at = min((v.killed_at for v in victims if v.killed_at is not None), default=None)
    takeovers = [c.start - killed_at for c in claims if killed_at is not None and c.attempt > 1]
    coordinator = pool.coordinator(job_id).name
    others = [seconds for name, seconds in cpu.items() if name != coordinator]
    checked = [e for _, e in pool.events("export_consistency_checked") if e.get("job_id") == job_id]
    check_start = min(instant(e) - float(e["seconds"]) for e in checked)
    return SimRun(
        workers=workers,
        killed=len(victims),
        ranges=int(planned["ranges"]),
        range_seconds=range_seconds,
        makespan=float(outcome["duration_s"]),
        ideal=capacity_phase + serial,
        serial=serial,
        range_phase=phase,
        handout_efficiency=capacity_phase / phase,
        idle_mean=statistics.fmean(idle),
        idle_max=max(idle),
        wait_p50=_quantile(waits, 0.5),
        wait_p99=_quantile(waits, 0.99),
        first_wave_wait_p99=_quantile(waits[:workers], 0.99),
        gap_p50=_quantile(gaps, 0.5),
        gap_p99=_quantile(gaps, 0.99),
        extra_claims=sum(c.attempt > 1 for c in claims),
        takeovers=sorted(takeovers),
        coordinator_cpu=max(cpu[coordinator] - statistics.median(others), 0.0) if others else 0.0,
        start_latency=first - instant(planned),
        end_latency=check_start - last,
        cores_busy=busy_cores,
        worker_cpu_per_range=sum(cpu.values()) / len(claims),
    )


def _serial(pool: WorkerPool, job_id: str) -> float:
    """What the coordinator logged of the parts no worker shares: the plan's count, the
    consistency checks, the assembly."""
    names = ("export_planned", "export_consistency_checked", "export_assembled")
    return sum(
        float(e["seconds"])
        for name in names
        for _, e in pool.events(name)
        if e.get("job_id") == job_id
    )


def _pairs(claims: list[_Claim]) -> list[tuple[_Claim, _Claim]]:
    ordered = sorted(claims, key=lambda c: c.start)
    return list(itertools.pairwise(ordered))


def _quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile (0 when there is nothing)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(math.ceil(q * len(ordered)) - 1, 0))]


def _sim_figures(sim: SimRun) -> list[Figure]:
    who = f"{sim.workers} simulated workers" + (
        f", {sim.killed} SIGKILLed mid-month" if sim.killed else ""
    )
    share = sim.coordinator_cpu / sim.makespan
    figures = [
        compared(
            SECTION,
            f"{who}: the ideal against the makespan ({sim.ranges:,} ranges of "
            f"{sim.range_seconds:.2f} s)",
            "s",
            sim.ideal,
            sim.makespan,
            "the build's makespan",
            at_least=EFFICIENCY_AT_LEAST,
            note=f"serial parts {sim.serial:.1f} s; the range phase {sim.range_phase:.1f} s "
            f"against {sim.range_phase * sim.handout_efficiency:.1f} s ideal; idle per worker "
            f"{sim.idle_mean:.2f} s mean, {sim.idle_max:.2f} s most; queue latency p50 "
            f"{sim.wait_p50:.2f} s, p99 {sim.wait_p99:.2f} s; claims beyond one per range "
            f"{sim.extra_claims}; the coordinator's CPU {sim.coordinator_cpu:.2f} s; first "
            f"claim {sim.start_latency:.2f} s after the plan, the check {sim.end_latency:.2f} s "
            f"after the last range; the machine's cores busy {sim.cores_busy:.2f}, the workers' "
            f"CPU {sim.worker_cpu_per_range * 1000:.0f} ms a range",
        ),
        bounded(
            SECTION,
            f"{who}: the first wave's queue latency, p99",
            "s",
            sim.first_wave_wait_p99,
            at_most=FIRST_WAVE_WAIT_AT_MOST,
        ),
        bounded(
            SECTION,
            f"{who}: a worker's finish to its next claim, p99 (p50 {sim.gap_p50 * 1000:.0f} ms)",
            "s",
            sim.gap_p99,
            at_most=HANDOUT_GAP_AT_MOST,
        ),
        bounded(
            SECTION,
            f"{who}: claims beyond one per range",
            "claims",
            float(sim.extra_claims),
            at_most=float(sim.killed),
        ),
        bounded(
            SECTION,
            f"{who}: the coordinator's own CPU, share of one core",
            "cores",
            share,
            at_most=COORDINATOR_SHARE_AT_MOST,
        ),
    ]
    if sim.killed:
        figures.append(
            bounded(
                SECTION,
                f"{who}: their ranges taken over, the slowest after its kill",
                "s",
                max(sim.takeovers, default=float("inf")),
                at_most=STALE_SECONDS + TAKEOVER_MARGIN,
            )
        )
    return figures
