"""``gomoku-archive jobs`` on a terminal: the workers, every month, and the jobs, as short
entries (a head line, then indented details that wrap at word boundaries) rather than wide
tables, so that file names and job ids stay whole on an 80-column terminal."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.text import Text

from gomoku_archive.jobs.month_view import MonthStatus, describe_ranges, describe_running
from gomoku_archive.jobs.queue_view import JobOutcome, QueuedJob, QueueSnapshot, parse_health_check

HEAD_INDENT = 2
INDENT = 6
_STATE_STYLES = {"published": "green", "failed": "red", "missing": "yellow"}


def render(console: Console, queue: QueueSnapshot | None, months: list[MonthStatus]) -> None:
    """Everything ``jobs`` shows; ``queue`` is None when Redis could not be read."""
    if queue is not None:
        _workers(console, queue)
    _months(console, months)
    if queue is not None:
        _jobs(console, "In progress", [_running(queue, job) for job in queue.in_progress])
        _jobs(console, "Queued", [_waiting(job) for job in queue.waiting])
        _jobs(console, "Recent results", [_result(result) for result in queue.results])


def when(value: datetime | str | None) -> str:
    """A UTC instant as ``YYYY-MM-DD HH:MM:SS``; "-" when there is none."""
    if value is None:
        return "-"
    if isinstance(value, str):
        try:
            instant = datetime.fromisoformat(value)
        except ValueError:
            return value
    else:
        instant = value
    return instant.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _entry(console: Console, head: Text | str, details: Iterable[str]) -> None:
    console.print(Text(" " * HEAD_INDENT) + Text(head) if isinstance(head, str) else head)
    for line in details:
        if line:
            # Word-wrapped here, never inside a word, a file name or a job id (nor at hyphens).
            wrapped = textwrap.fill(
                line,
                width=max(console.width, 40),
                initial_indent=" " * INDENT,
                subsequent_indent=" " * INDENT,
                break_long_words=False,
                break_on_hyphens=False,
            )
            console.print(Text(wrapped), highlight=False, soft_wrap=True)


def _workers(console: Console, queue: QueueSnapshot) -> None:
    console.print(Text("Workers", style="bold"))
    if parse_health_check(queue.health_check) is None and not queue.workers:
        console.print("  [bold red]No worker is running[/]: none reported in the last 30 seconds.")
    elif queue.health_check:
        _entry(console, "health check", [queue.health_check])
    for worker in queue.workers:
        _entry(
            console,
            f"worker {worker.worker}",
            [f"started {when(worker.started_at)}, last seen {when(worker.last_seen)}"],
        )
    _planner(console, queue.planner_last_run)


def _planner(console: Console, run: Mapping[str, Any] | None) -> None:
    if not run:
        console.print("  Last planner run: none recorded")
        return

    def months(key: str) -> str:
        return ", ".join(run.get(key) or []) or "-"

    _entry(
        console,
        f"last planner run {when(run.get('at'))}",
        [
            f"missing {months('missing')}; enqueued {months('enqueued')}; re-enqueued "
            f"{months('requeued')}; already queued {months('alreadyQueued')}; built elsewhere "
            f"{months('building')}",
            f"planner error: {run['error']}" if run.get("error") else "",
        ],
    )


def _months(console: Console, months: list[MonthStatus]) -> None:
    console.print(Text("Months", style="bold"))
    for status in months:
        head = Text(" " * HEAD_INDENT + f"{status.month}  ")
        head.append(status.state, style=_STATE_STYLES.get(status.state, "cyan"))
        details = []
        pub = status.published
        if pub is not None:
            head.append(f"  {pub.games:,} games, {pub.excluded_games:,} excluded")
            details.append(pub.file_name or "(no games, no file)")
            details.append(f"published {when(pub.published_at)}")
            if pub.built_at is not None and pub.built_at != pub.published_at:
                details[-1] += f", last good build {when(pub.built_at)}"
            if status.superseded_versions:
                details[-1] += f"; {status.superseded_versions} earlier file(s) still served"
        if status.last_failure is not None:
            failure = status.last_failure
            details.append(f"last failure {when(failure.failed_at)}: {failure.error or ''}")
        if status.ranges is not None:
            now = datetime.now(UTC)
            details.append(describe_ranges(status.ranges, now))
            details += [describe_running(held, now) for held in status.running_ranges]
        jobs = (*status.running_jobs, *status.queued_jobs)
        if jobs:
            details.append("jobs: " + " ".join(jobs))
        _entry(console, head, details)


def _jobs(console: Console, title: str, entries: list[tuple[str, list[str]]]) -> None:
    if not entries:
        console.print(f"{title}: none")
        return
    console.print(Text(title, style="bold"))
    for head, details in entries:
        _entry(console, head, details)


def _running(queue: QueueSnapshot, job: QueuedJob) -> tuple[str, list[str]]:
    info = queue.running.get(job.job_id)
    where = (
        f"{info.phase} on {info.worker}, started {when(info.started_at)}, "
        f"deadline {when(info.deadline)}"
        if info
        else "on an unknown worker"
    )
    return job.job_id, [f"{job.function} {where}, attempt {job.attempts}"]


def _waiting(job: QueuedJob) -> tuple[str, list[str]]:
    arguments = ", ".join(f"{k}={v}" for k, v in job.kwargs.items())
    return job.job_id, [
        f"{job.function}({arguments}), enqueued {when(job.enqueued_at)}, scheduled "
        f"{when(job.scheduled_at)}, attempts {job.attempts}"
    ]


def _result(result: JobOutcome) -> tuple[str, list[str]]:
    details = result.error or ""
    if not details and isinstance(result.result, Mapping):
        details = ", ".join(
            f"{k} {result.result[k]}"
            for k in ("games", "excluded", "bytes", "uploaded_bytes", "reason")
            if result.result.get(k)
        )
    return result.job_id, [
        f"{result.function}: {result.outcome} in {result.seconds:.1f} s, "
        f"attempt {result.attempt}, finished {when(result.finished_at)}",
        details,
    ]
