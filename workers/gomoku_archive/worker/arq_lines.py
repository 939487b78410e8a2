"""arq's own log lines, kept where they tell something and trimmed where our lines say it better.

arq logs every job's start (``→``), retry (``↻``) and end (``←``, ``!``) at info, through the
project's renderer (``logs.configure_logging``). One kind repeats what we log already."""

from __future__ import annotations

import logging

from gomoku_archive.errors import MirrorFailed

ARQ_LOGGER = "arq.worker"


class ExpectedFailures(logging.Filter):
    """arq logs every failed job with its traceback. A ``MirrorFailed`` is an expected outcome
    (a store that refused or stayed away) that ``mirror_jobs`` has logged in full already
    (``mirror_job``, outcome ``failed``): arq's one line stays, its traceback goes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is not None and isinstance(record.exc_info[1], MirrorFailed):
            record.exc_info = None
            record.exc_text = None
        return True


_FILTERS = (ExpectedFailures(),)


def trim_arq_lines() -> None:
    """Install the filters on arq's worker logger (once, however often it is called)."""
    logger = logging.getLogger(ARQ_LOGGER)
    for line_filter in _FILTERS:
        if line_filter not in logger.filters:
            logger.addFilter(line_filter)
