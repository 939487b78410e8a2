"""Versioned SQL migrations: ``migrations/NNNN_name.sql`` applied in order, each in its own
transaction, recorded with a checksum so an edited, already-applied file is caught. Concurrent
callers (several workers starting at once) serialise on an advisory lock."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from gomoku_archive.db.pool import Connection
from gomoku_archive.errors import ArchiveError

_MIGRATION_LOCK = 0x676F6D6F  # "gomo": any constant unique to this service
_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""

_PACKAGE = __name__.rpartition(".")[0]
"""This module's package, where the SQL files lie."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations() -> list[Migration]:
    folder = resources.files(_PACKAGE) / "migrations"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append(Migration(version, entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if len({m.version for m in found}) != len(found):
        raise ArchiveError("two migration files share a version number")
    return found


async def migrate(conn: Connection) -> list[str]:
    """Apply every pending migration; returns the names applied (empty when up to date)."""
    applied_now: list[str] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        await conn.execute(_CREATE_TABLE)
    for migration in load_migrations():
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            row = await conn.fetchrow(
                "SELECT checksum FROM schema_migrations WHERE version = $1", migration.version
            )
            if row is not None:
                if row["checksum"] != migration.checksum:
                    raise ArchiveError(
                        f"migration {migration.name} was edited after it was applied; "
                        "add a new migration instead"
                    )
                continue
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
            applied_now.append(migration.name)
    return applied_now
