"""The export (issue 11, targets 0-2; issue 29, the CPU per game): a real ``gomoku-archive
export`` of a month of demo play (every game played, none copied: ``data.seed_played_month``)
against the floor, ``psql \\copy`` of exactly the columns the export reads (same WHERE, same
ORDER BY) piped through ``gzip -6``: wall time, the client's CPU (the processes' own, from the
kernel's accounting of the reaped children) and PostgreSQL's backends' CPU (``support.BackendCpu``)
apart, per game, and bytes; the month's compressed size per game against a fresh sample of the
demo player's play; the export's peak RSS, and how it grows with the month; the progress bar's
cost; and the archive against a plain reference build of the same rows (json, the full move
check, ``gzip.GzipFile``): the same text, and for a month of one range (at most K candidates,
``export.ranges``) the same bytes.

Runs alternate (floor, export in one process, export as configured by default, floor, ...) and
the best of each side counts."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import io
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.demo.examples import build_archive
from gomoku_archive.demo.games import generate_month
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.gomoku.game import Reason
from gomoku_archive.gomoku.replay import coerce_moves
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.writer import GameRecord, game_line

from .data import seed_month, seed_played_month
from .figures import Figure, Size, bounded
from .machine import load_average
from .support import (
    CLOCK_TICK,
    ROOT,
    BackendCpu,
    postmaster_pid,
    scratch_database,
    stored_archive,
)

SECTION = "export"
_T = TypeVar("_T")
MONTH = Month(2026, 8)
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    rounds: int
    big_games: int | None
    """A second, larger month for the memory-growth ratio (None: skipped); its games are copies
    of a template (``data.seed_month``): memory does not depend on the games' variety."""
    sample_games: int
    """Games of a fresh sample of demo play, the compressed size per game of real play."""


PLANS = {
    Size.SMOKE: Plan(games=300, rounds=1, big_games=None, sample_games=300),
    Size.FULL: Plan(games=200_000, rounds=3, big_games=1_000_000, sample_games=5_000),
}
EXPORT_AT_MOST = 1.5
ONE_PROCESS_AT_MOST = 1.6
"""Issue 29: the export in one process against the floor, client CPU per game and wall time."""
BACKEND_AT_MOST = 1.6
"""PostgreSQL's CPU for the export (its read, and the parts and chunks it writes) against the
floor's read alone."""
REAL_PLAY_OFF_AT_MOST = 20.0
"""Percent: the month's compressed size per game against a fresh sample of demo play."""
PEAK_RSS_AT_MOST_MIB = 150.0
GROWTH_AT_MOST = 1.1
PROGRESS_COST_AT_MOST = 1.02
PROFILE = Path(__file__).resolve().parent / "export-profile.txt"
"""pyinstrument's view of the full run's export (text), kept beside RESULTS.md."""

