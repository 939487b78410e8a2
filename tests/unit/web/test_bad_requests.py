"""The filter on aiohttp's server logger: a request-parsing error becomes one warning line,
anything else passes untouched."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from aiohttp.http_exceptions import BadHttpMessage, BadStatusLine, LineTooLong

from gomoku_archive.logs import configure_logging
from gomoku_archive.web.server.bad_requests import BAD_REQUEST_EVENT, BadRequestsAsWarnings


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


def record(exc: BaseException | None, level: int = logging.ERROR) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(
        "aiohttp.server", level, __file__, 1, "Error handling request from %s", ("10.0.0.7",), info
    )


@pytest.mark.parametrize(
    ("exc", "passes", "error"),
    [
        (BadHttpMessage("Invalid header token: b'Broken'"), False, "BadHttpMessage: Invalid"),
        (BadStatusLine("GET / HTTP/9.Z"), False, "BadStatusLine: Bad status line"),
        (LineTooLong("a" * 10_000, 8190), False, "LineTooLong: Got more than 8190 bytes"),
        (ValueError("a bug"), True, None),
        (None, True, None),
    ],
)
def test_parse_errors_become_one_warning(
    exc: BaseException | None, passes: bool, error: str | None
) -> None:
    out = io.StringIO()
    configure_logging(fmt="json", stream=out)
    assert BadRequestsAsWarnings().filter(record(exc)) is passes
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    if passes:
        assert lines == []
        return
    [line] = lines
    assert line["event"] == BAD_REQUEST_EVENT
    assert line["level"] == "warning"
    assert line["remote"] == "10.0.0.7"
    assert line["status"] == 400
    assert str(line["error"]).startswith(str(error))
    assert len(line["error"]) <= 220 and "\n" not in line["error"]
    assert "exception" not in line
