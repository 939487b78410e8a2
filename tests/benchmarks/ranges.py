"""A month across the worker pool (issue 19): one seeded month exported by 1 and by 2
``gomoku-archive worker`` processes on this machine, interleaved (1, 2, 1, 2, ...), each run a
forced rebuild queued through arq and timed until its ``export_job`` line; the workers' peak
RSS; the longest transaction any session held on the games table (sampled from
``pg_stat_activity``) against the longest range; the per-range throughput and the assembly's
bytes per second, from the workers' own log lines, for the projection in RESULTS.md; and the
multi-range file through gzip -t, zcat | wc -l, ``gomoku-archive verify`` and sgfmill.

K's choice: the same month exported by the command in one process with several K (and as one
range), to show what a range costs in time and in bytes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from sgfmill import sgf

from gomoku_archive.db import source
from gomoku_archive.db.pool import create_pool
from gomoku_archive.export import month_reads
from gomoku_archive.export.month_reads import READ_CONNECTIONS
from gomoku_archive.export.ranges import RANGE_CANDIDATES, plan_ranges
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import QUEUE_NAME, queue_client
from tests.integration.conftest import private_redis

from .data import seed_month
from .figures import Figure, Size, bounded
from .support import CLOCK_TICK, ROOT, cpu_seconds, scratch_database, stored_archive

SECTION = "ranges"
MONTH = Month(2026, 8)
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    k: int
    rounds: int
    k_choices: tuple[int, ...]


PLANS = {
    Size.SMOKE: Plan(games=2_000, k=500, rounds=1, k_choices=(500,)),
    Size.FULL: Plan(games=1_000_000, k=RANGE_CANDIDATES, rounds=2, k_choices=(25_000, 100_000)),
}
WALL_RATIO_AT_MOST = 0.6
PEAK_RSS_AT_MOST_MIB = 150.0
TRANSACTION_AT_MOST = 1.25
"""The longest source transaction against the longest range: a range's read is its transaction."""
READS_RATIO_AT_MOST = 0.75
"""The month's count and check on READ_CONNECTIONS connections against one, on a machine of 2
cores (0.5 is all two cores can give)."""
SINGLE_RANGE = 10**9
CHECK_COUNT_CPU_AT_MOST = 1.5
"""The check's statement with the plan's count against the fingerprints alone (issue 34): one
scan and one hash aggregate either way; a second statement for the count doubled it."""