_PEAK = re.compile(r"^PEAK_RSS_KIB (\d+)$", re.MULTILINE)
_HELPER_PEAK = re.compile(r"^HELPER_PEAK_RSS_KIB (\d+)$", re.MULTILINE)
# Runs the CLI and reports the process's own high-water mark (VmHWM is per process image,
# unlike ru_maxrss, which a child inherits from the process that forked it), and the largest
# helper's ru_maxrss: an upper bound, since a spawned helper starts as a fork of the CLI.
_WRAPPER = (
    "import resource, sys\n"
    "from gomoku_archive.cli.main import main\n"
    "if __name__ == '__main__':\n"
    "    code = main(sys.argv[1:])\n"
    "    hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
    "    print('PEAK_RSS_KIB', hwm.split()[1], file=sys.stderr)\n"
    "    helpers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "    print('HELPER_PEAK_RSS_KIB', helpers, file=sys.stderr)\n"
    "    sys.exit(code)\n"
)


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    figures: list[Figure] = []
    with scratch_database(SECTION) as dsn:
        candidates = asyncio.run(seed_played_month(dsn, MONTH, plan.games))
        race = _race(dsn, workdir, plan.rounds)
        export, floor, one = race.best_export, race.floor, race.one_process
        games = export["games"]
        figures += _one_process_figures(race, games)
        figures.append(
            Figure(
                SECTION,
                f"export of a {games:,}-game month ({candidates:,} candidates)",
                "s",
                export["seconds"],
                floor.wall,
                "psql \\copy | gzip -6",
                "<=",
                EXPORT_AT_MOST,
                note=f"as configured by default; {games / export['seconds']:,.0f} games/s, "
                f"{export['uncompressed_mib'] / export['seconds']:.1f} MB/s of SGF in, "
                f"{export['bytes'] / MIB / export['seconds']:.2f} MB/s of gzip out; "
                f"in one process (EXPORT_PROCESSES=1) {one.wall:.2f} s",
            )
        )
        figures.append(_real_play_figure(export, plan.sample_games))
        figures.append(
            bounded(
                SECTION, "export peak RSS", "MiB", export["peak_mib"], at_most=PEAK_RSS_AT_MOST_MIB
            )
        )
        figures.append(
            bounded(
                SECTION,
                "export range process peak RSS (at most)",
                "MiB",
                export["helper_peak_mib"],
                at_most=PEAK_RSS_AT_MOST_MIB,
            )
        )
        reference = asyncio.run(_reference_archive(dsn))
        ours = asyncio.run(stored_archive(dsn, export["file"]))
        figures.append(
            bounded(
                SECTION,
                "archive text differs from the plain reference build",
                "files",
                0.0 if gzip.decompress(reference) == gzip.decompress(ours) else 1.0,
                at_most=0.0,
            )
        )
        if candidates <= RANGE_CANDIDATES:  # one range: one deflate stream, the plain bytes
            figures.append(
                bounded(
                    SECTION,
                    "archive bytes differ from the plain reference build",
                    "files",
                    0.0 if reference == ours else 1.0,
                    at_most=0.0,
                )
            )
        figures.append(_progress_cost(dsn, plan.rounds))
        if size is Size.FULL:
            _profile(dsn, PROFILE)
    if plan.big_games is not None:
        with scratch_database(SECTION + "_big") as dsn:
            asyncio.run(seed_month(dsn, MONTH, plan.big_games))
            big = _export(dsn, workdir)
        figures.append(
            Figure(
                SECTION,
                f"export peak RSS, {big['games']:,} games against {games:,}",
                "MiB",
                big["peak_mib"],
                export["peak_mib"],
                f"peak for {games:,} games",
                "<=",
                GROWTH_AT_MOST,
                note=f"{big['games'] / big['seconds']:,.0f} games/s; the helper at most "
                f"{big['helper_peak_mib']:.1f} MiB; the larger month's games are copies of a "
                "template (data.seed_month)",
            )
        )
    return figures


@dataclass(frozen=True, slots=True)
class Run:
    """One timed command: its wall time, its processes' CPU (user + system, every process it
    waited for), its PostgreSQL backends' CPU, and the compressed bytes it wrote."""

    wall: float
    client_cpu: float
    backend_cpu: float
    bytes: int


@dataclass(slots=True)
class Race:
    floors: list[Run]
    one_processes: list[Run]
    exports: list[float]
    best_export: dict[str, Any]
    load_averages: list[str]

    @property
    def floor(self) -> Run:
        return _best(self.floors)

    @property
    def one_process(self) -> Run:
        return _best(self.one_processes)


def _best(runs: list[Run]) -> Run:
    """The best of each measure (each is a lower bound of what the command needs)."""
    return Run(
        min(r.wall for r in runs),
        min(r.client_cpu for r in runs),
        min(r.backend_cpu for r in runs),
        runs[0].bytes,
    )


def _race(dsn: str, workdir: Path, rounds: int) -> Race:
    """The floor, the export in one process (EXPORT_PROCESSES=1) and the export as configured
    by default (the command and its range processes), run in turns."""
    postmaster = asyncio.run(postmaster_pid(dsn))
    race = Race([], [], [], {}, [])
    for _ in range(rounds):
        race.load_averages.append(load_average())
        race.floors.append(_floor(dsn, workdir, postmaster))
        single = _export(dsn, workdir, processes=1, postmaster=postmaster)
        race.one_processes.append(dataclasses.replace(single["run"], bytes=single["bytes"]))
        result = _export(dsn, workdir)
        race.exports.append(result["seconds"])
        if result["seconds"] == min(race.exports):
            race.best_export = result
    race.load_averages.append(load_average())
    return race


def _timed(dsn: str, postmaster: int, command: Callable[[], _T]) -> tuple[Run, _T]:
    """``command``'s Run (its bytes filled in by the caller): its children's CPU from the
    kernel (RUSAGE_CHILDREN counts every process reaped meanwhile, so nothing else here runs
    children at the same time), and the CPU of the database's backends meanwhile."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with BackendCpu(postmaster, _database(dsn)) as backends:
        started = time.monotonic()
        outcome = command()
        wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # A reading of 0 means less than one clock tick (a tiny month): counted as one.
    return Run(wall, cpu, max(backends.seconds, CLOCK_TICK), 0), outcome


def _database(dsn: str) -> str:
    return dsn.rsplit("/", 1)[1].split("?", 1)[0]


def _floor(dsn: str, workdir: Path, postmaster: int) -> Run:
    """``psql \\copy`` of the export's own query, through ``gzip -6``, to a file."""
    start, end = (f"'{t.replace(tzinfo=None)}'" for t in (MONTH.start, MONTH.end))
    query = source.candidates_query("games").replace("$1", start).replace("$2", end)
    out = workdir / "floor.gz"

    def copy() -> None:
        subprocess.run(
            f'psql -q -X "{dsn}" -c "\\copy ({query}) TO STDOUT" | gzip -6 > "{out}"',
            shell=True,
            check=True,
        )

    run, _ = _timed(dsn, postmaster, copy)
    return dataclasses.replace(run, bytes=out.stat().st_size)


