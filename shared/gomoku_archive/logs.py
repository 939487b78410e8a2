"""One ``configure_logging()`` for every process: JSON lines when stdout is not a terminal,
pretty console output when it is; the standard library's loggers (aiohttp, arq, asyncpg) are
routed through the same renderer, and contextvars carry request and job ids."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog

_SHARED_PROCESSORS: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure_logging(
    *, fmt: str = "json", level: str = "INFO", stream: TextIO | None = None
) -> None:
    """Route structlog and the standard library through one renderer.

    Long-running processes (serve, worker) log to stdout; commands whose stdout is data
    (manifest, ``--json``) pass ``sys.stderr``.
    """
    renderer: structlog.typing.Processor
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    else:
        renderer = structlog.processors.JSONRenderer()

    structlog.configure(
        processors=[
            *_SHARED_PROCESSORS,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED_PROCESSORS,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info if fmt == "json" else _identity,
            renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stdout if stream is None else stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # aiohttp's own access logger is replaced by our canonical request line.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # boto3's debug output carries request signatures and credential ids: never, at any level.
    for name in ("boto3", "botocore", "s3transfer", "urllib3"):
        logging.getLogger(name).setLevel(logging.WARNING)
    _direct.clear()
    _direct_setup[:] = [(handler, logging.getLevelName(level.upper()), fmt, renderer)]


_direct: dict[str, structlog.typing.FilteringBoundLogger] = {}
_direct_setup: list[tuple[logging.StreamHandler[TextIO], int, str, structlog.typing.Processor]] = []


class DirectLogger:
    """A logger for a line per request: the same fields, level and stream as every other
    logger, without the standard library's records, handler and formatter, which cost about
    twice as much as the line itself (structlog's "performance" page advises the same). Before
    ``configure_logging`` runs (tests that never call it) it is the ordinary logger."""

    def __init__(self, name: str) -> None:
        self._name = name

    def info(self, event: str, **fields: Any) -> None:
        if not _direct_setup:
            get_logger(self._name).info(event, **fields)
            return
        handler, level, fmt, _ = _direct_setup[0]
        if level > logging.INFO:
            return
        if fmt != "json":  # a terminal: structlog's own chain, pretty output
            logger = _direct.get(self._name) or _direct.setdefault(
                self._name, _direct_logger(self._name)
            )
            logger.info(event, **fields)
            return
        _write(handler, json_line(self._name, "info", event, fields))

    def http_request(
        self,
        method: str,
        route: str,
        path: str,
        status: int,
        sent: int,
        duration_ms: float,
        aborted: str | None = None,
    ) -> None:
        """``info("http_request", method=..., route=..., path=..., status=..., bytes=sent,
        duration_ms=..., aborted=...)`` (``aborted`` only when not None), the access line:
        written by one format string when its values and the bound context (only the request
        id) are plain, which is every ordinary request."""
        if not _direct_setup or _direct_setup[0][2] != "json" or aborted is not None:
            fields = _access_fields(method, route, path, status, sent, duration_ms)
            if aborted is not None:
                fields["aborted"] = aborted
            self.info("http_request", **fields)
            return
        handler, level, _, _ = _direct_setup[0]
        if level > logging.INFO:
            return
        _write(handler, request_line(self._name, method, route, path, status, sent, duration_ms))


_PLAIN_TEXT = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII but '"' and '\\': what json.dumps writes as it is."""
_ENCODER = json.JSONEncoder(default=repr)
"""What ``json.dumps(value, default=repr)`` builds on every call."""


def request_line(
    name: str, method: str, route: str, path: str, status: int, sent: int, duration_ms: float
) -> str:
    """``json_line(name, "info", "http_request", {"method": method, "route": route, "path":
    path, "status": status, "bytes": sent, "duration_ms": duration_ms})``, by one format string
    when the texts are plain, the numbers ordinary and the context binds a plain request id and
    nothing else (a unit test holds the two equal); by ``json_line`` otherwise."""
    context = structlog.contextvars.get_contextvars()
    request_id = context.get("request_id")
    if (
        len(context) == 1
        and type(request_id) is str
        and type(status) is int
        and type(sent) is int
        and type(duration_ms) is float
        and math.isfinite(duration_ms)
        and _PLAIN_TEXT.fullmatch(f"{name}{method}{route}{path}{request_id}")
    ):
        return (
            f'{{"method": "{method}", "route": "{route}", "path": "{path}", "status": {status}, '
            f'"bytes": {sent}, "duration_ms": {duration_ms!r}, "event": "http_request", '
            f'"request_id": "{request_id}", "level": "info", "logger": "{name}", '
            f'"timestamp": "{_timestamp()}"}}\n'
        )
    fields = _access_fields(method, route, path, status, sent, duration_ms)
    return json_line(name, "info", "http_request", fields)


def _access_fields(
    method: str, route: str, path: str, status: int, sent: int, duration_ms: float
) -> dict[str, Any]:
    """The access line's fields, in the order it writes them."""
    return {
        "method": method,
        "route": route,
        "path": path,
        "status": status,
        "bytes": sent,
        "duration_ms": duration_ms,
    }


def _timestamp() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _write(handler: logging.StreamHandler[TextIO], line: str) -> None:
    with handler.lock or contextlib.nullcontext():  # never inside another logger's line
        handler.stream.write(line)
        handler.stream.flush()


def json_line(name: str, level: str, event: str, fields: dict[str, Any]) -> str:
    """The JSON line ``configure_logging``'s processors render for this event, built directly:
    fields, event, the context's variables (never overriding a field), level, logger name and
    timestamp, in that order, serialised as JSONRenderer does. Equivalent to the structlog
    chain of ``_direct_logger``; a unit test holds the two equal."""
    event_dict: dict[str, Any] = {**fields, "event": event}
    structlog.contextvars.merge_contextvars(None, level, event_dict)
    event_dict["level"] = level
    event_dict["logger"] = name
    event_dict["timestamp"] = _timestamp()
    return _ENCODER.encode(event_dict) + "\n"


def _direct_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    handler, level, fmt, renderer = _direct_setup[0]

    def add_logger_name(
        logger: object, method: str, event_dict: structlog.typing.EventDict
    ) -> structlog.typing.EventDict:
        event_dict["logger"] = name  # what structlog.stdlib.add_logger_name gives the others
        return event_dict

    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info if fmt == "json" else _identity,
        renderer,
    ]
    logger: structlog.typing.FilteringBoundLogger = structlog.wrap_logger(
        structlog.WriteLogger(handler.stream),
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=True,
    )
    return logger


ACCESS_LOGGER = "gomoku_archive.access"
"""The logger of the one line per HTTP request (and of requests too broken to parse)."""


def get_direct_logger(name: str) -> DirectLogger:
    """See ``DirectLogger``: for the access line only; everything else uses ``get_logger``."""
    return DirectLogger(name)


def _identity(
    logger: object, name: str, event_dict: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    return event_dict


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
