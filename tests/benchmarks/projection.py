"""The projection (issue 29): how long a 10M- and a 100M-game month would take on 4, 8, 16 and
32 worker processes, computed from what the other sections measured (this run's figures where
it ran them, the recorded ``results.json`` otherwise; the ranges' per-range overhead and the
plan's count rate from ``ranges-details.json``), with the serial parts named. The goal: 100M
games in at most 10 minutes on 16 workers.

The formulas (G games, W workers, K candidates a range):

- candidates ``C = G * c``, ``c`` the candidates per game of the export section's month;
- ranges ``R = ceil(C / K)``; one range on one worker ``d = K * t + o``: ``t`` the export's
  client CPU per game in one process (a range is CPU-bound on its worker's core), ``o`` the
  per-range overhead, from the K table (the same month with ranges of 25,000 against one range:
  the extra seconds over the extra ranges);
- the ranges' phase ``ceil(R / W) * (d + h) + l`` (ranges of equal length in waves; every
  worker's range slot takes them, the coordinator's process's included): ``h`` the pool's
  measured overhead per wave and ``l`` its latencies (the first claim after the plan, the check
  after the last range), from the simulated pool of ``pool-details.json`` (issue 37: real
  workers, coordinator and queue, a range's work replaced by its measured cost) at the same
  number of workers, or at 16 for fewer; 0 before the pool was measured;
- serial, before it: the plan's count, ``C`` at the rate the ranges section measured for it on
  one connection, read on ``P = READ_CONNECTIONS`` connections at once (``export.month_reads``:
  slices in one snapshot), so divided by ``P``; after the ranges, the consistency check of
  issue 26 (every range fingerprinted again in one snapshot), likewise measured on one
  connection and divided by ``P``. Dividing by ``P`` assumes the database gives each of those
  connections a core, as the ranges' phase assumes for its backends; the ranges section measures
  what ``P`` connections give on this machine (``count_seconds``, ``check_seconds``), and the
  figures name the total with that measured speed too;
- serial, after it: the assembly's copies and per-part read-back inside PostgreSQL (its
  connections, not the workers; rate at the largest size measured) and its SHA-256 pass over
  the file (``B = G * 115`` bytes: the issue's 11.5 GB for 100M games), and the publish (one
  transaction: ``PUBLISH_SECONDS``);
- the Parquet companion (issue 36, the companion section): each range makes and encodes its
  own row group, ``p`` more CPU per game (the build's CPU with the companion less without), so
  ``t`` becomes ``t + p`` in ``d``; after the ranges the companion's file is joined beside the
  assembly the same way (its groups copied inside PostgreSQL, read back, one SHA-256 pass), so
  it takes the assembly's time for its own bytes, ``z`` times the archive's (the companion
  section's size ratio), plus the coordinator's footer work for each of the ``R`` ranges
  (measured per range), and the serial part after the ranges is the longer of the two;
- total = plan + fingerprint + ranges + max(assembly + SHA-256, companion) + publish.

PostgreSQL's own CPU during the ranges' phase is ``W * b / t`` cores (``b`` the backend CPU per
game): the projection assumes the database has them."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gomoku_archive.export.month_reads import READ_CONNECTIONS

from .figures import Figure, Size, bounded

SECTION = "projection"
HERE = Path(__file__).resolve().parent
READS_RESULTS = True
"""The runner passes this run's results so far (``run(size, workdir, results)``)."""
GAMES = (10_000_000, 100_000_000)
WORKERS = (4, 8, 16, 32)
K = 50_000
BYTES_PER_GAME = 115
PUBLISH_SECONDS = 1.0
"""One transaction (the row's state, its counts, NOTIFY): well under a second in every run."""
CHECK_SECONDS_PER_CANDIDATE = 1.66e-6
"""The consistency check on one connection when ``ranges-details.json`` predates its
measurement: 1.37-1.66 s per million candidates in issue 26's farm-bench pairs on the
1M-candidate month (the slower end taken)."""
GOAL_MINUTES = 10.0


@dataclass(frozen=True, slots=True)
class Inputs:
    cpu_us: float
    backend_us: float
    candidates_per_game: float
    range_overhead_s: float
    count_s_per_candidate: float
    """The plan's count on one connection."""
    check_s_per_candidate: float
    """The consistency check on one connection."""
    reads_speedup_here: float
    """What READ_CONNECTIONS connections gave over one on this machine (count and check)."""
    assembly_pg_s_per_byte: float
    sha_bytes_per_s: float
    companion_range_us: float
    """The companion's part in a range: CPU per game."""
    companion_size_ratio: float
    """The companion's bytes over the archive's."""
    companion_footer_s_per_range: float
    """The coordinator's footer work for one range's group."""
    sources: str
    wave_overhead_s: dict[int, float] = dataclasses.field(default_factory=dict)
    """The simulated pool's overhead per wave of ranges, by workers (``pool-details.json``)."""
    latency_s: dict[int, float] = dataclasses.field(default_factory=dict)
    """Its first claim after the plan plus its check after the last range, by workers."""

    def pool_overhead(self, workers: int) -> tuple[float, float]:
        """``(h, l)`` at ``workers``: measured there, else at the nearest measured size above
        (16 for 4 and 8), else none."""
        sizes = sorted(self.wave_overhead_s)
        at = next((n for n in sizes if n >= workers), sizes[-1] if sizes else None)
        if at is None:
            return 0.0, 0.0
        return self.wave_overhead_s[at], self.latency_s.get(at, 0.0)