def _one_process_figures(race: Race, games: int) -> list[Figure]:
    """Issue 29's figures: the export in one process against the floor, per game."""
    floor, one = race.floor, race.one_process
    per_game = 1e6 / games

    def runs(pick: Callable[[Run], float]) -> str:
        return ", ".join(f"{pick(r) * per_game:.1f}" for r in race.one_processes)

    loads = "; load average " + " / ".join(race.load_averages)
    return [
        Figure(
            SECTION,
            "export client CPU per game, one process",
            "us",
            one.client_cpu * per_game,
            floor.client_cpu * per_game,
            "psql \\copy | gzip -6",
            "<=",
            ONE_PROCESS_AT_MOST,
            note=f"the command's process, start-up included; runs {runs(lambda r: r.client_cpu)} "
            f"us against {', '.join(f'{r.client_cpu * per_game:.1f}' for r in race.floors)}"
            + loads,
        ),
        Figure(
            SECTION,
            "export wall time, one process",
            "s",
            one.wall,
            floor.wall,
            "psql \\copy | gzip -6",
            "<=",
            ONE_PROCESS_AT_MOST,
            note=f"{games:,} games: {games / one.wall:,.0f} games/s; runs "
            f"{', '.join(f'{r.wall:.2f}' for r in race.one_processes)} s against "
            f"{', '.join(f'{r.wall:.2f}' for r in race.floors)} s",
        ),
        Figure(
            SECTION,
            "export PostgreSQL backend CPU per game, one process",
            "us",
            one.backend_cpu * per_game,
            floor.backend_cpu * per_game,
            "psql \\copy | gzip -6",
            "<=",
            BACKEND_AT_MOST,
            note="the export's backends read the month and write its parts and chunks; runs "
            f"{runs(lambda r: r.backend_cpu)} us against "
            f"{', '.join(f'{r.backend_cpu * per_game:.1f}' for r in race.floors)}; bytes out "
            f"{one.bytes:,} (the archive) against {floor.bytes:,} (the floor's gzip of COPY "
            "text)",
        ),
    ]


def _real_play_figure(export: dict[str, Any], sample_games: int) -> Figure:
    """How far the month's compressed size per game is from that of a fresh sample of the demo
    player's games, written the export's way: the benchmark's games are real play, not copies."""
    records: list[GameRecord] = []
    for game in generate_month(MONTH, sample_games, seed=2029):
        if not game.in_scope:
            continue
        moves = None if game.moves is None else json.dumps(game.moves)
        verdict = classify(
            Candidate(
                game.id,
                game.status,
                game.board_size,
                game.started_at,
                game.finished_at,  # type: ignore[arg-type]  # in scope: finished
                game.result,
                game.termination,
                moves,
                game.time_control_seconds,
                game.black_rating,
                game.white_rating,
            )
        )
        if isinstance(verdict, GameRecord):
            records.append(verdict)
    sample = build_archive(records, MONTH)
    ours = export["bytes"] / export["games"]
    theirs = len(sample.data) / sample.games
    return Figure(
        SECTION,
        "compressed size per game, off real play's",
        "%",
        abs(ours / theirs - 1) * 100,
        None,
        None,
        "<=",
        REAL_PLAY_OFF_AT_MOST,
        note=f"{ours:.1f} bytes a game against {theirs:.1f} for {sample.games:,} games of demo "
        "play written apart",
    )


