"""One ``configure_logging()`` for every process: JSON lines when stdout is not a terminal,
pretty console output when it is; the standard library's loggers (aiohttp, arq, asyncpg) are
routed through the same renderer, and contextvars carry request and job ids."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

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


def _identity(
    logger: object, name: str, event_dict: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    return event_dict


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
