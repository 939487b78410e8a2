"""arq's lines are left as arq wrote them, but for the traceback of an expected mirror
failure."""

from __future__ import annotations

import logging

from gomoku_archive.errors import MirrorFailed
from gomoku_archive.worker.arq_lines import ARQ_LOGGER, ExpectedFailures


def test_an_expected_mirror_failure_loses_only_its_traceback() -> None:
    error = MirrorFailed("the store refused", transient=False)
    line = logging.LogRecord(
        ARQ_LOGGER, logging.ERROR, __file__, 1, "failed", (), (MirrorFailed, error, None)
    )
    assert ExpectedFailures().filter(line) is True
    assert line.exc_info is None