def _export(
    dsn: str, workdir: Path, *, processes: int | None = None, postmaster: int | None = None
) -> dict[str, Any]:
    """One forced export through the command line (JSON summary), with its peak RSS;
    ``processes`` sets EXPORT_PROCESSES (None: the default); with ``postmaster``, its Run
    (``run``: the command alone is measured)."""
    env = dict(os.environ) | {"DATABASE_URL": dsn, "LOG_FORMAT": "json", "LOG_LEVEL": "WARNING"}
    env.pop("EXPORT_PROCESSES", None)
    if processes is not None:
        env["EXPORT_PROCESSES"] = str(processes)

    def command() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _WRAPPER, "export", "--month", str(MONTH), "--force"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )

    started = time.monotonic()
    if postmaster is None:
        done, run = command(), None
    else:
        run, done = _timed(dsn, postmaster, command)
    seconds = time.monotonic() - started
    summary: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    peak = _PEAK.search(done.stderr)
    helper_peak = _HELPER_PEAK.search(done.stderr)
    assert peak is not None and helper_peak is not None, done.stderr
    uncompressed = asyncio.run(_uncompressed_bytes(dsn, summary["file"]))
    return summary | {
        "seconds": seconds,
        "peak_mib": int(peak.group(1)) / 1024,
        "helper_peak_mib": int(helper_peak.group(1)) / 1024,
        "uncompressed_mib": uncompressed / MIB,
        "run": run,
    }


async def _uncompressed_bytes(dsn: str, file_name: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        size: int = await conn.fetchval(
            "SELECT uncompressed_bytes FROM archives WHERE file_name = $1", file_name
        )
    finally:
        await conn.close()
    return size


async def _reference_archive(dsn: str) -> bytes:
    """The archive built the plain way from the same rows: the moves decoded with ``json`` and
    checked item by item, every line formatted, ``gzip.GzipFile(mtime=0)`` at level 6."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            rows = await conn.fetch(
                source.candidates_query("games"),
                MONTH.start.replace(tzinfo=None),
                MONTH.end.replace(tzinfo=None),
            )
    finally:
        await conn.close()
    lines = []
    for row in rows:
        candidate = Candidate(*row)
        verdict = classify(candidate)
        # The plain move check must agree with the fast path the export took.
        if not isinstance(verdict, Reason):
            plain = coerce_moves(json.loads(candidate.moves or "null"))
            assert plain == verdict.moves
            lines.append(game_line(verdict).encode())
    # GzipFile, not gzip.compress: since 3.11 the latter lets zlib write the header, whose OS
    # byte is the build machine's (3) rather than the profile's 255.
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=6, mtime=0) as archive:
        archive.write(b"".join(lines))
    return out.getvalue()


def _profile(dsn: str, out: Path) -> None:
    """Where the export's time goes: one export under pyinstrument, as a text tree. A failure
    here costs the profile, never the figures."""
    env = dict(os.environ) | {"DATABASE_URL": dsn, "LOG_FORMAT": "json", "LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyinstrument",
            "-r",
            "text",
            "-i",
            "0.005",
            "-o",
            str(out),
            "-m",
            "gomoku_archive.cli.main",
            "export",
            "--month",
            str(MONTH),
            "--force",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"export profile not written: {done.stderr.strip()[-500:]}", file=sys.stderr)


def _progress_cost(dsn: str, rounds: int) -> Figure:
    """The terminal progress bar's cost: the export in-process with the CLI's bar drawing to a
    terminal-like buffer, against the same export without it."""
    plain, drawn = [], []
    for _ in range(rounds):
        plain.append(_in_process_export(dsn, bar=False))
        drawn.append(_in_process_export(dsn, bar=True))
    return Figure(
        SECTION,
        "export with the terminal progress bar",
        "s",
        min(drawn),
        min(plain),
        "the same export without it",
        "<=",
        PROGRESS_COST_AT_MOST,
    )


def _in_process_export(dsn: str, *, bar: bool) -> float:
    code = (
        "import asyncio, io, sys, time\n"
        "from rich.console import Console\n"
        "from gomoku_archive.export.progress_bar import ExportProgressBar\n"
        "from tests.support import pool_from\n"
        "from gomoku_archive.export.coordinator import RangeOptions\n"
        "from gomoku_archive.export.month import export_month\n"
        "from gomoku_archive.export.local_ranges import LocalProcesses\n"
        "from gomoku_archive.profile.months import Month\n"
        "async def main():\n"
        "    async with pool_from(sys.argv[1], max_size=3) as pool:\n"
        "        console = Console(file=io.StringIO(), force_terminal=True)\n"
        "        with ExportProgressBar(enabled=sys.argv[2] == '1', console=console) as bar:\n"
        "            t = time.monotonic()\n"
        "            await export_month(pool, table='games', month=Month(2026, 8), force=True,\n"
        "                               progress=bar if sys.argv[2] == '1' else None,\n"
        "                               ranges=RangeOptions(spreads=(LocalProcesses(\n"
        "                                   dsn=sys.argv[1], source_dsn=sys.argv[1],\n"
        "                                   table='games'),)))\n"
        "            seconds = time.monotonic() - t\n"
        "        print(seconds)  # after the bar: it redirects stdout while it runs\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, dsn, "1" if bar else "0"],
        cwd=ROOT,
        env=dict(os.environ) | {"LOG_LEVEL": "WARNING"},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])
