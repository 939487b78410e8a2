"""The S3 mirror's jobs: ``mirror_archive`` (one archive, after it is published or by the
planner's backfill), ``scrub_mirror`` (weekly: re-read every copy, repair what changed),
``check_mirror`` (every ``MIRROR_CHECK_SECONDS``: HEAD every redirect target, withdraw what is
gone or changed and queue its repair) and ``check_mirror_content`` (every
``MIRROR_CONTENT_CHECK_SECONDS``: the same for a window of every target's bytes).
Thin: the work is ``gomoku_archive.storage.mirror``; here are retries, logs and arq's outcomes.

The checks' outcomes: ``checked`` (every redirect target got a verdict), ``incomplete`` (some
were skipped or the store did not answer for them: each is named in ``problems`` and in its
own ``mirror_copy_unchecked`` warning), ``unfinished`` (the pass was cancelled: arq's timeout
or a shutdown); the last two are logged at warning.

``mirror_archive`` outcomes: ``uploaded`` / ``present`` / ``skipped`` (see ``MirrorAction``);
``retry`` when the store was away or busy (``MIRROR_MAX_TRIES`` runs); ``failed`` when the store
refused (credentials, bucket, access) or stayed away, raised so arq keeps it as the job's result
for ``/ops/`` and ``gomoku-archive jobs``. A failure never touches what is published.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import structlog
from arq import Retry

from gomoku_archive.errors import MirrorFailed
from gomoku_archive.logs import get_logger
from gomoku_archive.queue.enqueue import enqueue_mirrors
from gomoku_archive.storage.mirror_checks import TargetCheck
from gomoku_archive.worker.context import mirror_of, redis_of, settings_of
from gomoku_archive.worker.retry_policy import MIRROR_MAX_TRIES, may_retry, mirror_retry_delay

log = get_logger(__name__)

MIRROR_TIMEOUT_SECONDS = 3 * 3600
"""One archive's upload and read-back: hours of margin for a multi-gigabyte month on a slow
link; a stuck call is also bounded by boto3's own connect and read timeouts."""
SCRUB_TIMEOUT_SECONDS = 12 * 3600


def lock_wait_seconds(period_seconds: int) -> float:
    """How long a check's pass may wait for copies that another job holds: half its period,
    which leaves the other half for its own work before the next pass is due (and keeps the
    HEAD pass within its arq timeout of a period)."""
    return period_seconds / 2


async def mirror_archive(ctx: dict[str, Any], archive_id: int) -> dict[str, Any]:
    """Give archive ``archive_id`` a verified copy in the bucket."""
    job_id = str(ctx.get("job_id", ""))
    attempt = int(ctx.get("job_try", 1))
    fields: dict[str, Any] = {"job_id": job_id, "archive_id": archive_id, "attempt": attempt}
    started = time.monotonic()
    with structlog.contextvars.bound_contextvars(job_id=job_id, archive_id=archive_id):
        mirror = mirror_of(ctx)
        if mirror is None:
            summary = fields | {"outcome": "skipped", "reason": "S3_BUCKET is not set"}
            log.info("mirror_job", **summary)
            return summary
        try:
            result = await mirror.mirror(archive_id)
        except MirrorFailed as exc:
            seconds = round(time.monotonic() - started, 3)
            failure = "transient" if exc.transient else "permanent"
            if exc.transient and may_retry(attempt, MIRROR_MAX_TRIES):
                delay = mirror_retry_delay(attempt)
                log.warning(
                    "mirror_job",
                    **fields,
                    outcome="retry",
                    error=str(exc),
                    failure=failure,
                    retry_in_s=delay,
                    duration_s=seconds,
                )
                raise Retry(defer=delay) from exc
            log.error(
                "mirror_job",
                **fields,
                outcome="failed",
                error=str(exc),
                failure=failure,
                duration_s=seconds,
            )
            raise
        summary = fields | result.summary()
        log.info("mirror_job", **summary)
        return summary


async def scrub_mirror(ctx: dict[str, Any]) -> dict[str, Any]:
    """Re-read every verified copy in the bucket; repair the ones that no longer match."""
    mirror = mirror_of(ctx)
    if mirror is None:
        return {"outcome": "skipped", "reason": "S3_BUCKET is not set"}
    started = time.monotonic()
    report = await mirror.scrub()
    summary = {"outcome": "scrubbed", **report.summary()}
    summary["duration_s"] = round(time.monotonic() - started, 3)
    level = "warning" if report.failures or report.count("repaired") else "info"
    getattr(log, level)("mirror_scrub", **summary)
    return summary


async def check_mirror(ctx: dict[str, Any]) -> dict[str, Any]:
    """HEAD every redirect target; withdraw a copy that is gone or changed at once and queue a
    ``mirror_archive`` to repair it (and one for each copy still waiting for its CDN read)."""
    mirror = mirror_of(ctx)
    if mirror is None:
        return {"outcome": "skipped", "reason": "S3_BUCKET is not set"}
    started = time.monotonic()
    checked = TargetCheck()
    with _unfinished("mirror_check", checked, started):
        wait = lock_wait_seconds(settings_of(ctx).mirror_check_seconds)
        await mirror.check_targets(wait_seconds=wait, into=checked)
    return await _report(ctx, "mirror_check", checked, started)


async def check_mirror_content(ctx: dict[str, Any]) -> dict[str, Any]:
    """Read this pass's window of every redirect target from the bucket and the CDN; withdraw
    a copy whose bytes differ from PostgreSQL's at once and queue its repair."""
    mirror = mirror_of(ctx)
    if mirror is None:
        return {"outcome": "skipped", "reason": "S3_BUCKET is not set"}
    settings = settings_of(ctx)
    started = time.monotonic()
    sample = settings.mirror_content_sample_bytes
    checked = TargetCheck()
    with _unfinished("mirror_content_check", checked, started):
        await mirror.check_content(
            sample_bytes=sample,
            wait_seconds=lock_wait_seconds(settings.mirror_content_check_seconds),
            into=checked,
        )
    return await _report(ctx, "mirror_content_check", checked, started, {"sampleBytes": sample})


async def _report(
    ctx: dict[str, Any],
    event: str,
    checked: TargetCheck,
    started: float,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    queued = await enqueue_mirrors(redis_of(ctx), checked.to_repair())
    summary: dict[str, Any] = {
        "outcome": checked.outcome,
        **(extra or {}),
        **checked.summary(),
        "repairsQueued": queued,
        "duration_s": round(time.monotonic() - started, 3),
    }
    level = "warning" if checked.withdrawn or checked.outcome != "checked" else "info"
    getattr(log, level)(event, **summary)
    return summary


@contextlib.contextmanager
def _unfinished(event: str, checked: TargetCheck, started: float) -> Iterator[None]:
    """A pass cancelled midway (arq's timeout, a shutdown) still says what it had done, and that
    it did not finish; its repairs are queued by the next pass."""
    try:
        yield
    except asyncio.CancelledError:
        duration = round(time.monotonic() - started, 3)
        log.warning(event, outcome="unfinished", **checked.summary(), duration_s=duration)
        raise
