"""The companion of an archive published without one (before companions existed, or whose
companion failed in its build), made from the stored archive under the month's export lock (so
no build of the month runs meanwhile) and published at once beside it. The worker's
``build_companion`` job runs it; the planner queues one for every such archive."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Literal

from gomoku_archive.db import archive_store, companion_store, locks
from gomoku_archive.db.pool import CONNECTION_ERRORS, Pool, connection_usable, transaction
from gomoku_archive.export.companion import build
from gomoku_archive.profile.months import Month

Outcome = Literal["published", "skipped"]


@dataclass(frozen=True, slots=True)
class BackfillResult:
    archive_id: int
    outcome: Outcome
    file_name: str | None = None
    """The companion's (published)."""
    companion_id: int | None = None
    reason: str | None = None
    """Why it was skipped."""

    def summary(self) -> dict[str, object]:
        return {
            "archive_id": self.archive_id,
            "outcome": self.outcome,
            "file": self.file_name,
            "companion_id": self.companion_id,
            **({"reason": self.reason} if self.reason else {}),
        }


async def companion_for_archive(pool: Pool, archive_id: int) -> BackfillResult:
    """Make and publish archive ``archive_id``'s companion; ``skipped`` when it is not a
    published archive without one, or when its month is being exported (that build writes the
    month's companion itself)."""
    async with pool.acquire() as lock_conn:
        archive = await companion_store.archive_without_companion(lock_conn, archive_id)
        if archive is None:
            reason = "not a published archive without a companion"
            return BackfillResult(archive_id, "skipped", reason=reason)
        month = Month.parse(archive.month)
        if not await locks.try_lock_month(lock_conn, month):
            reason = f"{month} is being exported; its build writes the companion"
            return BackfillResult(archive_id, "skipped", reason=reason)
        try:
            # Under the lock, as an export does: what a killed run of the month left goes.
            await archive_store.remove_leftovers(lock_conn, archive.month)
            if await companion_store.archive_without_companion(lock_conn, archive_id) is None:
                reason = "published or rebuilt meanwhile"
                return BackfillResult(archive_id, "skipped", reason=reason)
            stored = await build.from_archive(pool, archive)
            async with transaction(lock_conn):
                if stored.companion_id is None:
                    await companion_store.give_to(lock_conn, stored.built.file_name, archive_id)
                await companion_store.follow_archives(lock_conn, archive.month)
            companion_id = await companion_store.served_companion_id(lock_conn, archive_id)
        finally:
            # A lost session took the lock with it; there is nothing left to unlock then.
            if connection_usable(lock_conn):
                with contextlib.suppress(*CONNECTION_ERRORS):
                    await locks.unlock_month(lock_conn, month)
    return BackfillResult(
        archive_id, "published", file_name=stored.built.file_name, companion_id=companion_id
    )
