"""Commands on the database: ``migrate``, ``export``, ``manifest``, ``seed-demo``."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from datetime import UTC, datetime
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.cli.runtime import (
    database,
    load_settings,
    month_arg,
    print_json,
    run,
    source_database,
)
from gomoku_archive.db import archive_store, source
from gomoku_archive.db.migrate import migrate
from gomoku_archive.demo.games import generate_months
from gomoku_archive.errors import ArchiveError, InvalidMonth
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import ExportResult, export_month
from gomoku_archive.jobs.planning import export_refusal, missing_months
from gomoku_archive.profile.months import Month


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "migrate",
        help="create or upgrade the service's own tables",
        description="Applies the service's SQL migrations that DATABASE_URL's database has not "
        "had yet, in order, each in its own transaction; running it again changes nothing. The "
        "game server's table is never touched.",
    )
    p.set_defaults(run=cmd_migrate)

    p = subparsers.add_parser(
        "export",
        help="build and publish month archives",
        description="Builds the archive of a closed month (or of every missing month) from "
        "GAMES_TABLE in this process, checks it and publishes it; the worker does the same on "
        "its schedule. A month whose bytes did not change is left as it is.",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--month", type=month_arg, help="one closed month, YYYY-MM")
    which.add_argument(
        "--missing", action="store_true", help="every closed month not yet published"
    )
    p.add_argument("--force", action="store_true", help="rebuild even if the month is published")
    p.set_defaults(run=cmd_export)

    p = subparsers.add_parser(
        "manifest",
        help="print the manifest JSON the API serves",
        description="Prints the manifest that /api/v1/database/manifest.json serves, read "
        "from DATABASE_URL: every published month, its file, checksum and counts.",
    )
    p.set_defaults(run=cmd_manifest)

    p = subparsers.add_parser(
        "seed-demo",
        help="fill the source table with realistic demo games",
        description="Inserts demo games (real freestyle play, out-of-scope games and broken "
        "rows of every exclusion kind) into GAMES_TABLE for the months given; the demo runs it.",
    )
    p.add_argument(
        "--from",
        dest="first",
        type=month_arg,
        required=True,
        metavar="YYYY-MM",
        help="the first month to fill",
    )
    p.add_argument(
        "--to",
        dest="last",
        type=month_arg,
        required=True,
        metavar="YYYY-MM",
        help="the last month to fill (inclusive)",
    )
    p.add_argument(
        "--games-per-month",
        type=int,
        required=True,
        metavar="N",
        help="valid games per month, on top of out-of-scope and broken rows",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=2026,
        help="the random seed: the same seed gives the same games (default 2026)",
    )
    p.set_defaults(run=cmd_seed_demo)


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = load_settings()

    async def main() -> list[str]:
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            return await migrate(conn)

    applied = run(main)
    print(f"applied {len(applied)} migration(s)" + (": " + ", ".join(applied) if applied else ""))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    settings = load_settings()
    now = datetime.now(UTC)
    if args.month is not None:
        refusal = export_refusal(args.month, first=settings.export_first_month, now=now)
        if refusal is not None:
            raise InvalidMonth(refusal)
    tty = sys.stdout.isatty()
    if tty:  # the bar and the one human line per month say what the export's log lines would
        logging.getLogger("gomoku_archive.export.month").setLevel(logging.WARNING)

    async def main() -> list[ExportResult]:
        local = LocalProcesses(
            dsn=settings.database_url,
            source_dsn=settings.source_url,
            table=settings.games_table,
            processes=settings.export_processes,
        )
        async with database(settings, max_size=3) as pool, source_database(settings, pool) as src:
            if args.missing:
                async with pool.acquire() as conn:
                    published = await archive_store.published_months(conn)
                months = missing_months(settings.export_first_month, now, published)
            else:
                months = [args.month]
            results = []
            for month in months:
                with _Bar(enabled=tty) as bar:
                    result = await export_month(
                        pool,
                        table=settings.games_table,
                        month=month,
                        force=args.force,
                        progress=bar if tty else None,
                        ranges=RangeOptions(source_pool=src, spreads=(local,)),
                    )
                results.append(result)
                if tty:
                    print(_human(result))
                else:
                    print_json(result.summary())
            return results

    results = run(main)
    if args.missing and not results and tty:
        print("every closed month is published")
    return 0


def _human(result: ExportResult) -> str:
    s = result.summary()
    if result.outcome == "skipped":
        published = s["file"] or "a zero-game month"
        return f"{s['month']}: already published as {published} (use --force to rebuild)"
    return (
        f"{s['month']}: {result.outcome} {s['file'] or '(no games, no file)'}: {s['games']} games, "
        f"{s['excluded']} of {s['candidates']} candidates excluded, {s['bytes']} bytes, "
        f"{s['seconds']} s"
    )


REDRAWS_PER_SECOND = 4


class _Bar:
    """The export's progress on a terminal: candidates done of total, and games/s."""

    def __init__(self, *, enabled: bool, console: Console | None = None) -> None:
        self._enabled = enabled
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} games/s"),
            TimeRemainingColumn(),
            transient=True,
            # No refresh thread waking to take the GIL from the export: ``advance`` redraws,
            # at most ``REDRAWS_PER_SECOND`` times a second, which is plenty to watch.
            auto_refresh=False,
            console=console,
        )
        self._task: TaskID | None = None
        self._t0 = time.monotonic()
        self._drawn = 0.0

    def __enter__(self) -> _Bar:
        if self._enabled:
            self._progress.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._enabled:
            self._progress.stop()

    def start(self, month: Month, candidates: int) -> None:
        self._t0 = time.monotonic()
        self._task = self._progress.add_task(f"export {month}", total=candidates, rate="0")
        self._progress.refresh()

    def advance(self, candidates_done: int, games: int) -> None:
        if self._task is None:
            return
        now = time.monotonic()
        rate = games / max(now - self._t0, 1e-9)
        self._progress.update(self._task, completed=candidates_done, rate=f"{rate:,.0f}")
        if now - self._drawn >= 1 / REDRAWS_PER_SECOND:
            self._drawn = now
            self._progress.refresh()


def cmd_manifest(args: argparse.Namespace) -> int:
    settings = load_settings()

    async def main() -> dict[str, object]:
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            summaries = await archive_store.manifest_summaries(conn)
        return build_manifest(summaries)

    print_json(run(main), indent=2)
    return 0


def cmd_seed_demo(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.last < args.first:
        raise ArchiveError("--to must not be before --from")
    if args.games_per_month < 0:
        raise ArchiveError("--games-per-month must be 0 or more")

    async def main() -> int:
        inserted = 0
        batch: list[tuple[object, ...]] = []
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            await source.create_reference_table(conn, settings.games_table)
            for game in generate_months(
                args.first, args.last, args.games_per_month, seed=args.seed
            ):
                batch.append(tuple(getattr(game, c) for c in source.INSERT_COLUMNS))
                if len(batch) >= 5000:
                    inserted += await source.insert_games(conn, settings.games_table, batch)
                    batch.clear()
            if batch:
                inserted += await source.insert_games(conn, settings.games_table, batch)
        return inserted

    inserted = run(main)
    print(f"inserted {inserted} rows into {settings.games_table}")
    return 0
