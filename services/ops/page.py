"""The ``/ops/`` pages as HTML: server-rendered, no scripts, every dynamic value escaped with
``html.escape``. Built from the same view data as ``gomoku-archive jobs``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from shared.archive.months import Month
from shared.errors import InvalidMonth
from shared.jobs.ops_view import (
    JobOutcome,
    MirrorFacts,
    MonthStatus,
    QueuedJob,
    QueueSnapshot,
    parse_health_check,
)
from shared.jobs.planning import export_refusal

_STYLE = """
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --muted: #5f6368; --line: #d9dce1;
  --ok: #1e7d32; --warn: #a15c00; --bad: #b3261e; --info: #1a5fb4; --box: #f4f5f7; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8ea; --bg: #16171a; --muted: #a0a4ab;
  --line: #34373d; --ok: #7bd88f; --warn: #f0b35a; --bad: #ff8a80; --info: #8ab4f8;
  --box: #23252a; } }
body { margin: 0 auto; max-width: 90rem; padding: 0 1rem 3rem; color: var(--fg);
  background: var(--bg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.5rem; margin: 1rem 0 0.3rem; }
h2 { font-size: 1.15rem; margin: 1.8rem 0 0.5rem; border-bottom: 1px solid var(--line); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td.num, th.num { text-align: right; }
.wrap { overflow-x: auto; }
.muted { color: var(--muted); }
.notice { padding: 0.6rem 0.8rem; border-left: 4px solid var(--warn); background: var(--box);
  margin: 0.8rem 0; }
.notice.bad { border-color: var(--bad); } .notice.ok { border-color: var(--ok); }
.state { font-weight: 600; }
.state-published { color: var(--ok); } .state-failed { color: var(--bad); }
.state-missing { color: var(--warn); } .state-queued, .state-building { color: var(--info); }
.error { color: var(--bad); white-space: pre-wrap; max-width: 36rem; }
code { font-size: 0.9em; }
td code { word-break: break-all; }
td:first-child, td time, .state { white-space: nowrap; }
form.inline { display: inline; margin: 0; }
button { font: inherit; padding: 0.15rem 0.6rem; cursor: pointer; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
.facts dt { font-weight: 600; } .facts dd { margin: 0; }
header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem;
  flex-wrap: wrap; }
"""


def e(value: object) -> str:
    return escape(str(value), quote=True)


def _when(value: datetime | str | None) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return e(value)
    text = value.strftime("%Y-%m-%d %H:%M:%SZ")
    return f'<time datetime="{e(value.isoformat())}">{e(text)}</time>'


def _seconds(value: float | None) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    if value < 120:
        return f"{value:.1f} s"
    return f"{value / 60:.1f} min"


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, ident: str) -> str:
    numeric = {"Games", "Candidates", "Excluded", "Bytes", "Attempts", "Attempt", "Duration"}
    head = "".join(
        f'<th scope="col"{" class=num" if h in numeric else ""}>{e(h)}</th>' for h in headers
    )
    body = []
    for row in rows:
        cells = "".join(
            f"<td{' class=num' if h in numeric else ''}>{c}</td>"
            for h, c in zip(headers, row, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    if not body:
        span = len(headers)
        body.append(f'<tr><td colspan="{span}" class="muted">none</td></tr>')
    return (
        f'<div class="wrap"><table id="{e(ident)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


REFRESH_SECONDS = 10
"""How often the dashboard reloads itself while jobs are queued or running (no JavaScript)."""


def document(title: str, body: str, *, refresh: int | None = None) -> str:
    reload = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="robots" content="noindex, nofollow">{reload}'
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>{body}</body></html>"
    )


def login_page(*, message: str | None = None) -> str:
    notice = f'<p class="notice bad" role="alert">{e(message)}</p>' if message else ""
    body = (
        "<h1>Archive operations</h1>"
        f"{notice}"
        "<p>This area is for the archive's operators. Sign in with the operator token "
        "(<code>OPS_TOKEN</code>).</p>"
        '<form method="post" action="/ops/login">'
        '<label for="token">Operator token</label> '
        '<input id="token" name="token" type="password" autocomplete="current-password" required> '
        '<button type="submit">Sign in</button></form>'
    )
    return document("Sign in · archive operations", body)


@dataclass(frozen=True, slots=True)
class Dashboard:
    now: datetime
    first_month: Month
    months: Sequence[MonthStatus]
    queue: QueueSnapshot | None
    redis_error: str | None
    database_error: str | None


def dashboard_page(data: Dashboard, *, csrf: str, flash: tuple[str, str] | None) -> str:
    parts = [
        "<header><h1>Archive operations</h1>"
        f'<span class="muted">as of {_when(data.now)} · '
        f'<form class="inline" method="post" action="/ops/logout">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<button type="submit">Sign out</button></form></span></header>'
    ]
    if flash is not None:
        kind, text = flash
        parts.append(f'<p class="notice {e(kind)}" role="status" id="flash">{e(text)}</p>')
    if data.redis_error is not None:
        parts.append(
            '<p class="notice bad" role="alert" id="redis-down">'
            "<strong>Redis unreachable:</strong> "
            f"{e(data.redis_error)}. Job queue, worker health and planner runs are not shown; "
            "the month states come from the database alone.</p>"
        )
    if data.database_error is not None:
        parts.append(
            '<p class="notice bad" role="alert" id="database-down"><strong>Database unreachable:'
            f"</strong> {e(data.database_error)}. Month states are not shown.</p>"
        )
    parts.append(_worker_section(data.queue, data.now))
    parts.append(_months_section(data, csrf))
    if data.queue is not None:
        parts.append(_jobs_sections(data.queue))
    parts.append(_rebuild_form(data, csrf))
    busy = data.queue is not None and bool(data.queue.queued)
    return document("Archive operations", "".join(parts), refresh=REFRESH_SECONDS if busy else None)


def _worker_section(queue: QueueSnapshot | None, now: datetime) -> str:
    if queue is None:
        return ""
    health = parse_health_check(queue.health_check)
    if health is None and not queue.workers:
        status = (
            '<p class="notice bad" id="no-worker">No worker is running: none has reported '
            "in the last 30 seconds, so nothing is planned or exported.</p>"
        )
    elif health is None:
        status = (
            '<p class="muted" id="health">arq\'s health record is between two refreshes; '
            "the workers below reported recently.</p>"
        )
    else:
        counts = ", ".join(f"{e(k)} {v}" for k, v in health.items())
        record = e(queue.health_check)
        status = f'<p id="health">Worker health record: <code>{record}</code> ({counts})</p>'
    workers = _table(
        ["Worker", "Started", "Last seen"],
        [
            (f"<code>{e(w.worker)}</code>", _when(w.started_at), _when(w.last_seen))
            for w in queue.workers
        ],
        ident="workers",
    )
    return "<h2>Worker</h2>" + status + workers + _planner(queue.planner_last_run)


def _planner(run: Mapping[str, Any] | None) -> str:
    if not run:
        return '<h3>Last planner run</h3><p class="muted" id="planner">No planner run recorded.</p>'

    def months(key: str) -> str:
        value = run.get(key) or []
        return ", ".join(e(m) for m in value) if value else '<span class="muted">none</span>'

    error = run.get("error")
    rows = [
        ("At", _when(run.get("at"))),
        ("Missing months", months("missing")),
        ("Enqueued", months("enqueued")),
        ("Enqueued again (after a failure)", months("requeued")),
        ("Already queued", months("alreadyQueued")),
        ("Being built elsewhere", months("building")),
        ("Duration", _seconds(run.get("seconds"))),
    ]
    if error:
        rows.append(("Error", f'<span class="error">{e(error)}</span>'))
    facts = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<h3>Last planner run</h3><dl class="facts" id="planner">{facts}</dl>'


def _months_section(data: Dashboard, csrf: str) -> str:
    rows = []
    for status in data.months:
        pub = status.published
        failure = status.last_failure
        file_cell = '<span class="muted">—</span>'
        if pub is not None:
            file_cell = f"<code>{e(pub.file_name)}</code>" if pub.file_name else "no games, no file"
            file_cell += _mirror_note(pub.mirror) if pub.file_name else ""
            if pub.built_at is not None and pub.built_at != pub.published_at:
                file_cell += f'<div class="muted">last good build {_when(pub.built_at)}</div>'
        build = None
        if pub is not None and pub.finished_at is not None:
            build = (pub.finished_at - pub.created_at).total_seconds()
        failure_cell = '<span class="muted">—</span>'
        if failure is not None:
            failure_cell = (
                f'{_when(failure.failed_at)}<div class="error">{e(failure.error or "")}</div>'
            )
        jobs = [*status.running_jobs, *status.queued_jobs]
        jobs_cell = (
            "<br>".join(f"<code>{e(j)}</code>" for j in jobs) or '<span class="muted">—</span>'
        )
        action = _rebuild_button(status.month, data, csrf)
        rows.append(
            (
                e(status.month),
                f'<span class="state state-{e(status.state)}">{e(status.state)}</span>',
                e(f"{pub.games:,}") if pub else "",
                e(f"{pub.candidate_games:,}") if pub else "",
                e(f"{pub.excluded_games:,}") if pub else "",
                file_cell,
                e(_bytes(pub.bytes)) if pub and pub.file_name else "",
                _when(pub.published_at) if pub else "",
                _seconds(build) if pub else "",
                str(status.superseded_versions),
                failure_cell,
                jobs_cell,
                action,
            )
        )
    headers = [
        "Month",
        "State",
        "Games",
        "Candidates",
        "Excluded",
        "File",
        "Bytes",
        "Published",
        "Build",
        "Superseded",
        "Last failure",
        "Jobs",
        "Action",
    ]
    return "<h2>Months</h2>" + _table(headers, rows, ident="months")


def _mirror_note(mirror: MirrorFacts) -> str:
    """The S3 copy's state under the file name (nothing when mirroring never touched it)."""
    if mirror.verified_at is not None:
        return f'<div class="muted">S3 copy verified {_when(mirror.checked_at)}</div>'
    if mirror.error is not None:
        when = _when(mirror.failed_at)
        return f'<div class="error">S3 mirror failed {when}: {e(mirror.error)}</div>'
    return ""


def _rebuild_button(month: str, data: Dashboard, csrf: str) -> str:
    try:
        parsed = Month.parse(month)
    except InvalidMonth:
        return ""
    if export_refusal(parsed, first=data.first_month, now=data.now) is not None:
        return ""
    return (
        '<form class="inline" method="post" action="/ops/rebuild">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        f'<input type="hidden" name="month" value="{e(month)}">'
        f'<button type="submit" aria-label="Rebuild {e(month)}">Rebuild</button></form>'
    )


def _job_cells(job: QueuedJob) -> tuple[str, ...]:
    args = ", ".join(f"{e(k)}={e(v)}" for k, v in job.kwargs.items())
    return (
        f"<code>{e(job.job_id)}</code>",
        e(job.function),
        f"<code>{args}</code>" if args else "",
        _when(job.enqueued_at),
        _when(job.scheduled_at),
        str(job.attempts),
    )


def _result_cells(result: JobOutcome) -> tuple[str, ...]:
    details = ""
    if result.error:
        details = f'<div class="error">{e(result.error)}</div>'
    elif isinstance(result.result, Mapping):
        r = result.result
        bits = [
            f"{k} {e(r[k])}" for k in ("games", "excluded", "bytes", "file", "reason") if r.get(k)
        ]
        details = "; ".join(bits)
    outcome = "success" if result.success else "failure"
    return (
        f"<code>{e(result.job_id)}</code>",
        e(result.function),
        f'<span class="state state-{"published" if result.success else "failed"}">'
        f"{e(outcome)}</span> ({e(result.outcome)})",
        str(result.attempt),
        _when(result.started_at),
        _when(result.finished_at),
        _seconds(result.seconds),
        details,
    )


def _jobs_sections(queue: QueueSnapshot) -> str:
    running_rows = []
    for job in queue.in_progress:
        info = queue.running.get(job.job_id)
        running_rows.append(
            (
                f"<code>{e(job.job_id)}</code>",
                e(job.function),
                f"<code>{e(info.worker)}</code>" if info else '<span class="muted">?</span>',
                _when(info.started_at) if info else "",
                _when(info.deadline) if info else "",
                e(f"{info.candidates:,}") if info else "",
                str(job.attempts),
            )
        )
    return (
        "<h2>In progress</h2>"
        + _table(
            ["Job", "Function", "Worker", "Started", "Deadline", "Candidates", "Attempt"],
            running_rows,
            ident="in-progress",
        )
        + "<h2>Queued</h2>"
        + _table(
            ["Job", "Function", "Arguments", "Enqueued", "Scheduled", "Attempts"],
            [_job_cells(j) for j in queue.waiting],
            ident="queued",
        )
        + "<h2>Recent results</h2>"
        + _table(
            ["Job", "Function", "Result", "Attempt", "Started", "Finished", "Duration", "Details"],
            [_result_cells(r) for r in queue.results],
            ident="results",
        )
    )


def _rebuild_form(data: Dashboard, csrf: str) -> str:
    return (
        "<h2>Rebuild a month</h2>"
        "<p>Queues a forced export: the month is built again from the game server's rows and "
        "published if its bytes changed (the old file stays downloadable as a superseded "
        "version).</p>"
        '<form method="post" action="/ops/rebuild" id="rebuild-form">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<label for="rebuild-month">Month</label> '
        '<input id="rebuild-month" name="month" placeholder="YYYY-MM" pattern="[0-9]{4}-[0-9]{2}" '
        'required> <button type="submit">Rebuild month</button></form>'
    )