@dataclass(slots=True)
class WorkerRun:
    workers: int
    seconds: float
    peak_mib: list[float]
    ranges: list[dict[str, Any]]
    assembled: dict[str, Any]
    planned: dict[str, Any]
    file: str
    sha256: str


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    figures: list[Figure] = []
    with scratch_database(SECTION) as dsn:
        candidates = asyncio.run(seed_month(dsn, MONTH, plan.games))
        choices = [_command_export(dsn, k) for k in (*plan.k_choices, plan.k, SINGLE_RANGE)]
        # The months after it, without games, published too: the workers' planner then has
        # nothing to queue, and the runs time the month's rebuild alone.
        subprocess.run(
            [sys.executable, "-m", "gomoku_archive", "export", "--missing"],
            cwd=ROOT,
            env=_env(dsn),
            capture_output=True,
            check=True,
        )
        with private_redis() as redis_url, _TransactionWatch(dsn) as watch:
            runs: dict[int, list[WorkerRun]] = {1: [], 2: []}
            for _ in range(plan.rounds):
                for workers in (1, 2):
                    runs[workers].append(_worker_run(dsn, redis_url, workdir, workers, plan.k))
        one = min(runs[1], key=lambda r: r.seconds)
        two = min(runs[2], key=lambda r: r.seconds)
        shas = {r.sha256 for rs in runs.values() for r in rs}
        shas.add(next(c["sha256"] for c in choices if c["k"] == plan.k))
        games = choices[0]["games"]
        figures.append(
            Figure(
                SECTION,
                f"a {candidates:,}-candidate month by 2 worker processes",
                "s",
                two.seconds,
                one.seconds,
                "the same by 1 worker process",
                "<=",
                WALL_RATIO_AT_MOST,
                note=f"{len(two.ranges)} ranges of K = {plan.k:,}; {games / two.seconds:,.0f} "
                f"games/s against {games / one.seconds:,.0f}; runs "
                + ", ".join(f"{r.seconds:.1f}" for r in runs[2])
                + " s against "
                + ", ".join(f"{r.seconds:.1f}" for r in runs[1])
                + " s",
            )
        )
        figures.append(
            bounded(
                SECTION,
                "SHA-256s of the month from 1 and 2 workers and the command",
                "distinct",
                float(len(shas)),
                at_most=1.0,
            )
        )
        peak = max(p for rs in runs.values() for r in rs for p in r.peak_mib)
        figures.append(
            bounded(
                SECTION,
                "worker peak RSS (largest process)",
                "MiB",
                peak,
                at_most=PEAK_RSS_AT_MOST_MIB,
            )
        )
        longest_range = max(
            float(done["seconds"]) for rs in runs.values() for r in rs for done in r.ranges
        )
        figures.append(
            Figure(
                SECTION,
                "longest transaction on the games table",
                "s",
                watch.longest,
                longest_range,
                "the longest range",
                "<=",
                TRANSACTION_AT_MOST,
                note=f"the whole export by one worker took {one.seconds:.1f} s",
            )
        )
        # The seeded copies lie in the heap in no order of their finish (the worst case: a slice
        # of the month touches most of the table's pages); a game server's table gets its rows
        # about in finish order. Both are measured; the projection takes the second.
        scattered = asyncio.run(month_reads_seconds(dsn, plan.k, rounds=plan.rounds + 1))
        asyncio.run(_in_finish_order(dsn))
        reads = asyncio.run(month_reads_seconds(dsn, plan.k, rounds=plan.rounds + 1))
        for layout, measured, at_most in (
            ("rows in finish order", reads, READS_RATIO_AT_MOST),
            ("rows scattered", scattered, 1.0),
        ):
            for name, what in (("count", "the plan's count"), ("check", "the consistency check")):
                figures.append(
                    Figure(
                        SECTION,
                        f"{what} of {candidates:,} candidates on {READ_CONNECTIONS} "
                        f"connections, {layout}",
                        "s",
                        measured[name][READ_CONNECTIONS],
                        measured[name][1],
                        "the same on 1 connection",
                        "<=",
                        at_most,
                        note="one snapshot either way; best of "
                        + f"{plan.rounds + 1} runs each in turn, this machine's "
                        + f"{os.cpu_count()} cores for PostgreSQL and all else",
                    )
                )
        with_count, alone = asyncio.run(check_count_cpu(dsn, plan.k, rounds=plan.rounds + 3))
        figures.append(
            Figure(
                SECTION,
                f"the consistency check's statement with the plan's count, {candidates:,} "
                "candidates, PostgreSQL backend CPU",
                "s",
                with_count,
                alone,
                "the fingerprints alone",
                "<=",
                CHECK_COUNT_CPU_AT_MOST,
                note=f"one connection, rows in finish order; best of {plan.rounds + 3} runs each"
                " in turn, the backend's utime + stime from /proc",
            )
        )
        failures = _readers(dsn, two.file, games, workdir)
        figures.append(
            bounded(
                SECTION, "multi-range file: reader checks failed", "checks", failures, at_most=0
            )
        )
        _write_details(workdir, plan, choices, one, two, candidates, reads, scattered)
    return figures


# --- K: the command in one process ---------------------------------------------------------


_COMMAND = (
    "import sys\n"
    "from gomoku_archive.export import ranges\n"
    "ranges.RANGE_CANDIDATES = int(sys.argv[1])\n"
    "from gomoku_archive.cli.main import main\n"
    "sys.exit(main(['export', '--month', sys.argv[2], '--force']))\n"
)


