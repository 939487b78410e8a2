"""Operators' commands around the job queue: ``jobs`` (what the worker is doing, and every
month's state) and ``rebuild`` (queue a forced export of a month). ``worker`` itself is
``gomoku_archive.worker.worker_cmd``."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from rich.console import Console

from gomoku_archive.cli import jobs_view
from gomoku_archive.db.month_statuses import read_month_statuses
from gomoku_archive.errors import DatabaseUnavailable, InvalidMonth, RedisUnavailable
from gomoku_archive.jobs.month_view import MonthStatus, without_orphans
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.jobs.queue_view import QueueSnapshot
from gomoku_archive.jobs.status_document import status_document
from gomoku_archive.queue.connection import REDIS_ANSWER_SECONDS, queue_client
from gomoku_archive.queue.enqueue import enqueue_forced_export
from gomoku_archive.queue.snapshot import read_snapshot_within
from gomoku_archive.runtime import database, load_settings, month_arg, print_json, run

READ_SECONDS = 5.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "jobs",
        help="show queued, running and finished jobs, the worker and every month's state",
        description="Reads the job queue from REDIS_URL and the months from DATABASE_URL and "
        "shows what /ops/ shows: the workers, every month's state, and the queued, running and "
        "recent jobs. Exit status 3 when either could not be read.",
    )
    p.add_argument(
        "--json", action="store_true", help="print JSON (the default when stdout is not a terminal)"
    )
    p.set_defaults(run=cmd_jobs)

    p = subparsers.add_parser(
        "rebuild",
        help="queue a forced export of a closed month",
        description="Queues a forced export of a closed month for the worker and prints the "
        "job's id. The month is built again and published only if its bytes changed; the "
        "current file stays downloadable as a superseded version.",
    )
    p.add_argument(
        "--month",
        type=month_arg,
        required=True,
        metavar="YYYY-MM",
        help="the closed month to rebuild",
    )
    p.set_defaults(run=cmd_rebuild)


# --- jobs -------------------------------------------------------------------------------------


def cmd_jobs(args: argparse.Namespace) -> int:
    settings = load_settings()
    now = datetime.now(UTC)

    async def main() -> tuple[QueueSnapshot | None, str | None, list[MonthStatus], str | None]:
        queue: QueueSnapshot | None = None
        redis_error = database_error = None
        try:
            async with queue_client(settings.redis_url) as client:
                queue = await read_snapshot_within(client, REDIS_ANSWER_SECONDS)
        except RedisUnavailable as exc:
            redis_error = str(exc)
        months: list[MonthStatus] = []
        try:
            async with database(settings, max_size=1) as pool:
                months = await read_month_statuses(
                    pool,
                    first=settings.export_first_month,
                    now=now,
                    queue=queue,
                    within_seconds=READ_SECONDS,
                )
        except DatabaseUnavailable as exc:
            database_error = str(exc)
        if queue is not None and database_error is None:
            queue = without_orphans(queue, months)
        return queue, redis_error, months, database_error

    queue, redis_error, months, database_error = run(main)
    if args.json or not sys.stdout.isatty():
        document = status_document(
            now=now,
            months=months,
            queue=queue,
            redis_error=redis_error,
            database_error=database_error,
        )
        print_json(document, indent=2)
    else:
        jobs_view.render(Console(), queue, months)
    for error in (redis_error, database_error):
        if error is not None:
            print(f"gomoku-archive: error: {error}", file=sys.stderr)
    return 3 if redis_error or database_error else 0


# --- rebuild ----------------------------------------------------------------------------------


def cmd_rebuild(args: argparse.Namespace) -> int:
    settings = load_settings()
    now = datetime.now(UTC)
    refusal = export_refusal(args.month, first=settings.export_first_month, now=now)
    if refusal is not None:
        raise InvalidMonth(refusal)

    async def main() -> tuple[str, bool]:
        async with queue_client(settings.redis_url) as client:
            ticket = await enqueue_forced_export(client, args.month, now=now)
        return ticket.job_id, ticket.already_queued

    job_id, already_queued = run(main)
    print(job_id)
    if already_queued:
        print(
            f"gomoku-archive: a rebuild of {args.month} was already waiting; not queued twice",
            file=sys.stderr,
        )
    return 0
