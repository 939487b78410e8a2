"""The ``/ops/`` handlers: the dashboard, its JSON twin, sign-in and sign-out, and the "rebuild
month" action. Each one authenticates, reads or enqueues, and answers; the decisions live in
``gomoku_archive.jobs.month_view`` and ``gomoku_archive.web.ops.auth``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import aiohttp_jinja2
from aiohttp import hdrs, web

from gomoku_archive.db.month_statuses import read_month_statuses
from gomoku_archive.errors import (
    DatabaseUnavailable,
    InvalidMonth,
    InvalidRebuildReason,
    RedisUnavailable,
)
from gomoku_archive.jobs.month_view import MonthStatus
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.jobs.queue_view import QueueSnapshot
from gomoku_archive.jobs.rebuild_reason import MAX_REASON_CHARS, rebuild_reason
from gomoku_archive.jobs.status_document import status_document
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.months import Month
from gomoku_archive.queue.connection import REDIS_ANSWER_SECONDS, REDIS_ERRORS
from gomoku_archive.queue.enqueue import enqueue_forced_export
from gomoku_archive.queue.snapshot import read_snapshot_within
from gomoku_archive.web.keys import POOL
from gomoku_archive.web.ops import auth
from gomoku_archive.web.ops.page import (
    CONFIRM_REBUILD,
    DASHBOARD,
    LOGIN,
    Dashboard,
    dashboard_context,
    login_context,
)
from gomoku_archive.web.ops.state import OPS, OpsState
from gomoku_archive.web.request_origin import client_of
from gomoku_archive.web.server.encoded import wants_gzip

log = get_logger(__name__)

_QUEUE_ERRORS: tuple[type[BaseException], ...] = (RedisUnavailable, *REDIS_ERRORS)

READ_TIMEOUT_SECONDS = 5.0
"""Bound on the dashboard's database reads, so a hung database shows as a notice (Redis has
its own, ``REDIS_ANSWER_SECONDS``)."""

_SECURITY_HEADERS = {
    hdrs.CACHE_CONTROL: "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}


def _page(
    request: web.Request, template: str, context: dict[str, Any], *, status: int = 200
) -> web.Response:
    response = aiohttp_jinja2.render_template(template, request, context, status=status)
    response.headers.update(_SECURITY_HEADERS)
    if wants_gzip(request):  # a dashboard is tens of kilobytes of HTML
        response.enable_compression(web.ContentCoding.gzip)
    response.headers[hdrs.VARY] = hdrs.ACCEPT_ENCODING
    return response


def _login(request: web.Request, message: str | None, *, status: int) -> web.Response:
    return _page(request, LOGIN, login_context(message=message), status=status)


def _json(
    document: object, *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        status=status,
        text=json.dumps(document, ensure_ascii=False),
        content_type="application/json",
        charset="utf-8",
        headers={**_SECURITY_HEADERS, **(headers or {})},
    )


def _see_other(location: str = "/ops/") -> web.Response:
    return web.Response(status=303, headers={hdrs.LOCATION: location, **_SECURITY_HEADERS})


def _wants_json(request: web.Request) -> bool:
    return auth.bearer_of(request) is not None or request.path.startswith("/ops/api/")


def _client(request: web.Request) -> str:
    return client_of(request)


def _count_wrong_try(request: web.Request) -> web.Response | None:
    """Count one wrong token (or forged session) from this client; 429 when it gave too many
    lately (RFC 6585 §4), else None. Only wrong tries are ever counted or refused: a right
    token or a valid session is checked first and always let in, so no one can lock the
    operators out, behind a proxy least of all (all clients share its address there)."""
    throttle = request.app[OPS].throttle
    client = _client(request)
    wait = throttle.retry_after(client)
    throttle.failed(client)
    if wait is None:
        return None
    log.warning("ops_auth_throttled", path=request.path, client=client, remote=request.remote)
    headers: dict[str, str] = {hdrs.RETRY_AFTER: str(max(int(wait + 0.999), 1))}
    message = "Too many wrong operator tokens from this address; try again in a minute."
    if _wants_json(request):
        body = {"error": "too_many_requests", "message": message}
        return _json(body, status=429, headers=headers)
    response = _login(request, message, status=429)
    response.headers.update(headers)
    return response


def _operator(request: web.Request) -> auth.Operator | web.Response:
    """The authenticated operator, or the 401 answer (logged, without any secret); 429 for a
    wrong token or forged session from a client that gave too many lately."""
    state = request.app[OPS]
    result = auth.authenticate(request, state.token)
    if isinstance(result, auth.Operator):
        return result
    if (
        result in ("wrong_token", "bad_session")
        and (throttled := _count_wrong_try(request)) is not None
    ):
        return throttled
    log.warning(
        "ops_auth_failed",
        reason=result,
        method=request.method,
        path=request.path,
        remote=request.remote,
        user_agent=request.headers.get(hdrs.USER_AGENT, "")[:200],
    )
    if _wants_json(request):
        return _json(
            {"error": "unauthorized", "message": "an operator token is required"},
            status=401,
            headers={hdrs.WWW_AUTHENTICATE: 'Bearer realm="gomoku-archive-ops"'},
        )
    message = {
        "missing": None,
        "wrong_token": "That token is not the operator token.",
        "bad_session": "Your session is not valid; sign in again.",
        "expired_session": "Your session has ended; sign in again.",
    }[result]
    response = _login(request, message, status=401)
    if result in ("bad_session", "expired_session"):
        auth.clear_session_cookie(response)
    return response


def _csrf_refusal(
    request: web.Request, operator: auth.Operator, submitted: object
) -> web.Response | None:
    if operator.via == "bearer":
        return None
    reason = auth.cross_site_reason(request)
    token_ok = isinstance(submitted, str) and auth.csrf_ok(
        request.app[OPS].token, operator, submitted
    )
    if reason is None and token_ok:
        return None
    log.warning(
        "ops_csrf_rejected",
        reason=reason or "missing or wrong form token",
        method=request.method,
        path=request.path,
        remote=request.remote,
    )
    message = "The request did not come from the operations page; nothing was done."
    return _login(request, message, status=403)


# --- reading ----------------------------------------------------------------------------------


async def _read_queue(state: OpsState) -> tuple[QueueSnapshot | None, str | None]:
    try:
        client = await state.queue.get()
        return await read_snapshot_within(client, REDIS_ANSWER_SECONDS), None
    except RedisUnavailable as exc:
        log.warning("ops_redis_unavailable", error=str(exc))
        return None, str(exc)


async def _read_months(
    request: web.Request, state: OpsState, now: datetime, queue: QueueSnapshot | None
) -> tuple[list[MonthStatus], str | None]:
    pool = request.app.get(POOL)
    if pool is None:
        return [], "the application has no database pool"
    first = state.settings.export_first_month
    try:
        months = await read_month_statuses(
            pool, first=first, now=now, queue=queue, within_seconds=READ_TIMEOUT_SECONDS
        )
    except DatabaseUnavailable as exc:
        log.warning("ops_database_unavailable", error=str(exc))
        return [], str(exc)
    return months, None


async def _gather(request: web.Request) -> Dashboard:
    state = request.app[OPS]
    now = datetime.now(UTC)
    queue, redis_error = await _read_queue(state)
    months, database_error = await _read_months(request, state, now, queue)
    return Dashboard(
        now=now,
        first_month=state.settings.export_first_month,
        months=months,
        queue=queue,
        redis_error=redis_error,
        database_error=database_error,
        settings=state.settings,
    )


async def dashboard(request: web.Request) -> web.StreamResponse:
    operator = _operator(request)
    if isinstance(operator, web.Response):
        return operator
    state = request.app[OPS]
    data = await _gather(request)
    flash = auth.read_flash(state.token, request.cookies.get(auth.FLASH_COOKIE))
    context = dashboard_context(data, csrf=auth.csrf_token(state.token, operator), flash=flash)
    response = _page(request, DASHBOARD, context)
    if auth.FLASH_COOKIE in request.cookies:
        response.del_cookie(auth.FLASH_COOKIE, path=auth.COOKIE_PATH)
    return response


async def status(request: web.Request) -> web.StreamResponse:
    """``GET /ops/api/status``: the dashboard as JSON (the same document as ``jobs --json``)."""
    operator = _operator(request)
    if isinstance(operator, web.Response):
        return operator
    data = await _gather(request)
    document = status_document(
        now=data.now,
        months=data.months,
        queue=data.queue,
        redis_error=data.redis_error,
        database_error=data.database_error,
    )
    return _json(document)


# --- signing in and out -----------------------------------------------------------------------


async def login(request: web.Request) -> web.StreamResponse:
    state = request.app[OPS]
    reason = auth.cross_site_reason(request)
    if reason is not None:
        log.warning(
            "ops_csrf_rejected",
            reason=reason,
            method="POST",
            path=request.path,
            remote=request.remote,
        )
        return _login(request, "Sign in from the operations page itself.", status=403)
    form = await request.post()
    submitted = form.get("token")
    if not isinstance(submitted, str) or not auth.token_matches(state.token, submitted):
        if submitted and (throttled := _count_wrong_try(request)) is not None:
            return throttled
        log.warning(
            "ops_auth_failed",
            reason="wrong_token" if submitted else "missing",
            method="POST",
            path=request.path,
            remote=request.remote,
        )
        return _login(request, "That token is not the operator token.", status=401)
    response = _see_other()
    auth.set_session_cookie(response, request, auth.new_session(state.token))
    log.info("ops_login", remote=request.remote)
    return response


async def logout(request: web.Request) -> web.StreamResponse:
    operator = _operator(request)
    if isinstance(operator, web.Response):
        return operator
    form = await request.post()
    refused = _csrf_refusal(request, operator, form.get("csrf"))
    if refused is not None:
        return refused
    response = _see_other()
    auth.clear_session_cookie(response)
    return response


# --- the rebuild action -----------------------------------------------------------------------


async def rebuild(request: web.Request) -> web.StreamResponse:
    """``POST /ops/rebuild`` with ``month=YYYY-MM`` and ``reason``: queue a forced export of
    that month, with why (``jobs.rebuild_reason``).

    Browsers (session) first get a confirmation page that asks for the reason (required: the
    operator at the form knows it, and downloaders read it when the file changes), then a 303
    back to ``/ops/`` with a one-time message; bearer clients (scripts) may leave the reason
    out, like ``gomoku-archive rebuild``, and get JSON: 202 with the job id, or an error."""
    operator = _operator(request)
    if isinstance(operator, web.Response):
        return operator
    state = request.app[OPS]
    form = await request.post()
    refused = _csrf_refusal(request, operator, form.get("csrf"))
    if refused is not None:
        return refused
    month_text = form.get("month")
    now = datetime.now(UTC)
    try:
        if not isinstance(month_text, str):
            raise InvalidMonth("say which month to rebuild: month=YYYY-MM")
        month = Month.parse(month_text.strip())
        refusal = export_refusal(month, first=state.settings.export_first_month, now=now)
        if refusal is not None:
            raise InvalidMonth(refusal)
    except InvalidMonth as exc:
        return _answer(request, operator, 400, "bad", "invalid_month", f"Not queued: {exc}")
    typed = form.get("reason")
    try:
        reason = rebuild_reason(typed if isinstance(typed, str) else None)
        if typed is not None and not isinstance(typed, str):
            raise InvalidRebuildReason("a rebuild's reason is a form field, not a file")
    except InvalidRebuildReason as exc:
        if operator.via == "bearer":
            return _answer(request, operator, 400, "bad", "invalid_reason", f"Not queued: {exc}")
        return _confirm_page(request, operator, month, typed, f"Not queued: {exc}.", status=400)
    if operator.via != "bearer" and (form.get("confirm") != "yes" or reason is None):
        # A browser's first post only asks, for the reason too (a stray click queues
        # nothing); API clients have already decided.
        if form.get("confirm") != "yes":
            return _confirm_page(request, operator, month, typed, None, status=200)
        missing = "Not queued: say why, in one line."
        return _confirm_page(request, operator, month, typed, missing, status=400)
    try:
        client = await state.queue.get()
        ticket = await enqueue_forced_export(client, month, now=now, reason=reason)
    except _QUEUE_ERRORS as exc:
        log.error("ops_rebuild_failed", month=str(month), error=str(exc))
        return _answer(
            request,
            operator,
            503,
            "bad",
            "redis_unavailable",
            f"Not queued: Redis is unreachable ({exc}).",
        )
    log.info(
        "ops_rebuild_requested",
        month=str(month),
        job_id=ticket.job_id,
        already_queued=ticket.already_queued,
        rebuild_reason=reason,
        via=operator.via,
        remote=request.remote,
    )
    if ticket.already_queued:
        text = (
            f"A rebuild of {month} was already queued as {ticket.job_id}; not queued twice "
            "(it keeps the reason it was queued with)."
        )
    else:
        text = f"Rebuild of {month} queued as {ticket.job_id}."
    extra = {
        "jobId": ticket.job_id,
        "alreadyQueued": ticket.already_queued,
        "month": str(month),
        "reason": reason,
    }
    return _answer(request, operator, 202, "ok", "queued", text, extra)


def _confirm_page(
    request: web.Request,
    operator: auth.Operator,
    month: Month,
    typed: object,
    message: str | None,
    *,
    status: int,
) -> web.Response:
    """The confirmation step: the month, the reason field (what was typed, if anything), and
    why the last try was not queued."""
    context = {
        "month": str(month),
        "csrf": auth.csrf_token(request.app[OPS].token, operator),
        "reason": typed if isinstance(typed, str) else "",
        "max_reason": MAX_REASON_CHARS,
        "message": message,
    }
    return _page(request, CONFIRM_REBUILD, context, status=status)


def _answer(
    request: web.Request,
    operator: auth.Operator,
    status: int,
    kind: str,
    code: str,
    text: str,
    extra: dict[str, Any] | None = None,
) -> web.Response:
    if operator.via == "bearer":
        body: dict[str, Any] = {"result" if status < 400 else "error": code, "message": text}
        return _json(body | (extra or {}), status=status)
    response = _see_other()
    auth.set_flash_cookie(response, request, request.app[OPS].token, kind, text)
    return response


async def slash(request: web.Request) -> web.StreamResponse:
    return web.Response(status=308, headers={hdrs.LOCATION: "/ops/", **_SECURITY_HEADERS})