@dataclass(frozen=True, slots=True)
class Projected:
    games: int
    workers: int
    ranges: int
    plan: float
    fingerprint: float
    range_phase: float
    assembly: float
    sha: float
    companion: float
    """Beside the assembly and its SHA-256 pass."""
    publish: float

    @property
    def total(self) -> float:
        return (
            self.plan
            + self.fingerprint
            + self.range_phase
            + max(self.assembly + self.sha, self.companion)
            + self.publish
        )


def project(
    inputs: Inputs, games: int, workers: int, *, reads_speedup: float = READ_CONNECTIONS
) -> Projected:
    """``reads_speedup``: what the month's count and check gain from ``READ_CONNECTIONS``
    connections (all of it with a core each; ``inputs.reads_speedup_here`` on this machine)."""
    candidates = games * inputs.candidates_per_game
    ranges = math.ceil(candidates / K)
    one_range = K * (inputs.cpu_us + inputs.companion_range_us) / 1e6 + inputs.range_overhead_s
    per_wave, latency = inputs.pool_overhead(workers)
    size = games * BYTES_PER_GAME
    return Projected(
        games=games,
        workers=workers,
        ranges=ranges,
        plan=candidates * inputs.count_s_per_candidate / reads_speedup,
        fingerprint=candidates * inputs.check_s_per_candidate / reads_speedup,
        range_phase=math.ceil(ranges / workers) * (one_range + per_wave) + latency,
        assembly=size * inputs.assembly_pg_s_per_byte,
        sha=size / inputs.sha_bytes_per_s,
        companion=(
            size
            * inputs.companion_size_ratio
            * (inputs.assembly_pg_s_per_byte + 1 / inputs.sha_bytes_per_s)
            + ranges * inputs.companion_footer_s_per_range
        ),
        publish=PUBLISH_SECONDS,
    )


def run(size: Size, workdir: Path, results: dict[str, Any]) -> list[Figure]:
    inputs = gather(results)
    figures = []
    for games in GAMES:
        for workers in WORKERS:
            p = project(inputs, games, workers)
            figures.append(
                bounded(
                    SECTION,
                    f"{games // 1_000_000}M games on {workers} workers",
                    "min",
                    p.total / 60,
                    at_most=GOAL_MINUTES,
                )
            )
    here = project(inputs, GAMES[-1], 16, reads_speedup=inputs.reads_speedup_here)
    figures.append(
        dataclasses.replace(
            bounded(
                SECTION,
                f"100M games on 16 workers, the month's reads as fast as {READ_CONNECTIONS} "
                "connections were here",
                "min",
                here.total / 60,
                at_most=GOAL_MINUTES,
            ),
            note=f"{READ_CONNECTIONS} connections read {inputs.reads_speedup_here:.2f} x as fast "
            "as one on this machine's cores",
        )
    )
    big = project(inputs, GAMES[-1], 16)
    per_wave, latency = inputs.pool_overhead(16)
    handout = math.ceil(big.ranges / 16) * per_wave + latency
    for name, seconds in (
        (f"plan's count (serial, {READ_CONNECTIONS} connections)", big.plan),
        (f"consistency check (serial, {READ_CONNECTIONS} connections)", big.fingerprint),
        (f"ranges on 16 workers ({big.ranges:,} ranges)", big.range_phase),
        ("of which the pool's hand-out (measured by the simulated pool)", handout),
        ("assembly's copies and read-back (in PostgreSQL)", big.assembly),
        ("assembly's SHA-256 pass (serial)", big.sha),
        ("Parquet companion's file (serial, beside the assembly)", big.companion),
        ("publish (serial)", big.publish),
    ):
        figures.append(
            bounded(SECTION, f"100M on 16 workers: {name}", "min", seconds / 60, at_most=10.0)
        )
    backend_cores = 16 * inputs.backend_us / inputs.cpu_us
    note = f"{inputs.sources}; PostgreSQL's CPU at 16 workers: about {backend_cores:.1f} cores"
    figures[len(GAMES) * len(WORKERS) - 1] = dataclasses.replace(
        figures[len(GAMES) * len(WORKERS) - 1], note=note
    )
    return figures