def _command_export(dsn: str, k: int) -> dict[str, Any]:
    """``gomoku-archive export`` in one process with ranges of ``k`` candidates."""
    env = _env(dsn) | {"EXPORT_PROCESSES": "1"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _COMMAND, str(k), str(MONTH)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.monotonic() - started
    # The summary on stdout, the log lines (JSON) on stderr.
    summary: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    planned = next(line for line in lines if line.get("event") == "export_planned")
    return summary | {"k": k, "seconds_wall": seconds, "ranges": planned["ranges"]}


# --- the worker pool -----------------------------------------------------------------------


def _env(dsn: str, redis_url: str = "redis://127.0.0.1:1") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "EXPORT_"))}
    return env | {
        "DATABASE_URL": dsn,
        "REDIS_URL": redis_url,
        "EXPORT_FIRST_MONTH": str(MONTH),
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }


def _worker_run(dsn: str, redis_url: str, workdir: Path, workers: int, k: int) -> WorkerRun:
    """Start ``workers`` worker processes (one process each: EXPORT_PROCESSES=1), queue a
    forced rebuild of the month with ranges of ``k``, and time it until its ``export_job``."""
    env = _env(dsn, redis_url) | {"EXPORT_PROCESSES": "1"}
    logs = [workdir / f"worker-{workers}-{n}-{time.monotonic_ns()}.log" for n in range(workers)]
    processes = []
    try:
        for log in logs:
            with log.open("wb") as out:
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "gomoku_archive", "worker"],
                        cwd=ROOT,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        _wait(lambda: all(_events(log, "worker_started") for log in logs), "the workers")
        # The planner's first run finds the month published (the command published it).
        _wait(lambda: any(_events(log, "plan_months_finished") for log in logs), "the planner")
        job_id = f"bench:{MONTH}:{time.monotonic_ns()}"
        started = time.monotonic()
        asyncio.run(_enqueue(redis_url, job_id, k))

        def finished() -> list[dict[str, Any]]:
            return [e for log in logs for e in _events(log, "export_job") if e["job_id"] == job_id]

        _wait(finished, "the rebuild", seconds=3600, poll=0.05)
        seconds = time.monotonic() - started
        (outcome,) = finished()
        assert outcome["outcome"] in ("unchanged", "published", "restored"), outcome
        peaks = [_peak_mib(p.pid) for p in processes]
        events = [e for log in logs for e in _events(log)]
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
    ours = [e for e in events if e.get("month") == str(MONTH)]
    ranges = [e for e in ours if e.get("event") == "export_range" and e["outcome"] == "done"]
    (assembled,) = [e for e in ours if e.get("event") == "export_assembled"]
    (planned,) = [e for e in ours if e.get("event") == "export_planned"]
    return WorkerRun(
        workers, seconds, peaks, ranges, assembled, planned, outcome["file"], outcome["sha256"]
    )


async def _enqueue(redis_url: str, job_id: str, k: int) -> None:
    async with queue_client(redis_url) as client:
        job = await client.enqueue_job(
            "export_month",
            _job_id=job_id,
            _queue_name=QUEUE_NAME,
            month=str(MONTH),
            force=True,
            range_candidates=k,
        )
        assert job is not None


def _events(log: Path, name: str | None = None) -> list[dict[str, Any]]:
    found = []
    for line in log.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict) and (name is None or event.get("event") == name):
                found.append(event)
    return found


def _wait(check: Any, what: str, *, seconds: float = 60, poll: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what} after {seconds} s")
        time.sleep(poll)


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


