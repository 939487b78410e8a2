"""The Parquet companion (issue 36): what it costs a month's build and what it weighs.

A month of the demo player's games, every one played (``seed_played_month``, as the export
section's), exported in one process (the coordinator runs every range itself, so every core-second
of the build is this process's), in turns with and without the companion, ``ROUNDS`` times:

- CPU per game, the build with the companion against the build without (user + system of the
  export process, the ranges' encoding threads included; target at most 1.25 x), and PostgreSQL's
  backends' CPU per game apart;
- the serial step: the companion's join after the ranges (the parts' footers read and joined,
  the row groups' bytes copied into its chunks inside PostgreSQL, read back, hashed) against
  the assembly of the archive, which it runs beside (target at most 1 x);
- the coordinator's footer work per range (each group placed, the footer made), which the
  projection counts for months of thousands of ranges;
- the companion's size against the archive's;
- the backfill (``build_companion``) from the stored archive, per game;
- peak RSS with and without.

"Without" is the same code with the companion's two entry points replaced by nothing: the
range's part (its rows and its row group), and the coordinator's join. The child process prints
one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

from .data import seed_played_month
from .figures import Figure, Size, bounded
from .machine import load_average
from .support import BackendCpu, postmaster_pid, scratch_database

SECTION = "companion"
MONTH_TEXT = "2026-08"
CPU_AT_MOST = 1.25
SERIAL_AT_MOST = 1.0


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    rounds: int


PLANS = {Size.SMOKE: Plan(games=3_000, rounds=1), Size.FULL: Plan(games=200_000, rounds=3)}


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    from gomoku_archive.profile.months import Month

    with scratch_database(SECTION) as dsn:
        asyncio.run(seed_played_month(dsn, Month.parse(MONTH_TEXT), plan.games))
        postmaster = asyncio.run(postmaster_pid(dsn))
        runs: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
        loads = [load_average()]
        for _ in range(plan.rounds):
            for mode in ("without", "with"):
                runs[mode].append(_child(dsn, mode, postmaster))
            loads.append(load_average())
        backfill = _child(dsn, "backfill", postmaster)
    return _figures(runs, backfill, loads)


def _child(dsn: str, mode: str, postmaster: int) -> dict[str, Any]:
    database = dsn.rsplit("/", 1)[1]
    with BackendCpu(postmaster, database) as backends:
        done = subprocess.run(
            [sys.executable, "-m", f"{__package__}.companion", dsn, mode],
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["backend_cpu"] = backends.seconds
    return result


def _best(runs: list[dict[str, Any]], key: str) -> float:
    return min(float(r[key]) for r in runs)


def _figures(
    runs: dict[str, list[dict[str, Any]]], backfill: dict[str, Any], loads: list[str]
) -> list[Figure]:
    games = runs["with"][0]["games"]
    per_game = 1e6 / games
    without_cpu, with_cpu = _best(runs["without"], "cpu"), _best(runs["with"], "cpu")
    listed = "; ".join(
        f"{mode} " + ", ".join(f"{r['cpu'] * per_game:.1f}" for r in rs)
        for mode, rs in runs.items()
    )
    best = min(runs["with"], key=lambda r: r["companion_seconds"])
    encode_us = best["encode_seconds"] * per_game
    return [
        Figure(
            SECTION,
            f"build CPU per game with the companion, one process ({games:,} games)",
            "us",
            with_cpu * per_game,
            without_cpu * per_game,
            "the build without it",
            "<=",
            CPU_AT_MOST,
            note=f"runs (us a game): {listed}; load average {' / '.join(loads)}",
        ),
        Figure(
            SECTION,
            "PostgreSQL backend CPU per game with the companion",
            "us",
            _best(runs["with"], "backend_cpu") * per_game,
            _best(runs["without"], "backend_cpu") * per_game,
            "the build without it",
            "<=",
            CPU_AT_MOST,
        ),
        Figure(
            SECTION,
            "companion's serial step against the assembly",
            "s",
            best["companion_seconds"],
            best["assembly_seconds"],
            "the archive's assembly (beside it)",
            "<=",
            SERIAL_AT_MOST,
            note=f"the ranges' encoding {encode_us:.2f} us of CPU a game (in the ranges); "
            f"{best['row_groups']} row groups; runs "
            + ", ".join(f"{r['companion_seconds']:.2f}" for r in runs["with"])
            + " s against "
            + ", ".join(f"{r['assembly_seconds']:.2f}" for r in runs["with"])
            + " s",
        ),
        dataclasses.replace(
            bounded(
                SECTION,
                "companion's footer work per range (serial, in the coordinator)",
                "ms",
                best["footer_seconds"] * 1e3 / best["row_groups"],
                at_most=10.0,
            ),
            note="each range's group placed (its footer decoded, its offsets moved) and its "
            "share of the joined footer's encoding: before the copies, for every range",
        ),
        Figure(
            SECTION,
            "companion size against the archive",
            "bytes",
            float(best["companion_bytes"]),
            float(best["archive_bytes"]),
            ".sgf.gz",
            "<=",
            1.5,
            note=f"{best['companion_bytes'] / games:.1f} against "
            f"{best['archive_bytes'] / games:.1f} bytes a game",
        ),
        bounded(
            SECTION,
            "backfill from the stored archive (build_companion), CPU per game",
            "us",
            backfill["cpu"] * per_game,
            at_most=50.0,
        ),
        Figure(
            SECTION,
            "build peak RSS with the companion",
            "MiB",
            max(r["peak_mib"] for r in runs["with"]),
            max(r["peak_mib"] for r in runs["without"]),
            "the build without it",
            "<=",
            2.0,
        ),
    ]


# --- the child: one build (or one backfill) in this process ------------------------------------


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _build(dsn: str, mode: str) -> dict[str, Any]:
    from gomoku_archive.companion import footer
    from gomoku_archive.export import assembly as export_assembly
    from gomoku_archive.export import month as month_export
    from gomoku_archive.export import range_run
    from gomoku_archive.export.companion import build as companion_build
    from gomoku_archive.export.companion import parts as companion_parts

    timed: dict[str, float] = {}
    real_assemble, real_from_ranges = export_assembly.assemble, companion_build.from_ranges
    stored: list[Any] = []

    async def assemble(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return await real_assemble(*args, **kwargs)
        finally:
            timed["assembly_seconds"] = time.monotonic() - started

    async def from_ranges(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = await real_from_ranges(*args, **kwargs)
            stored.append(result)
            return result
        finally:
            timed["companion_seconds"] = time.monotonic() - started

    class NoPart:
        """The range's companion part, not made: the build without the companion."""

        def write(self, lines: list[str]) -> None:
            pass

        async def store(self, *args: Any, **kwargs: Any) -> None:
            pass

    class TimedPart(companion_parts.RangePart):
        """The range's companion part, its encoding's CPU time kept."""

        async def store(self, *args: Any, **kwargs: Any) -> None:
            await super().store(*args, **kwargs)
            timed["encode_seconds"] = timed.get("encode_seconds", 0.0) + self.encode_seconds

    class TimedJoiner(footer.Joiner):
        """The coordinator's footer work, timed: each range's group placed, the footer made."""

        def place(self, footer: bytes, body_bytes: int) -> int:
            started = time.perf_counter()
            try:
                return super().place(footer, body_bytes)
            finally:
                timed["footer_seconds"] = timed.get("footer_seconds", 0.0) + (
                    time.perf_counter() - started
                )

        def finish(self) -> bytes:
            started = time.perf_counter()
            try:
                return super().finish()
            finally:
                timed["footer_seconds"] = timed.get("footer_seconds", 0.0) + (
                    time.perf_counter() - started
                )

    async def no_file(*args: Any, **kwargs: Any) -> None:
        return None

    with contextlib.ExitStack() as patches:
        patches.enter_context(patch.object(month_export, "assemble", assemble))
        if mode == "without":
            patches.enter_context(patch.object(range_run, "RangePart", NoPart))
            patches.enter_context(patch.object(companion_build, "from_ranges", no_file))
        else:
            patches.enter_context(patch.object(companion_build, "from_ranges", from_ranges))
            patches.enter_context(patch.object(range_run, "RangePart", TimedPart))
            patches.enter_context(patch.object(companion_build, "Joiner", TimedJoiner))
        return await _run(dsn, mode, timed, stored)


