"""``gomoku-archive export``: build and publish month archives in this process (the worker does
the same on its schedule), with a progress bar on a terminal and one JSON line a month
otherwise."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import UTC, datetime

from gomoku_archive.db import archive_store
from gomoku_archive.errors import InvalidMonth
from gomoku_archive.export import month_reads
from gomoku_archive.export.coordinator import RangeOptions
from gomoku_archive.export.local_ranges import LocalProcesses
from gomoku_archive.export.month import ExportResult, export_month
from gomoku_archive.export.progress_bar import ExportProgressBar
from gomoku_archive.jobs.planning import export_refusal, missing_months
from gomoku_archive.runtime import (
    database,
    load_settings,
    month_arg,
    print_json,
    run,
    source_database,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        # The lock holder and a range's reader, and the month's count and check on up to
        # READ_CONNECTIONS source connections at once.
        readers = month_reads.READ_CONNECTIONS
        async with (
            database(settings, max_size=2 + readers) as pool,
            source_database(settings, pool, max_size=readers) as src,
        ):
            if args.missing:
                async with pool.acquire() as conn:
                    published = await archive_store.published_months(conn)
                months = missing_months(settings.export_first_month, now, published)
            else:
                months = [args.month]
            results = []
            for month in months:
                with ExportProgressBar(enabled=tty) as bar:
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
