"""The access line's direct path writes what the structlog chain writes."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive import logs


@pytest.fixture
def configured() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    logs.configure_logging(fmt="json", level="INFO", stream=stream)
    try:
        yield stream
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logs._direct_setup.clear()
        logs._direct.clear()
        structlog.reset_defaults()


def _without_time(line: str) -> dict[str, object]:
    record: dict[str, object] = json.loads(line)
    assert str(record.pop("timestamp")).endswith("Z")
    return record


values = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(), st.booleans(), st.none())


@settings(deadline=None)  # the first call builds structlog's chain: slow on a loaded machine
@given(fields=st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), values))
def test_the_json_line_is_the_structlog_chains_line(fields: dict[str, object]) -> None:
    fields.pop("event", None)
    stream = io.StringIO()
    logs._direct_setup[:] = [
        (logging.StreamHandler(stream), logging.INFO, "json", structlog.processors.JSONRenderer())
    ]
    try:
        with structlog.contextvars.bound_contextvars(request_id="r1", status="context"):
            direct = logs.json_line(logs.ACCESS_LOGGER, "info", "http_request", dict(fields))
            logs._direct_logger(logs.ACCESS_LOGGER).info("http_request", **fields)
    finally:
        logs._direct_setup.clear()
    chained = stream.getvalue()
    assert direct.endswith("\n") and chained.count("\n") == 1
    assert list(_without_time(direct).items()) == list(_without_time(chained).items())


def test_the_access_line_has_the_fields_of_every_other_line(configured: io.StringIO) -> None:
    with structlog.contextvars.bound_contextvars(request_id="abc"):
        logs.get_direct_logger(logs.ACCESS_LOGGER).info("http_request", status=200, bytes=5)
        logs.get_logger(logs.ACCESS_LOGGER).info("http_request", status=200, bytes=5)
    direct, stdlib = configured.getvalue().splitlines()
    assert list(_without_time(direct).items()) == list(_without_time(stdlib).items())


def test_the_access_line_respects_the_level() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    logs.configure_logging(fmt="json", level="WARNING", stream=stream)
    try:
        logs.get_direct_logger(logs.ACCESS_LOGGER).info("http_request", status=200)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logs._direct_setup.clear()
        structlog.reset_defaults()
    assert stream.getvalue() == ""


texts = st.one_of(
    st.sampled_from(["GET", "HEAD", "/api/v1/database", "/database/", "unmatched"]),
    st.text(max_size=20),
)


@settings(deadline=None)
@given(
    method=texts,
    route=texts,
    path=texts,
    status=st.one_of(st.integers(), st.booleans()),
    sent=st.one_of(st.integers(min_value=0), st.booleans()),
    duration_ms=st.one_of(st.floats(), st.integers()),
    context=st.one_of(
        st.fixed_dictionaries({"request_id": st.one_of(texts, st.integers())}),
        st.dictionaries(st.sampled_from(["request_id", "job_id", "status", "level"]), texts),
    ),
)
def test_the_request_line_is_the_json_line(
    method: str,
    route: str,
    path: str,
    status: int,
    sent: int,
    duration_ms: float,
    context: dict[str, object],
) -> None:
    fields = {
        "method": method,
        "route": route,
        "path": path,
        "status": status,
        "bytes": sent,
        "duration_ms": duration_ms,
    }
    with structlog.contextvars.bound_contextvars(**context):
        direct = logs.request_line(
            logs.ACCESS_LOGGER, method, route, path, status, sent, duration_ms
        )
        expected = logs.json_line(logs.ACCESS_LOGGER, "info", "http_request", fields)
    assert direct.endswith("\n")
    assert _masked(direct) == _masked(expected)


def _masked(line: str) -> str:
    """The line with its timestamp's digits replaced (the two lines are made microseconds apart)."""
    head, _, stamp = line.rpartition('"timestamp": "')
    return head + "T" * len(stamp)
