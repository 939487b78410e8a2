"""Requests aiohttp cannot parse, logged as one WARNING line each.

aiohttp's low-level server answers a malformed request (bad request line, invalid or oversized
header, broken chunked body) with 400 itself, before any middleware runs, and reports it through
``RequestHandler.handle_error`` as ``logger.exception`` on ``aiohttp.server``: ERROR with a full
traceback. Anyone can send such bytes, so that would let anyone flood the error log. A filter on
that logger turns each such record into one ``http_bad_request`` warning (client address,
status, the parser's message cut short) and drops the original. Every other record of the
logger, a crashed handler's 500 included, keeps its level and traceback.
"""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError

from gomoku_archive.logs import ACCESS_LOGGER, get_logger

BAD_REQUEST_EVENT = "http_bad_request"
SERVER_LOGGER = "aiohttp.server"
_MAX_ERROR_CHARS = 200

log = get_logger(ACCESS_LOGGER)


def parse_error_of(record: logging.LogRecord) -> HttpProcessingError | None:
    """The request-parsing error a log record reports, or None when it reports anything else."""
    error = record.exc_info[1] if record.exc_info else None
    return error if isinstance(error, HttpProcessingError) else None


class BadRequestsAsWarnings(logging.Filter):
    """Installed on ``aiohttp.server`` by ``install``; see the module docstring."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = parse_error_of(record)
        if error is None:
            return True
        args = record.args
        remote = args[0] if isinstance(args, tuple) and args else None
        message = " ".join(str(error.message).split())  # one line, whatever the client sent
        if len(message) > _MAX_ERROR_CHARS:
            message = message[: _MAX_ERROR_CHARS - 3] + "..."
        log.warning(
            BAD_REQUEST_EVENT,
            remote=remote if isinstance(remote, str) else None,
            status=error.code or 400,
            error=f"{type(error).__name__}: {message}",
        )
        return False


def install() -> None:
    """Add the filter to aiohttp's server logger, once however many apps are created."""
    server = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(existing, BadRequestsAsWarnings) for existing in server.filters):
        server.addFilter(BadRequestsAsWarnings())
