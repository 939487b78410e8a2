"""HTTP-facing error types. Handlers raise them; ``web.middleware`` turns every one of them
(and the project's own ``errors`` types) into a small JSON body, so no handler formats an
error response itself."""

from __future__ import annotations

from collections.abc import Mapping

from gomoku_archive.errors import ArchiveError, DatabaseUnavailable


class ApiError(Exception):
    """An error answer: status, a stable machine code and a sentence for people."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers: dict[str, str] = dict(headers or {})


class NotFound(ApiError):
    status = 404
    code = "not_found"


class PreconditionFailed(ApiError):
    status = 412
    code = "precondition_failed"


class RangeNotSatisfiable(ApiError):
    status = 416
    code = "range_not_satisfiable"


class ServiceUnavailable(ApiError):
    status = 503
    code = "unavailable"


RETRY_AFTER_SECONDS = 5


def database_unavailable() -> ServiceUnavailable:
    """The one answer to "PostgreSQL is away": 503, and when to try again."""
    return ServiceUnavailable(
        "the archive database is unavailable; try again shortly",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def from_archive_error(exc: ArchiveError) -> ApiError:
    """The project's own errors as API errors; their messages may name internals (a DSN, a
    table), so a fixed sentence is sent instead and the original is logged."""
    if isinstance(exc, DatabaseUnavailable):
        return database_unavailable()
    return ApiError("internal error")
