"""arq's own log lines, kept where they tell something and trimmed where our lines say it better.

arq logs every job's start (``→``), retry (``↻``) and end (``←``, ``!``) at info, through the
project's renderer (``logs.configure_logging``). Two kinds repeat what we log already."""

from __future__ import annotations

import logging

from gomoku_archive.errors import MirrorFailed
from gomoku_archive.jobs.ids import RANGE_FUNCTION

ARQ_LOGGER = "arq.worker"
START_LINE = "%6.2fs → %s(%s)%s"
"""arq 0.28's line as a job starts: waited seconds, ``<job id>:<function>``, the arguments,
and `` try=N`` from its second try on."""
RETRY_LINE = "%6.2fs ↻ %s retrying job in %0.2fs"
"""arq 0.28's line when a job raised ``Retry``."""


class ExpectedFailures(logging.Filter):
    """arq logs every failed job with its traceback. A ``MirrorFailed`` is an expected outcome
    (a store that refused or stayed away) that ``mirror_jobs`` has logged in full already
    (``mirror_job``, outcome ``failed``): arq's one line stays, its traceback goes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is not None and isinstance(record.exc_info[1], MirrorFailed):
            record.exc_info = None
            record.exc_text = None
        return True


def is_range_requeue_line(message: object, args: object) -> bool:
    """Whether an arq record (its format string and arguments) is one of the lines a busy
    worker's range requeue repeats: the ``↻`` line of a range job (its only ``Retry`` is the
    requeue), or the start line of a range job's second or later try."""
    if not isinstance(args, tuple) or len(args) < 2 or not isinstance(args[1], str):
        return False
    if not args[1].endswith(":" + RANGE_FUNCTION):
        return False
    if message == RETRY_LINE:
        return True
    return message == START_LINE and len(args) == 4 and " try=" in str(args[3])


class QuietRequeues(logging.Filter):
    """A range job that finds its worker busy goes back to the queue a second later, up to 30
    times (``worker.export_jobs.export_range``), and arq said so in two info lines each time,
    beside ours: a table locked for a minute gave hundreds of lines. ``export_range_requeued``
    says once, at info, what the range waits for; arq's lines of the repeats go to debug (and
    are dropped unless the logger shows debug)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not is_range_requeue_line(record.msg, record.args):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno = logging.DEBUG
        record.levelname = logging.getLevelName(logging.DEBUG)
        return True


_FILTERS = (ExpectedFailures(), QuietRequeues())


def trim_arq_lines() -> None:
    """Install the filters on arq's worker logger (once, however often it is called)."""
    logger = logging.getLogger(ARQ_LOGGER)
    for line_filter in _FILTERS:
        if line_filter not in logger.filters:
            logger.addFilter(line_filter)
