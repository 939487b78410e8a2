"""``/api/v1/database/files/{file}`` and its ``.sha256`` companion, for an archive and for its
Parquet companion alike (both are rows of ``archives``).

The handler validates the name before any query, looks the row up (published or superseded
only), lets ``http.conditions`` decide, and streams the chosen span chunk by chunk with
``await response.write`` (which waits while the client's socket is full: backpressure). Once the
status line is out, a failure can no longer become an error status: the connection is closed
with the body short of its Content-Length, which every HTTP client reports as incomplete.

With the S3 mirror redirecting, a GET that would be answered 200 or 206 is sent (302) to the
verified copy: a presigned URL of the object, or its CDN address once an anonymous read of that
address returned the right bytes; HEAD, 304, 412 and 416 stay local, and so does a GET whose URL
could not be signed within seconds (``gomoku_archive.web.redirect_signer``). The Location
carries a signature and is never logged."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from aiohttp import hdrs, web

from gomoku_archive.companion.file_names import is_companion_name
from gomoku_archive.db import archive_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.http.conditions import Representation, strong_etag
from gomoku_archive.http.headers import (
    CHECKSUM_CONTENT_TYPE,
    IMMUTABLE_CACHE_CONTROL,
    attachment,
    file_content_type,
)
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.names import CHECKSUM_SUFFIX, checksum_line, is_archive_name
from gomoku_archive.storage.chunks import ChunkReader, ChunkReadError, ChunkSpan
from gomoku_archive.web.keys import (
    ABORTED,
    BODY_BYTES,
    DOWNLOAD_CACHE,
    METRICS,
    MIRROR_STORE,
    POOL,
    REDIRECT_SIGNER,
    STREAMING,
)
from gomoku_archive.web.server.conditional import decide, not_modified, respond_bytes, validators
from gomoku_archive.web.server.http_errors import ApiError, NotFound, database_unavailable

log = get_logger(__name__)

REDIRECT_MAX_AGE_SECONDS = 60
"""A redirect may change (the periodic check or a scrub that finds the bucket's copy gone or
wrong withdraws it at once; the bucket or CDN may move): caches keep it a minute, never the
file's year, and never longer than half a presigned URL's life."""
SEND_TIMEOUT_SECONDS = 60.0
"""How long one write may wait for a client that stopped reading (nginx's send_timeout)."""
SENDFILE_SLICE = 1024 * 1024
"""Bytes per sendfile call from the local cache: the unit SEND_TIMEOUT_SECONDS applies to."""


def archive_representation(row: ArchiveRow) -> Representation:
    assert row.sha256 is not None
    return Representation(strong_etag(row.sha256), row.bytes, row.last_modified)


def checksum_representation(row: ArchiveRow, body: bytes) -> Representation:
    assert row.sha256 is not None
    return Representation(strong_etag(f"{row.sha256}.sha256"), len(body), row.last_modified)


async def find_archive(request: web.Request, name: str) -> ArchiveRow:
    """The downloadable row of ``name``, an archive's; anything else is a 404, and a name that
    is not a well-formed archive name never reaches the database."""
    if not is_archive_name(name):
        raise NotFound("no such archive file")
    return await _downloadable(request, name)


async def find_file(request: web.Request, name: str) -> ArchiveRow:
    """As ``find_archive``, for an archive or a Parquet companion."""
    if not (is_archive_name(name) or is_companion_name(name)):
        raise NotFound("no such archive file")
    return await _downloadable(request, name)


async def _downloadable(request: web.Request, name: str) -> ArchiveRow:
    async with request.app[POOL].acquire() as conn:
        row = await archive_store.downloadable_archive(conn, name)
    if row is None or row.sha256 is None:
        raise NotFound("no such archive file")
    return row


async def archive_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["file"]
    row = await find_file(request, name)
    rep = archive_representation(row)
    caching: dict[str, str] = {hdrs.CACHE_CONTROL: IMMUTABLE_CACHE_CONTROL}
    decision = decide(request, rep)
    if decision.status == 304:
        return not_modified(rep, caching)
    if (target := await _mirror_url(request, row)) is not None:
        return _redirect(request, target)
    response = web.StreamResponse(status=decision.status)
    response.headers.update(caching)
    response.headers.update(
        {
            hdrs.CONTENT_TYPE: file_content_type(name),
            hdrs.CONTENT_DISPOSITION: attachment(name),
            hdrs.ACCEPT_RANGES: "bytes",
            **validators(rep),
        }
    )
    if decision.content_range is not None:
        response.headers[hdrs.CONTENT_RANGE] = decision.content_range
    response.content_length = decision.length
    if request.method == "HEAD":
        return response
    start, end = decision.start, decision.end
    cache = request.app.get(DOWNLOAD_CACHE)
    if cache is not None and row.sha256 is not None:
        cached = cache.open(row.sha256, row.bytes)
        if cached is not None:
            with cached:
                return await _send_file(request, response, row, cached, start, end)
        # This download streams from PostgreSQL; the next ones will find the file.
        cache.fill(request.app[POOL], row.id, row.sha256, row.bytes)
    return await _stream(request, response, row, ChunkSpan(row.bytes, start, end))


async def checksum_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["file"]
    row = await find_file(request, name)
    assert row.sha256 is not None
    body = checksum_line(name, row.sha256).encode("ascii")
    rep = checksum_representation(row, body)
    caching: dict[str, str] = {hdrs.CACHE_CONTROL: IMMUTABLE_CACHE_CONTROL}
    if decide(request, rep).status in (200, 206) and (
        target := await _mirror_url(request, row, CHECKSUM_SUFFIX)
    ):
        return _redirect(request, target)
    return respond_bytes(
        request,
        body,
        rep,
        caching=caching,
        content={
            hdrs.CONTENT_TYPE: CHECKSUM_CONTENT_TYPE,
            hdrs.CONTENT_DISPOSITION: attachment(name + CHECKSUM_SUFFIX),
        },
    )


async def _mirror_url(request: web.Request, row: ArchiveRow, suffix: str = "") -> str | None:
    """The public URL of the file's copy, when a GET should go there: verified in the bucket
    of this store and, behind a CDN, read anonymously from the address a client gets. None
    also when no URL could be signed in time (``web.redirect_signer``): served here then."""
    store = request.app.get(MIRROR_STORE)
    if store is None or request.method != hdrs.METH_GET or row.file_name is None:
        return None
    key = store.key_for(row.file_name)
    if (
        row.mirror.not_redirected_because(store.identity, store.bucket, key, store.cdn_url(key))
        is not None
    ):
        return None
    return await request.app[REDIRECT_SIGNER].url(key + suffix)


def redirect_cache_control(*, presigned: bool, presign_seconds: int) -> str:
    """A CDN address may sit in shared caches for a minute; a presigned URL only in the
    client's own, and never longer than half its life."""
    if not presigned:
        return f"public, max-age={REDIRECT_MAX_AGE_SECONDS}"
    return f"private, max-age={min(REDIRECT_MAX_AGE_SECONDS, presign_seconds // 2)}"


def _redirect(request: web.Request, location: str) -> web.Response:
    """302 (RFC 9110 §15.4.3): clients repeat the GET, Range included, at the new address."""
    store = request.app[MIRROR_STORE]
    caching = redirect_cache_control(
        presigned=not store.behind_cdn, presign_seconds=store.presign_seconds
    )
    return web.Response(status=302, headers={hdrs.LOCATION: location, hdrs.CACHE_CONTROL: caching})


async def _stream(
    request: web.Request, response: web.StreamResponse, row: ArchiveRow, span: ChunkSpan
) -> web.StreamResponse:
    """The span from the chunks in PostgreSQL, a batch per query."""
    reader = ChunkReader(request.app[POOL], row.id, span)
    # The first batch is read before the status line goes out, so a database that is down
    # gives an honest 503 rather than a broken 200.
    try:
        first = [await reader.next_batch()]
    except ChunkReadError as exc:
        log.error("download_unreadable", file=row.file_name, error=str(exc))
        if exc.database:
            raise database_unavailable() from exc
        raise ApiError("the archive cannot be read") from exc

    async def body(sent: list[int]) -> None:
        batch = first.pop()  # held here only: each sent batch is let go before the next read
        while batch is not None:
            for view in batch:
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await response.write(view)
                sent[0] += len(view)
            batch = None  # let the sent batch go before the next one is read
            try:
                batch = await reader.next_batch()
            except ChunkReadError as exc:
                raise _BodyFailed("database_error" if exc.database else "missing_chunks") from exc

    return await _deliver(request, response, row, body)


async def _send_file(
    request: web.Request,
    response: web.StreamResponse,
    row: ArchiveRow,
    file: BinaryIO,
    start: int,
    end: int,
) -> web.StreamResponse:
    """The span from the local cache's copy, by sendfile(2): the kernel copies page cache to
    the socket, as nginx does. In slices, so that a client that stops reading is cut off after
    SEND_TIMEOUT_SECONDS on one slice, as the chunk stream does per write."""
    loop = asyncio.get_running_loop()

    async def body(sent: list[int]) -> None:
        transport = request.transport
        if transport is None:
            raise ConnectionResetError("the client went away")
        offset = start
        while offset < end:
            count = min(SENDFILE_SLICE, end - offset)
            async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                # asyncio reads and writes itself where the transport has no sendfile (TLS).
                await loop.sendfile(transport, file, offset, count)
            offset += count
            sent[0] += count

    return await _deliver(request, response, row, body)


class _BodyFailed(Exception):
    """The body's source failed after the status line: ``reason`` is the abort's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _deliver(
    request: web.Request,
    response: web.StreamResponse,
    row: ArchiveRow,
    body: Callable[[list[int]], Awaitable[None]],
) -> web.StreamResponse:
    """Send the status line, then ``body`` (which counts what it sent in ``sent[0]``); map
    every way a body can stop short to an aborted connection and its log line."""
    metrics = request.app[METRICS]
    sent = [0]
    request[STREAMING] = response
    metrics.downloads_in_flight.inc()
    try:
        await response.prepare(request)
        await body(sent)
        await response.write_eof()
    except _BodyFailed as exc:
        _abort(request, response, exc.reason)
        log.error("download_aborted", file=row.file_name, sent=sent[0], error=str(exc.__cause__))
    except ConnectionError:  # the client went away (reset, closed, or lost while draining)
        _abort(request, response, "client_disconnected")
        log.info("download_client_disconnected", file=row.file_name, sent=sent[0])
    except TimeoutError:  # the client is connected but stopped reading
        _abort(request, response, "client_stalled")
        log.info("download_client_stalled", file=row.file_name, sent=sent[0])
    except asyncio.CancelledError:
        # Servers run with handler_cancellation cancel the handler when the client leaves
        # (and every server does at shutdown): same outcome, then let the cancellation on.
        _abort(request, response, "client_disconnected")
        log.info("download_cancelled", file=row.file_name, sent=sent[0])
        raise
    finally:
        metrics.downloads_in_flight.dec()
        response[BODY_BYTES] = sent[0]
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
