"""Which months need an export: pure decisions, tested with tables."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from shared.months import Month, closed_months


def missing_months(first: Month, now: datetime, published: Collection[str]) -> list[Month]:
    """Closed months from ``first`` on that have no published archive, oldest first."""
    return [m for m in closed_months(first, now) if str(m) not in published]
