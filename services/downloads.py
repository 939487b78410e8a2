"""``/api/v1/database/files/{file}`` and its ``.sha256`` companion.

The handler validates the name before any query, looks the row up (published or superseded
only), lets ``shared.http_conditions`` decide, and streams the chosen span chunk by chunk with
``await response.write`` (which waits while the client's socket is full: backpressure). Once the
status line is out, a failure can no longer become an error status: the connection is closed
with the body short of its Content-Length, which every HTTP client reports as incomplete."""

from __future__ import annotations

import asyncio

from aiohttp import hdrs, web

from services.chunks import ChunkReader, ChunkReadError, ChunkSpan
from services.conditional import decide, not_modified, respond_bytes, validators
from services.errors import ApiError, NotFound, ServiceUnavailable
from services.keys import ABORTED, BODY_BYTES, METRICS, POOL, STREAMING
from shared.archive_names import checksum_line, is_archive_name
from shared.db import archive_store
from shared.db.archive_store import ArchiveRow
from shared.http_conditions import Representation, strong_etag
from shared.logs import get_logger

log = get_logger(__name__)

IMMUTABLE = "public, max-age=31536000, immutable"
"""File names embed their content hash: a URL's bytes never change."""
SEND_TIMEOUT_SECONDS = 60.0
"""How long one write may wait for a client that stopped reading (nginx's send_timeout)."""


def archive_representation(row: ArchiveRow) -> Representation:
    assert row.sha256 is not None
    return Representation(strong_etag(row.sha256), row.bytes, row.published_at)


def checksum_representation(row: ArchiveRow, body: bytes) -> Representation:
    assert row.sha256 is not None
    return Representation(strong_etag(f"{row.sha256}.sha256"), len(body), row.published_at)


async def find_archive(request: web.Request, name: str) -> ArchiveRow:
    """The downloadable row of ``name``; anything else is a 404, and a name that is not a
    well-formed archive name never reaches the database."""
    if not is_archive_name(name):
        raise NotFound("no such archive file")
    async with request.app[POOL].acquire() as conn:
        row = await archive_store.downloadable_archive(conn, name)
    if row is None or row.sha256 is None:
        raise NotFound("no such archive file")
    return row


async def archive_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["file"]
    row = await find_archive(request, name)
    rep = archive_representation(row)
    caching: dict[str, str] = {hdrs.CACHE_CONTROL: IMMUTABLE}
    decision = decide(request, rep)
    if decision.status == 304:
        return not_modified(rep, caching)
    response = web.StreamResponse(status=decision.status)
    response.headers.update(caching)
    response.headers.update(
        {
            hdrs.CONTENT_TYPE: "application/gzip",
            hdrs.CONTENT_DISPOSITION: f'attachment; filename="{name}"',
            hdrs.ACCEPT_RANGES: "bytes",
            **validators(rep),
        }
    )
    if decision.content_range is not None:
        response.headers[hdrs.CONTENT_RANGE] = decision.content_range
    response.content_length = decision.length
    if request.method == "HEAD":
        return response
    return await _stream(request, response, row, ChunkSpan(row.bytes, decision.start, decision.end))


async def checksum_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["file"]
    row = await find_archive(request, name)
    assert row.sha256 is not None
    body = checksum_line(name, row.sha256).encode("ascii")
    return respond_bytes(
        request,
        body,
        checksum_representation(row, body),
        caching={hdrs.CACHE_CONTROL: IMMUTABLE},
        content={hdrs.CONTENT_TYPE: "text/plain; charset=utf-8"},
    )


async def _stream(
    request: web.Request, response: web.StreamResponse, row: ArchiveRow, span: ChunkSpan
) -> web.StreamResponse:
    metrics = request.app[METRICS]
    reader = ChunkReader(request.app[POOL], row.id, span)
    # The first batch is read before the status line goes out, so a database that is down
    # gives an honest 503 rather than a broken 200.
    try:
        batch = await reader.next_batch()
    except ChunkReadError as exc:
        log.error("download_unreadable", file=row.file_name, error=str(exc))
        if exc.database:
            raise ServiceUnavailable(
                "the archive database is unavailable; try again shortly",
                headers={hdrs.RETRY_AFTER: "5"},
            ) from exc
        raise ApiError("the archive cannot be read") from exc

    sent = 0
    request[STREAMING] = response
    metrics.downloads_in_flight.inc()
    try:
        await response.prepare(request)
        while batch is not None:
            for piece in batch:
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await response.write(piece)
                sent += len(piece)
            batch = None  # let the sent batch go before the next one is read
            try:
                batch = await reader.next_batch()
            except ChunkReadError as exc:
                _abort(request, response, "database_error" if exc.database else "missing_chunks")
                log.error("download_aborted", file=row.file_name, sent=sent, error=str(exc))
                return response
        await response.write_eof()
    except ConnectionError:  # the client went away (reset, closed, or lost while draining)
        _abort(request, response, "client_disconnected")
        log.info("download_client_disconnected", file=row.file_name, sent=sent)
    except TimeoutError:  # the client is connected but stopped reading
        _abort(request, response, "client_stalled")
        log.info("download_client_stalled", file=row.file_name, sent=sent)
    except asyncio.CancelledError:
        # Servers run with handler_cancellation cancel the handler when the client leaves
        # (and every server does at shutdown): same outcome, then let the cancellation on.
        _abort(request, response, "client_disconnected")
        log.info("download_cancelled", file=row.file_name, sent=sent)
        raise
    finally:
        metrics.downloads_in_flight.dec()
        response[BODY_BYTES] = sent
    return response


def _abort(request: web.Request, response: web.StreamResponse, reason: str) -> None:
    """Close the connection under a body that is short of its Content-Length: never let a
    truncated file look complete, and never reuse the connection. Bytes already queued still
    go out (a client can resume from them with a Range), except to a client that stopped
    reading, whose queue is dropped."""
    response[ABORTED] = reason
    request.app[METRICS].downloads_aborted.labels(reason).inc()
    response.force_close()
    if request.transport is not None:
        if reason == "client_stalled":
            request.transport.abort()
        else:
            request.transport.close()