def gather(results: dict[str, Any]) -> Inputs:
    """The projection's inputs: this run's sections first, the recorded ones otherwise."""
    recorded = json.loads((HERE / "results.json").read_text())["sections"]
    sources = []

    def figures_of(section: str) -> dict[str, dict[str, Any]]:
        entry, where = results.get(section), "this run"
        if (entry is None or entry["size"] != "full") and section in recorded:
            entry, where = recorded[section], f"recorded {recorded[section]['machine']['date']}"
        if entry is None:
            raise RuntimeError(f"the projection needs the {section} section's figures")
        sources.append(f"{section}: {where}")
        return {f["name"]: f for f in entry["figures"]}

    export = figures_of("export")
    cpu = export["export client CPU per game, one process"]["value"]
    backend = export["export PostgreSQL backend CPU per game, one process"]["value"]
    per_game = 1.0
    for name in export:
        if found := re.search(r"([\d,]+)-game month \(([\d,]+) candidates\)", name):
            per_game = int(found[2].replace(",", "")) / int(found[1].replace(",", ""))
    details = json.loads((HERE / "ranges-details.json").read_text())
    sources.append(f"ranges-details.json of {details['at']}")
    choices = {c["k"]: c for c in details["k_choices"]}
    small, single = choices[25_000], min(details["k_choices"], key=lambda c: c["ranges"])
    overhead = max(
        0.0, (small["seconds"] - single["seconds"]) / (small["ranges"] - single["ranges"])
    )
    if "count_seconds" in details:
        count = details["count_seconds"]["1"] / details["candidates"]
        check = details["check_seconds"]["1"] / details["candidates"]
        here = (details["count_seconds"]["1"] + details["check_seconds"]["1"]) / (
            details["count_seconds"][str(READ_CONNECTIONS)]
            + details["check_seconds"][str(READ_CONNECTIONS)]
        )
    else:  # recorded before the count and check were measured apart: one statement each
        count, check, here = (
            details["plan_seconds"] / details["candidates"],
            CHECK_SECONDS_PER_CANDIDATE,
            1.0,
        )
    wave_overhead, latency = _pool_overheads(sources)
    assembly = figures_of("assembly")
    whole = [f for n, f in assembly.items() if n.startswith("assembly of ") and "against" not in n]
    largest = max(whole, key=lambda f: _gb(f["name"]))
    sha = assembly[f"assembly SHA-256 pass (serial) at {largest['name'].split(' of ')[1]}"]
    size = _gb(largest["name"]) * 1e9
    seconds_all = size / (largest["value"] * 1e6)
    seconds_sha = size / (sha["value"] * 1e6)
    companion = figures_of("companion")
    (with_cpu,) = [f for n, f in companion.items() if n.startswith("build CPU per game with")]
    weight = companion["companion size against the archive"]
    footer = companion["companion's footer work per range (serial, in the coordinator)"]
    return Inputs(
        cpu_us=cpu,
        backend_us=backend,
        candidates_per_game=per_game,
        range_overhead_s=overhead,
        count_s_per_candidate=count,
        check_s_per_candidate=check,
        reads_speedup_here=here,
        assembly_pg_s_per_byte=max(0.0, seconds_all - seconds_sha) / size,
        sha_bytes_per_s=sha["value"] * 1e6,
        companion_range_us=max(0.0, with_cpu["value"] - with_cpu["reference"]),
        companion_size_ratio=weight["value"] / weight["reference"],
        companion_footer_s_per_range=footer["value"] / 1e3,
        sources="; ".join(sources),
        wave_overhead_s=wave_overhead,
        latency_s=latency,
    )


def _pool_overheads(sources: list[str]) -> tuple[dict[int, float], dict[int, float]]:
    """From the simulated pool's builds without kills: per wave, what the range phase took
    beyond its waves of stand-ins (``ceil(R / W)`` of them: a wave's claims, the ranges' real
    work on their few rows, the tail), and the latencies before and after it."""
    path = HERE / "pool-details.json"
    if not path.exists():
        sources.append("no pool-details.json: the pool's overhead taken as none")
        return {}, {}
    details = json.loads(path.read_text())
    sources.append(f"pool-details.json of {details['at']}")
    per_wave: dict[int, float] = {}
    latency: dict[int, float] = {}
    for sim in details["simulated"]:
        if sim["killed"]:
            continue
        waves = math.ceil(sim["ranges"] / sim["workers"])
        per_wave[sim["workers"]] = max(
            0.0, (sim["range_phase"] - waves * sim["range_seconds"]) / waves
        )
        latency[sim["workers"]] = max(0.0, sim["start_latency"]) + max(0.0, sim["end_latency"])
    return per_wave, latency


def _gb(name: str) -> float:
    found = re.search(r"([\d.]+) (GB|MB)", name)
    assert found is not None, name
    return float(found[1]) / (1 if found[2] == "GB" else 1000)