class _TransactionWatch:
    """The longest transaction any session held while reading the games table, sampled from
    ``pg_stat_activity`` every 50 ms in a thread."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._watch()), daemon=True)
        self.longest = 0.0

    def __enter__(self) -> _TransactionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    async def _watch(self) -> None:
        conn = await asyncpg.connect(self._dsn)
        try:
            while not self._stop.is_set():
                age = await conn.fetchval(
                    "SELECT extract(epoch FROM max(clock_timestamp() - xact_start)) "
                    "FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND query LIKE '%FROM \"games\"%'"
                )
                self.longest = max(self.longest, float(age or 0))
                await asyncio.sleep(0.05)
        finally:
            await conn.close()


# --- readers -------------------------------------------------------------------------------


def _readers(dsn: str, file_name: str, games: int, workdir: Path) -> float:
    """The file as stored, through gzip -t, zcat | wc -l, ``gomoku-archive verify`` and sgfmill
    on a sample; the number of checks that failed."""
    data = asyncio.run(stored_archive(dsn, file_name))
    path = workdir / file_name
    path.write_bytes(data)
    failed = 0
    failed += subprocess.run(["gzip", "-t", str(path)], check=False).returncode != 0
    zcat = subprocess.run(f"zcat {path} | wc -l", shell=True, capture_output=True, text=True)
    failed += int(zcat.stdout.strip() or -1) != games
    verify = subprocess.run(
        [sys.executable, "-m", "gomoku_archive", "verify", str(path)],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    failed += verify.returncode != 0
    lines = subprocess.run(["zcat", str(path)], capture_output=True, check=True).stdout.splitlines()
    for line in random.Random(5).sample(lines, min(200, len(lines))):
        try:
            sgf.Sgf_game.from_bytes(line)
        except ValueError:
            failed += 1
    return float(failed)


# --- the month's count and check on 1 and on READ_CONNECTIONS connections -------------------


@dataclass(frozen=True, slots=True)
class _Checked:
    first_second: datetime
    planned: int


async def month_reads_seconds(dsn: str, k: int, *, rounds: int) -> dict[str, dict[int, float]]:
    """The plan's count and the consistency check of the month (``export.month_reads``) on 1
    and on ``READ_CONNECTIONS`` connections, in turn, ``rounds`` times: the best seconds of
    each. Both must give the same figures."""
    pool = await create_pool(dsn, min_size=READ_CONNECTIONS, max_size=READ_CONNECTIONS)
    best: dict[str, dict[int, float]] = {"count": {}, "check": {}}
    try:
        async with pool.acquire() as conn:
            async with source.counting(conn):
                whole = await source.count_between(conn, "games", *source.month_bounds(MONTH))
            plan = plan_ranges(whole.publishable, *source.month_bounds(MONTH), target=k)
            ranges = [_Checked(r.start, r.candidates) for r in plan]
            seen: dict[str, set[object]] = {"count": set(), "check": set()}
            for _ in range(rounds):
                for n in (1, READ_CONNECTIONS):
                    started = time.perf_counter()
                    counted = await month_reads.count_month(
                        conn, pool, "games", MONTH, connections=n
                    )
                    _keep_best(best["count"], n, time.perf_counter() - started)
                    started = time.perf_counter()
                    checked = await month_reads.check_ranges(
                        conn, pool, "games", MONTH, ranges, connections=n
                    )
                    _keep_best(best["check"], n, time.perf_counter() - started)
                    seen["count"].add(
                        (counted.candidates, tuple(sorted(counted.publishable.items())))
                    )
                    seen["check"].add(tuple(checked.fingerprints))
                    if checked.count != counted:
                        raise AssertionError("the check's count is not the plan's")
            if len(seen["count"]) != 1 or len(seen["check"]) != 1:
                raise AssertionError("the month's reads differ between 1 and more connections")
    finally:
        await pool.close()
    return best


_FINGERPRINTS_ALONE = (
    f"SELECT width_bucket({source.FINISH_SECOND}, $3::timestamp[]) AS bucket, count(*) AS n, "
    f"sum({source.ROW_VERSION_HASH}) AS s FROM games WHERE {source.IN_SCOPE} "
    f"AND {source.FINISH_SECOND} >= $1 AND {source.FINISH_SECOND} < $2 GROUP BY 1"
)
"""The reference: the check's statement before it also counted the month (issue 26's)."""


async def check_count_cpu(dsn: str, k: int, *, rounds: int) -> tuple[float, float]:
    """The backend CPU seconds of the consistency check's statement over the whole month on one
    connection (``source.check_ranges_query``: the fingerprints and the plan's count) and of
    the fingerprints alone, in turn, ``rounds`` times: the best of each."""
    conn = await asyncpg.connect(dsn)
    try:
        backend: int = await conn.fetchval("SELECT pg_backend_pid()")
        bounds = source.month_bounds(MONTH)
        async with source.counting(conn):
            whole = await source.count_between(conn, "games", *bounds)
        starts = [r.start for r in plan_ranges(whole.publishable, *bounds, target=k)]
        best = {"with_count": float("inf"), "alone": float("inf")}
        for _ in range(rounds):
            for name, sql in (
                ("with_count", source.check_ranges_query("games")),
                ("alone", _FINGERPRINTS_ALONE),
            ):
                async with source.counting(conn):
                    before = _backend_cpu(backend)
                    await conn.fetch(sql, *bounds, starts)
                    best[name] = min(best[name], _backend_cpu(backend) - before)
    finally:
        await conn.close()
    return max(best["with_count"], CLOCK_TICK), max(best["alone"], CLOCK_TICK)


def _backend_cpu(pid: int) -> float:
    seconds = cpu_seconds(pid)
    if seconds is None:
        raise AssertionError(f"backend {pid} is gone")
    return seconds


async def _in_finish_order(dsn: str) -> None:
    """The games table rewritten in the order of their finish (``CLUSTER``), as a game server's
    table that rows are added to as games finish lies."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE INDEX bench_finish ON games (finished_at)")
        await conn.execute("CLUSTER games USING bench_finish")
        await conn.execute("DROP INDEX bench_finish")
        await conn.execute("ANALYZE games")
    finally:
        await conn.close()


