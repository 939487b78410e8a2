"""A download's redirect URL, never at the download's expense: when the store cannot sign (no
credentials, a credential source that refuses, answers garbage or does not answer), the API
serves the file itself, after at most ``PRESIGN_TIMEOUT_SECONDS`` and, while the failure goes
on, at once. Each failure streak is logged once when it starts and once when it ends, and every
download it sends to the API is counted (``gomoku_download_redirects_unsigned``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from gomoku_archive.errors import MirrorFailed
from gomoku_archive.logs import get_logger
from gomoku_archive.storage.s3 import PRESIGN_TIMEOUT_SECONDS, S3Store
from gomoku_archive.web.metrics import Metrics

log = get_logger(__name__)

RETRY_PAUSE_SECONDS = 10.0
"""After a failure, how long downloads are served here without trying to sign: one download
then tries again. A credential source that hangs costs one download ``PRESIGN_TIMEOUT_SECONDS``
per pause, not every download."""


@dataclass(slots=True)
class SigningStreak:
    """Whether signing is failing, and since when: the decisions, apart from any I/O."""

    failing_since: float | None = None
    retry_at: float = 0.0
    unsigned: int = 0
    """Downloads served here since the streak began."""

    def should_try(self, now: float) -> bool:
        """Whether a download tries to sign now. While failing, one download per pause does:
        trying moves the next try a pause on, so downloads arriving meanwhile do not wait."""
        if self.failing_since is None:
            return True
        if now < self.retry_at:
            return False
        self.retry_at = now + RETRY_PAUSE_SECONDS
        return True

    def failed(self, now: float) -> bool:
        """A try failed; True when it starts a streak (the one failure to log)."""
        self.retry_at = now + RETRY_PAUSE_SECONDS
        self.unsigned += 1
        if self.failing_since is not None:
            return False
        self.failing_since = now
        return True

    def skipped(self) -> None:
        self.unsigned += 1

    def succeeded(self, now: float) -> tuple[float, int] | None:
        """A try signed; when it ends a streak, (its seconds, downloads served here)."""
        if self.failing_since is None:
            return None
        ended = (now - self.failing_since, self.unsigned)
        self.failing_since = None
        self.unsigned = 0
        return ended


class RedirectSigner:
    """The API's redirect URLs of one store: ``url`` gives the copy's URL or None (serve it
    here)."""

    def __init__(
        self, store: S3Store, metrics: Metrics, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._clock = clock
        self._streak = SigningStreak()

    async def url(self, key: str) -> str | None:
        """The URL a GET of ``key`` is redirected to, or None when it could not be had."""
        if not self._streak.should_try(self._clock()):
            self._streak.skipped()
            self._metrics.redirects_unsigned.labels("paused").inc()
            return None
        try:
            url = await self._store.public_url(key)
        except MirrorFailed as exc:
            timed_out = isinstance(exc.__cause__, TimeoutError)
            self._metrics.redirects_unsigned.labels("timeout" if timed_out else "error").inc()
            if self._streak.failed(self._clock()):
                log.warning(
                    "download_signing_failed",
                    error=str(exc),
                    served_by="api",
                    retry_every_s=RETRY_PAUSE_SECONDS,
                    timeout_s=PRESIGN_TIMEOUT_SECONDS,
                )
            return None
        ended = self._streak.succeeded(self._clock())
        if ended is not None:
            seconds, unsigned = ended
            log.info("download_signing_recovered", after_s=round(seconds, 1), unsigned=unsigned)
        return url
