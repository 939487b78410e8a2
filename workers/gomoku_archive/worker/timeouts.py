"""How long one month's export may run, from the month's size.

arq's timeout belongs to a function, not to a job, so the worker gives ``export_month`` a ceiling
(``EXPORT_CEILING_SECONDS``) and each job applies its own month's limit inside. A fixed default
would either kill large months or leave a stuck small one holding its lock for hours.
"""

from __future__ import annotations

BASE_SECONDS = 300.0
"""Connecting, the snapshot's count and the read-back of the stored bytes, whatever the size."""

ASSUMED_GAMES_PER_SECOND = 2_000.0
"""A deliberately low throughput (replay + SGF + gzip + chunk writes on one core)."""

SAFETY_FACTOR = 3.0
"""Room for a busy database or a slow machine before we call an export stuck."""

MIN_SECONDS = BASE_SECONDS
MAX_SECONDS = 6 * 3600.0
"""A month that needs more is a sign of trouble better looked at than waited for."""

EXPORT_CEILING_SECONDS = MAX_SECONDS + 300.0
"""arq's own timeout for ``export_month``: only reached if the per-month limit failed to act."""


def export_timeout(candidates: int) -> float:
    """Seconds an export of a month with ``candidates`` candidate games may take."""
    if candidates < 0:
        raise ValueError(f"a month cannot have {candidates} candidates")
    estimate = BASE_SECONDS + candidates / ASSUMED_GAMES_PER_SECOND * SAFETY_FACTOR
    return min(max(estimate, MIN_SECONDS), MAX_SECONDS)
