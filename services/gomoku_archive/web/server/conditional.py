"""The aiohttp side of ``http.conditions``: read the request's conditional headers, and
answer an in-memory representation (manifest, checksum file, pages) per the decision."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import hdrs, web

from gomoku_archive.http.conditions import (
    Decision,
    Representation,
    RequestConditions,
    evaluate,
    format_http_date,
)
from gomoku_archive.web.server.http_errors import PreconditionFailed, RangeNotSatisfiable


def _field(request: web.BaseRequest, name: str) -> str | None:
    values = request.headers.getall(name, [])
    return ", ".join(values) if values else None


def conditions(request: web.BaseRequest) -> RequestConditions:
    return RequestConditions(
        method=request.method,
        if_match=_field(request, hdrs.IF_MATCH),
        if_none_match=_field(request, hdrs.IF_NONE_MATCH),
        if_modified_since=_field(request, hdrs.IF_MODIFIED_SINCE),
        if_unmodified_since=_field(request, hdrs.IF_UNMODIFIED_SINCE),
        range=_field(request, hdrs.RANGE),
        if_range=_field(request, hdrs.IF_RANGE),
    )


def validators(rep: Representation) -> dict[str, str]:
    """ETag and Last-Modified: sent on 200, 206 and 304 alike."""
    found: dict[str, str] = {"ETag": str(rep.etag)}  # hdrs.ETAG is spelt "Etag"
    if rep.last_modified is not None:
        found[hdrs.LAST_MODIFIED] = format_http_date(rep.last_modified)
    return found


def decide(request: web.BaseRequest, rep: Representation) -> Decision:
    """The decision, with 412 and 416 raised as errors (the middleware writes their bodies)."""
    decision = evaluate(conditions(request), rep)
    if decision.status == 412:
        raise PreconditionFailed("a precondition of the request does not hold")
    if decision.status == 416:
        assert decision.content_range is not None
        raise RangeNotSatisfiable(
            "the requested range is not satisfiable",
            headers={hdrs.CONTENT_RANGE: decision.content_range},
        )
    return decision


def not_modified(rep: Representation, caching: Mapping[str, str]) -> web.Response:
    """304: the validators and the caching headers a 200 would carry (§15.4.5), no body."""
    return web.Response(status=304, headers={**caching, **validators(rep)})


def respond_bytes(
    request: web.BaseRequest,
    body: bytes,
    rep: Representation,
    *,
    caching: Mapping[str, str],
    content: Mapping[str, str],
) -> web.Response:
    """Answer GET/HEAD for an in-memory body: 200, 206 (one range), 304, 412 or 416.

    ``caching`` (Cache-Control, Vary) goes on 304s too; ``content`` (Content-Type, ...) only on
    responses that describe a body."""
    decision = decide(request, rep)
    if decision.status == 304:
        return not_modified(rep, caching)
    headers: dict[str, str] = {**caching, **content, **validators(rep)}
    if rep.ranges:
        headers[hdrs.ACCEPT_RANGES] = "bytes"
    if decision.content_range is not None:
        headers[hdrs.CONTENT_RANGE] = decision.content_range
    return web.Response(
        status=decision.status, body=body[decision.start : decision.end], headers=headers
    )
