"""arq's lines that a busy worker's range requeues repeat go to debug; every other line is left
as arq wrote it. The real lines, from real workers, are counted in
tests/integration/test_worker_requeue_lines.py."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from gomoku_archive.errors import MirrorFailed
from gomoku_archive.worker.arq_lines import (
    ARQ_LOGGER,
    RETRY_LINE,
    START_LINE,
    ExpectedFailures,
    QuietRequeues,
    is_range_requeue_line,
)
from gomoku_archive.worker.export_jobs import requeue_log_level

RANGE_REF = "export:2026-08:build:7:range:3:export_range"
EXPORT_REF = "export:2026-08:export_month"
ARGS = "archive_id=7, month='2026-08', seq=3"


@pytest.mark.parametrize(
    ("message", "args", "repeat"),
    [
        (RETRY_LINE, (0.01, RANGE_REF, 1.0), True),
        (START_LINE, (2.5, RANGE_REF, ARGS, " try=2"), True),
        (START_LINE, (2.5, RANGE_REF, ARGS, " try=30 delayed=1.30s"), True),
        (START_LINE, (0.1, RANGE_REF, ARGS, ""), False),  # its first start stays
        (START_LINE, (0.1, RANGE_REF, ARGS, " delayed=1.30s"), False),
        (RETRY_LINE, (0.01, EXPORT_REF, 60.0), False),  # an export's retry is news
        (START_LINE, (0.1, EXPORT_REF, "month='2026-08'", " try=2"), False),
        ("%6.2fs ← %s ● %s", (0.2, RANGE_REF, "{'outcome': 'skipped'}"), False),
        (RETRY_LINE, None, False),
        (RETRY_LINE, (0.01,), False),
        (RETRY_LINE, (0.01, 42, 1.0), False),
    ],
)
def test_which_lines_repeat_a_requeue(message: str, args: object, repeat: bool) -> None:
    assert is_range_requeue_line(message, args) is repeat


def record(message: str, args: tuple[object, ...], level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord(ARQ_LOGGER, level, __file__, 1, message, args, None)


@pytest.fixture
def arq_level() -> Iterator[logging.Logger]:
    logger = logging.getLogger(ARQ_LOGGER)
    level = logger.level
    try:
        yield logger
    finally:
        logger.setLevel(level)


def test_a_repeat_is_dropped_below_debug_and_debug_when_shown(arq_level: logging.Logger) -> None:
    arq_level.setLevel(logging.INFO)
    assert QuietRequeues().filter(record(RETRY_LINE, (0.01, RANGE_REF, 1.0))) is False
    arq_level.setLevel(logging.DEBUG)
    line = record(RETRY_LINE, (0.01, RANGE_REF, 1.0))
    assert QuietRequeues().filter(line) is True
    assert (line.levelno, line.levelname) == (logging.DEBUG, "DEBUG")


def test_other_lines_pass_untouched(arq_level: logging.Logger) -> None:
    arq_level.setLevel(logging.INFO)
    for line in (
        record(START_LINE, (0.1, RANGE_REF, ARGS, "")),
        record(RETRY_LINE, (0.01, EXPORT_REF, 60.0)),
        record(RETRY_LINE, (0.01, RANGE_REF, 1.0), level=logging.WARNING),
    ):
        level = line.levelno
        assert QuietRequeues().filter(line) is True
        assert line.levelno == level


def test_an_expected_mirror_failure_loses_only_its_traceback() -> None:
    error = MirrorFailed("the store refused", transient=False)
    line = logging.LogRecord(
        ARQ_LOGGER, logging.ERROR, __file__, 1, "failed", (), (MirrorFailed, error, None)
    )
    assert ExpectedFailures().filter(line) is True
    assert line.exc_info is None


@pytest.mark.parametrize(("attempt", "level"), [(1, "info"), (2, "debug"), (30, "debug")])
def test_a_range_job_says_at_info_once_what_it_waits_for(attempt: int, level: str) -> None:
    assert requeue_log_level(attempt) == level