async def _run(dsn: str, mode: str, timed: dict[str, float], stored: list[Any]) -> dict[str, Any]:
    from gomoku_archive.db import archive_store
    from gomoku_archive.db.pool import create_pool
    from gomoku_archive.export import month as month_export
    from gomoku_archive.export.companion import backfill as companion_backfill
    from gomoku_archive.profile.months import Month

    pool = await create_pool(dsn, min_size=1, max_size=12)
    try:
        month = Month.parse(MONTH_TEXT)
        if mode == "backfill":
            async with pool.acquire() as conn:
                await conn.execute("DELETE FROM archives WHERE companion_of IS NOT NULL")
                archive = await archive_store.published_for_month(conn, MONTH_TEXT)
            assert archive is not None
            started_cpu = _cpu()
            result = await companion_backfill.companion_for_archive(pool, archive.id)
            assert result.outcome == "published", result
            return {"cpu": _cpu() - started_cpu, "games": archive.games}
        started_cpu, started = _cpu(), time.monotonic()
        done = await month_export.export_month(pool, table="games", month=month, force=True)
        cpu, wall = _cpu() - started_cpu, time.monotonic() - started
        assert done.archive is not None
        out: dict[str, Any] = {
            "cpu": cpu,
            "wall": wall,
            "games": done.archive.games,
            "archive_bytes": done.archive.bytes,
            **timed,
        }
        if mode == "with":
            (companion,) = stored
            assert companion is not None
            out |= {
                "companion_bytes": companion.built.bytes,
                "row_groups": companion.built.row_groups,
            }
        return out
    finally:
        await pool.close()


def _child_main(argv: list[str]) -> None:
    dsn, mode = argv
    result = asyncio.run(_build(dsn, mode))
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(line for line in status if line.startswith("VmHWM"))
    result["peak_mib"] = int(peak.split()[1]) / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    _child_main(sys.argv[1:])
