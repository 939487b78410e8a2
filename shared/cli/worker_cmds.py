"""Commands around the worker: ``worker`` (run it), ``jobs`` (what it is doing, and every month's
state) and ``rebuild`` (queue a forced export of a month)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import redis.exceptions
from rich.console import Console
from rich.table import Table

from shared.cli.runtime import database, load_settings, month_arg, print_json, run
from shared.cli.worker_check import check_worker
from shared.errors import DatabaseUnavailable, InvalidMonth, RedisUnavailable
from shared.job_queue import (
    REDIS_ANSWER_SECONDS,
    enqueue_forced_export,
    queue_client,
    read_month_statuses,
    read_snapshot_within,
)
from shared.ops_view import (
    MonthStatus,
    QueueSnapshot,
    parse_health_check,
    rebuild_refusal,
    status_document,
)
from shared.settings import Settings, _mask_url
from shared.worker_liveness import DEFAULT_MAX_AGE

READ_SECONDS = 5.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "worker",
        help="run the archive worker (arq) in the foreground",
        description="Plans missing months at start-up and at 00, 06, 12 and 18 UTC, and runs "
        "export jobs. Stop it with SIGTERM or Ctrl-C.",
    )
    p.add_argument(
        "--grace",
        type=int,
        default=25,
        metavar="SECONDS",
        help="on SIGTERM, how long a running export may go on before it is cancelled "
        "(default 25; keep it below the supervisor's kill timeout)",
    )
    p.add_argument(
        "--stale-after",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="release an export job whose worker died after this long (default 30)",
    )
    p.add_argument("--burst", action="store_true", help="plan, run what is queued, then exit")
    p.add_argument(
        "--check",
        action="store_true",
        help="run no worker: exit 0 when a worker on this host reported to Redis recently, "
        "1 when none did, 3 when Redis does not answer (a liveness probe)",
    )
    p.add_argument(
        "--max-age",
        type=float,
        default=DEFAULT_MAX_AGE.total_seconds(),
        metavar="SECONDS",
        help="with --check: how old this host's last heartbeat may be "
        f"(default {DEFAULT_MAX_AGE.total_seconds():.0f})",
    )
    p.set_defaults(run=cmd_worker)

    p = subparsers.add_parser(
        "jobs", help="show queued, running and finished jobs, the worker and every month's state"
    )
    p.add_argument(
        "--json", action="store_true", help="print JSON (the default when stdout is not a terminal)"
    )
    p.set_defaults(run=cmd_jobs)

    p = subparsers.add_parser("rebuild", help="queue a forced export of a closed month")
    p.add_argument("--month", type=month_arg, required=True, metavar="YYYY-MM")
    p.set_defaults(run=cmd_rebuild)


# --- worker -----------------------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    if args.check:
        return check_worker(max_age_seconds=args.max_age)
    settings = load_settings(log_to_stdout=True)
    # The CLI is the composition root: only here does anything outside workers/ import it.
    from workers.main import run_worker

    async def main() -> None:
        try:
            await run_worker(
                settings,
                grace_seconds=args.grace,
                stale_after_seconds=args.stale_after,
                burst=args.burst,
            )
        except redis.exceptions.RedisError as exc:
            raise RedisUnavailable(
                f"cannot use Redis at {_mask_url(settings.redis_url)}: {exc}"
            ) from exc

    run(main)
    return 0


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
        _print_tables(settings, queue, months)
    for error in (redis_error, database_error):
        if error is not None:
            print(f"gomoku-archive: error: {error}", file=sys.stderr)
    return 3 if redis_error or database_error else 0


def _when(value: datetime | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        try:
            instant = datetime.fromisoformat(value)
        except ValueError:
            return value
    else:
        instant = value
    return instant.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _print_tables(
    settings: Settings, queue: QueueSnapshot | None, months: list[MonthStatus]
) -> None:
    console = Console()
    if queue is not None:
        health = parse_health_check(queue.health_check)
        if health is None and not queue.workers:
            console.print(
                "[bold red]No worker is running[/]: none reported in the last 30 seconds."
            )
        elif health is not None:
            console.print(f"Worker health: {queue.health_check}")
        for worker in queue.workers:
            console.print(
                f"  worker {worker.worker}, started {_when(worker.started_at)}, "
                f"last seen {_when(worker.last_seen)}"
            )
        _print_planner(console, queue.planner_last_run)

    table = Table(title="Months", title_justify="left")
    for column in (
        "Month",
        "State",
        "Games",
        "Excluded",
        "File",
        "Published",
        "Superseded",
        "Last failure",
        "Jobs",
    ):
        table.add_column(
            column,
            justify="right" if column in ("Games", "Excluded") else "left",
            overflow="fold",
        )
    styles = {"published": "green", "failed": "red", "missing": "yellow"}
    for status in months:
        pub, failure = status.published, status.last_failure
        table.add_row(
            status.month,
            f"[{styles.get(status.state, 'cyan')}]{status.state}[/]",
            f"{pub.games:,}" if pub else "",
            f"{pub.excluded_games:,}" if pub else "",
            (pub.file_name or "(no games)") if pub else "",
            _when(pub.published_at) if pub else "",
            str(status.superseded_versions or ""),
            f"{_when(failure.failed_at)} {failure.error or ''}" if failure else "",
            " ".join((*status.running_jobs, *status.queued_jobs)),
        )
    console.print(table)
    if queue is None:
        return

    running = Table(title="In progress", title_justify="left")
    for column in ("Job", "Function", "Worker", "Started", "Deadline", "Attempt"):
        running.add_column(column, overflow="fold")
    for job in queue.in_progress:
        info = queue.running.get(job.job_id)
        running.add_row(
            job.job_id,
            job.function,
            info.worker if info else "?",
            _when(info.started_at) if info else "",
            _when(info.deadline) if info else "",
            str(job.attempts),
        )
    _print_table(console, running)

    waiting = Table(title="Queued", title_justify="left")
    for column in ("Job", "Function", "Arguments", "Enqueued", "Scheduled", "Attempts"):
        waiting.add_column(column, overflow="fold")
    for job in queue.waiting:
        arguments = ", ".join(f"{k}={v}" for k, v in job.kwargs.items())
        waiting.add_row(
            job.job_id,
            job.function,
            arguments,
            _when(job.enqueued_at),
            _when(job.scheduled_at),
            str(job.attempts),
        )
    _print_table(console, waiting)

    results = Table(title="Recent results", title_justify="left")
    for column in ("Job", "Function", "Result", "Attempt", "Finished", "Seconds", "Details"):
        results.add_column(column, overflow="fold")
    for result in queue.results:
        details = result.error or ""
        if not details and isinstance(result.result, dict):
            details = ", ".join(
                f"{k} {result.result[k]}"
                for k in ("games", "excluded", "bytes", "reason")
                if result.result.get(k)
            )
        results.add_row(
            result.job_id,
            result.function,
            f"[{'green' if result.success else 'red'}]{result.outcome}[/]",
            str(result.attempt),
            _when(result.finished_at),
            f"{result.seconds:.1f}",
            details,
        )
    _print_table(console, results)


def _print_table(console: Console, table: Table) -> None:
    if table.row_count:
        console.print(table)
    else:
        console.print(f"{table.title}: none")


def _print_planner(console: Console, run: Mapping[str, Any] | None) -> None:
    if not run:
        console.print("Last planner run: none recorded")
        return

    def months(key: str) -> str:
        return ", ".join(run.get(key) or []) or "-"

    line = (
        f"Last planner run: {_when(run.get('at'))}; missing {months('missing')}; "
        f"enqueued {months('enqueued')}; re-enqueued {months('requeued')}; "
        f"already queued {months('alreadyQueued')}; built elsewhere {months('building')}"
    )
    console.print(line, highlight=False)
    if run.get("error"):
        console.print(f"[red]planner error: {run['error']}[/]")


# --- rebuild ----------------------------------------------------------------------------------


def cmd_rebuild(args: argparse.Namespace) -> int:
    settings = load_settings()
    now = datetime.now(UTC)
    refusal = rebuild_refusal(args.month, first=settings.export_first_month, now=now)
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