def _keep_best(best: dict[int, float], n: int, seconds: float) -> None:
    best[n] = min(best.get(n, seconds), seconds)


# --- what RESULTS.md's notes are written from -----------------------------------------------------


def _write_details(
    workdir: Path,
    plan: Plan,
    choices: list[dict[str, Any]],
    one: WorkerRun,
    two: WorkerRun,
    candidates: int,
    reads: dict[str, dict[int, float]],
    scattered: dict[str, dict[int, float]],
) -> None:
    """``ranges-details.json`` beside RESULTS.md (full runs): the K table, the per-range
    throughput, the assembly's rate and the projection's inputs."""
    single = next(c for c in choices if c["k"] == SINGLE_RANGE)
    rates = sorted(float(r["candidates"]) / float(r["seconds"]) for r in one.ranges)
    details = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "candidates": candidates,
        "k": plan.k,
        "k_choices": [
            {
                "k": c["k"],
                "ranges": c["ranges"],
                "seconds": round(c["seconds_wall"], 2),
                "bytes": c["bytes"],
                "bytes_over_one_range": c["bytes"] - single["bytes"],
            }
            for c in choices
        ],
        "range_candidates_per_second_median": rates[len(rates) // 2],
        "ranges_one_worker": len(one.ranges),
        "assembly_bytes_per_second": one.assembled["bytes_per_second"],
        "assembly_seconds": one.assembled["seconds"],
        "plan_seconds": one.planned["seconds"],
        "count_seconds": {str(n): round(v, 3) for n, v in reads["count"].items()},
        "check_seconds": {str(n): round(v, 3) for n, v in reads["check"].items()},
        "reads_layout": "the table's rows in finish order (CLUSTER)",
        "scattered_count_seconds": {str(n): round(v, 3) for n, v in scattered["count"].items()},
        "scattered_check_seconds": {str(n): round(v, 3) for n, v in scattered["check"].items()},
        "file_bytes": one.assembled["bytes"],
        "one_worker_seconds": round(one.seconds, 2),
        "two_workers_seconds": round(two.seconds, 2),
    }
    if plan is PLANS[Size.FULL]:
        target = Path(__file__).resolve().parent / "ranges-details.json"
    else:
        target = workdir / "ranges-details.json"
    target.write_text(json.dumps(details, indent=2) + "\n")
