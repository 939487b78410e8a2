"""The per-month export lock: a session-level PostgreSQL advisory lock, so a process that dies
(or whose connection drops) releases it without anyone's help."""

from __future__ import annotations

from gomoku_archive.db.pool import Connection
from gomoku_archive.profile.months import Month

_EXPORT_LOCK_CLASS = 0x4750  # "GP": the first key of the two-key advisory lock space


def _month_key(month: Month) -> int:
    return month.year * 100 + month.month


async def try_lock_month(conn: Connection, month: Month) -> bool:
    """Take the month's export lock on this connection's session, without waiting."""
    locked: bool = await conn.fetchval(
        "SELECT pg_try_advisory_lock($1, $2)", _EXPORT_LOCK_CLASS, _month_key(month)
    )
    return locked


async def unlock_month(conn: Connection, month: Month) -> None:
    await conn.execute("SELECT pg_advisory_unlock($1, $2)", _EXPORT_LOCK_CLASS, _month_key(month))


async def month_lock_held(conn: Connection, month: Month) -> bool:
    """Whether any session holds the month's export lock (for operators' views)."""
    held: bool = await conn.fetchval(f"SELECT {_held('$1::oid')}", _month_key(month))
    return held


def lock_held_sql(month_column: str) -> str:
    """An SQL condition: some session holds the export lock of the month in ``month_column``
    (a ``YYYY-MM`` text column, ``archives.month``). A build is under way only while its
    coordinator holds it, so the ranges' claims and views use this to tell a live build from
    a dead coordinator's."""
    key = f"(substr({month_column}, 1, 4)::int * 100 + substr({month_column}, 6, 2)::int)::oid"
    return _held(key)


def _held(key: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
        f"AND classid = {_EXPORT_LOCK_CLASS} AND objid = {key} AND objsubid = 2 "
        # pg_locks lists the locks of every database in the cluster: count only this one's, so
        # two deployments sharing a cluster (staging and production) never see each other's.
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
    )
