"""What a job finds in arq's ``ctx``, typed: arq passes a plain dict, so these accessors are the
one place that knows the keys."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

from arq.connections import ArqRedis

from gomoku_archive.db.pool import Pool
from gomoku_archive.export.range_slot import RangeSlot
from gomoku_archive.settings import Settings
from gomoku_archive.storage.mirror import ArchiveMirror

Clock = Callable[[], datetime]
"""Returns the current instant (aware, UTC). Tests pass their own to move time."""

SETTINGS = "gomoku_settings"
CLOCK = "gomoku_clock"
WORKER = "gomoku_worker"
POOL = "gomoku_pool"
SOURCE_POOL = "gomoku_source_pool"
RANGE_SLOT = "gomoku_range_slot"
MIRROR = "gomoku_mirror"


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_context(settings: Settings, *, clock: Clock, worker: str) -> dict[str, Any]:
    """The ctx a worker starts with; ``on_startup`` adds the database pools and the range
    slot."""
    return {SETTINGS: settings, CLOCK: clock, WORKER: worker}


def settings_of(ctx: dict[str, Any]) -> Settings:
    return cast(Settings, ctx[SETTINGS])


def clock_of(ctx: dict[str, Any]) -> Clock:
    return cast(Clock, ctx.get(CLOCK, utc_now))


def worker_of(ctx: dict[str, Any]) -> str:
    return cast(str, ctx.get(WORKER, "unknown"))


def pool_of(ctx: dict[str, Any]) -> Pool:
    return cast(Pool, ctx[POOL])


def source_pool_of(ctx: dict[str, Any]) -> Pool:
    """Where exports read the games: ``SOURCE_DATABASE_URL``'s pool, else the archive's."""
    return cast(Pool, ctx.get(SOURCE_POOL) or ctx[POOL])


def range_slot_of(ctx: dict[str, Any]) -> RangeSlot | None:
    """The worker's range slot (``export.range_slot``), None before it starts (or for a job
    run outside a worker)."""
    return cast("RangeSlot | None", ctx.get(RANGE_SLOT))


def mirror_of(ctx: dict[str, Any]) -> ArchiveMirror | None:
    """The S3 mirror, or None when ``S3_BUCKET`` is not set."""
    return cast("ArchiveMirror | None", ctx.get(MIRROR))


def redis_of(ctx: dict[str, Any]) -> ArqRedis:
    """arq's own Redis pool (``ctx["redis"]``), with our JSON codec."""
    return cast(ArqRedis, ctx["redis"])
