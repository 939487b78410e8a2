"""The export (issue 11, targets 0-2): a real ``gomoku-archive export`` of a seeded month against
the floor, ``psql \\copy`` of exactly the columns the export reads (same WHERE, same ORDER BY)
piped through ``gzip -6``; the export's peak RSS, and how it grows with the month; the progress
bar's cost; and the archive against a plain reference build of the same rows (json, the full
move check, ``gzip.GzipFile``): the same text, and for a month of one range (at most K
candidates, ``export.ranges``) the same bytes.

Runs alternate (floor, export, floor, export, ...) and the best of each side counts."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.gomoku.game import Reason
from gomoku_archive.gomoku.replay import coerce_moves
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.writer import game_line

from .data import seed_month
from .figures import Figure, Size, bounded
from .support import ROOT, scratch_database, stored_archive

SECTION = "export"
MONTH = Month(2026, 8)
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    rounds: int
    big_games: int | None
    """A second, larger month for the memory-growth ratio (None: skipped)."""


PLANS = {
    Size.SMOKE: Plan(games=300, rounds=1, big_games=None),
    Size.FULL: Plan(games=200_000, rounds=3, big_games=1_000_000),
}
EXPORT_AT_MOST = 1.5
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
        candidates = asyncio.run(seed_month(dsn, MONTH, plan.games))
        floor_s, export_s, export, one_s = _race(dsn, workdir, plan.rounds)
        games = export["games"]
        figures.append(
            Figure(
                SECTION,
                f"export of a {games:,}-game month ({candidates:,} candidates)",
                "s",
                export_s,
                floor_s,
                "psql \\copy | gzip -6",
                "<=",
                EXPORT_AT_MOST,
                note=f"{games / export_s:,.0f} games/s, "
                f"{export['uncompressed_mib'] / export_s:.1f} MB/s of SGF in, "
                f"{export['bytes'] / MIB / export_s:.2f} MB/s of gzip out; "
                f"in one process (EXPORT_PROCESSES=1) {one_s:.2f} s, "
                f"{one_s / floor_s:.2f} x the floor",
            )
        )
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
                f"{big['helper_peak_mib']:.1f} MiB",
            )
        )
    return figures


def _race(dsn: str, workdir: Path, rounds: int) -> tuple[float, float, dict[str, Any], float]:
    """Best of the floor, the export as configured by default, and the export in one process
    (the figure before the helper processes), run in turns."""
    floors, exports, singles = [], [], []
    best: dict[str, Any] = {}
    for _ in range(rounds):
        floors.append(_floor(dsn))
        result = _export(dsn, workdir)
        exports.append(result["seconds"])
        if result["seconds"] == min(exports):
            best = result
        singles.append(_export(dsn, workdir, processes=1)["seconds"])
    return min(floors), min(exports), best, min(singles)


def _floor(dsn: str) -> float:
    """``psql \\copy`` of the export's own query, through ``gzip -6``, to /dev/null."""
    start, end = (f"'{t.replace(tzinfo=None)}'" for t in (MONTH.start, MONTH.end))
    query = source.candidates_query("games").replace("$1", start).replace("$2", end)
    started = time.monotonic()
    subprocess.run(
        f'psql -q -X "{dsn}" -c "\\copy ({query}) TO STDOUT" | gzip -6 > /dev/null',
        shell=True,
        check=True,
    )
    return time.monotonic() - started


def _export(dsn: str, workdir: Path, *, processes: int | None = None) -> dict[str, Any]:
    """One forced export through the command line (JSON summary), with its peak RSS;
    ``processes`` sets EXPORT_PROCESSES (None: the default)."""
    env = dict(os.environ) | {"DATABASE_URL": dsn, "LOG_FORMAT": "json", "LOG_LEVEL": "WARNING"}
    env.pop("EXPORT_PROCESSES", None)
    if processes is not None:
        env["EXPORT_PROCESSES"] = str(processes)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, "export", "--month", str(MONTH), "--force"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
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
