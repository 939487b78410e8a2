"""What every request goes through: a request id (an incoming ``X-Request-ID`` is honoured when
it looks like one), errors turned into small JSON bodies (a small page for a client that prefers
HTML, such as a browser, which ``/`` also sends to ``/database/``), one canonical access log
line, the request metrics, and the headers added just before any response goes out (CORS on the
public API, ``X-Request-ID``, ``nosniff``)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import secrets
import time
from http import HTTPStatus

import structlog
from aiohttp import hdrs, web
from aiohttp.typedefs import Handler

from gomoku_archive.errors import ArchiveError
from gomoku_archive.http.negotiation import prefers_html
from gomoku_archive.logs import ACCESS_LOGGER, get_direct_logger, get_logger
from gomoku_archive.web.keys import ABORTED, BODY_BYTES, METRICS, STREAMING
from gomoku_archive.web.manifest_cache import RELOAD_ERRORS
from gomoku_archive.web.pages.handlers import ERROR_PAGE_HEADERS, error_page
from gomoku_archive.web.server.http_errors import ApiError, database_unavailable, from_archive_error

log = get_logger(ACCESS_LOGGER)
access_log = get_direct_logger(ACCESS_LOGGER)
"""The one line per request, by the cheaper path (see ``gomoku_archive.logs.DirectLogger``)."""

REQUEST_ID = web.RequestKey("request_id", str)
CLIENT_CLOSED_REQUEST = 499
"""Logged (never sent) when a handler is cancelled before it had a response: nginx's code."""
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
EXPOSED = (
    "ETag, Content-Length, Content-Range, Content-Disposition, Accept-Ranges, Last-Modified, "
    "X-Request-ID"
)


class _RequestIds:
    """Fresh request ids, 32 hex digits: a random per-process prefix and a counter. Unique
    without a system call per request (``uuid4`` reads the kernel's random source each time,
    about a tenth of a cached manifest answer); a forked child draws its own prefix."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._prefix = secrets.token_hex(8)
        self._counter = itertools.count(1)

    def new(self) -> str:
        return f"{self._prefix}{next(self._counter) & 0xFFFF_FFFF_FFFF_FFFF:016x}"


_REQUEST_IDS = _RequestIds()


def request_id_from(header: str | None) -> str:
    """The client's id when it is a plain token (logged and echoed, so nothing else), a fresh
    one otherwise."""
    if header is not None and _REQUEST_ID_RE.fullmatch(header):
        return header
    return _REQUEST_IDS.new()


def wants_html(request: web.BaseRequest) -> bool:
    return prefers_html(", ".join(request.headers.getall(hdrs.ACCEPT, [])) or None)


def error_response(
    request: web.BaseRequest, status: int, code: str, message: str, headers: dict[str, str]
) -> web.Response:
    """The error as JSON, or as a page when the client prefers HTML; either way ``Vary:
    Accept``, since the body depends on it."""
    headers = {**headers, hdrs.VARY: "Accept"}
    if wants_html(request):
        return web.Response(
            status=status,
            body=error_page(status, code, message),
            headers={**headers, **ERROR_PAGE_HEADERS},
        )
    body = json.dumps({"error": code, "message": message}).encode()
    headers[hdrs.CONTENT_TYPE] = "application/json; charset=utf-8"
    return web.Response(status=status, body=body, headers=headers)


def _from_http_exception(request: web.BaseRequest, exc: web.HTTPException) -> web.Response:
    phrase = HTTPStatus(exc.status).phrase
    code = phrase.lower().replace(" ", "_").replace("-", "_")
    keep = {k: v for k, v in exc.headers.items() if k in (hdrs.ALLOW, hdrs.LOCATION)}
    message = {404: "no such resource", 405: "method not allowed here; see the Allow header"}
    return error_response(request, exc.status, code, message.get(exc.status, phrase), keep)


def route_of(request: web.Request) -> str:
    """The matched route's template (bounded label values), or ``unmatched``."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


@web.middleware
async def observe(request: web.Request, handler: Handler) -> web.StreamResponse:
    request_id = request_id_from(request.headers.get("X-Request-ID"))
    request[REQUEST_ID] = request_id
    started = time.perf_counter()
    # structlog's bound_contextvars, without its copies of the whole context: the id is set
    # for the request and the previous value put back after it.
    bound = structlog.contextvars.bind_contextvars(request_id=request_id)
    try:
        response = await _answer(request, handler)
    except asyncio.CancelledError:
        # The client left (servers with handler_cancellation) or the server is stopping:
        # still one access line, for the streamed response if there was one.
        gone = request.get(STREAMING) or web.Response(status=CLIENT_CLOSED_REQUEST)
        _account(request, gone, time.perf_counter() - started)
        raise
    else:
        _account(request, response, time.perf_counter() - started)
    finally:
        structlog.contextvars.reset_contextvars(**bound)
    return response


PUBLIC_METHODS = (hdrs.METH_GET, hdrs.METH_HEAD)


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method == hdrs.METH_CONNECT:
        # CONNECT's target is a host and port, not a path (RFC 9110 §9.3.6, §7.1), so no
        # route can match it and the router would say 404. No resource here is a tunnel: it
        # is 405 with Allow (§15.5.6), as every other method the routes do not take.
        return _from_http_exception(
            request, web.HTTPMethodNotAllowed(request.method, PUBLIC_METHODS)
        )
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:  # a redirect raised by aiohttp: pass it on as a plain response
            return web.Response(status=exc.status, headers=exc.headers)
        return _from_http_exception(request, exc)
    except ApiError as exc:
        error = exc
    except ArchiveError as exc:
        log.error("request_failed", error=f"{type(exc).__name__}: {exc}")
        error = from_archive_error(exc)
    except RELOAD_ERRORS as exc:
        log.error("request_database_error", error=f"{type(exc).__name__}: {exc}")
        error = database_unavailable()
    except Exception:
        log.exception("request_crashed")
        error = ApiError("internal error")
    return error_response(request, error.status, error.code, error.message, error.headers)


def _account(request: web.Request, response: web.StreamResponse, duration: float) -> None:
    route = route_of(request)
    if BODY_BYTES in response:
        sent = response[BODY_BYTES]
    elif request.method == "HEAD" or response.status in (204, 304):
        sent = 0
    else:
        sent = response.content_length or 0
    method, status = request.method, response.status
    request.app[METRICS].count_request(route, method, status, duration, sent)
    aborted = response.get(ABORTED)
    duration_ms = round(duration * 1000, 2)
    access_log.http_request(method, route, request.path, status, sent, duration_ms, aborted)


async def add_common_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: runs for every response, streamed ones included."""
    if REQUEST_ID in request:
        response.headers["X-Request-ID"] = request[REQUEST_ID]
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if request.path.startswith("/api/"):
        response.headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = "*"
        response.headers[hdrs.ACCESS_CONTROL_EXPOSE_HEADERS] = EXPOSED
