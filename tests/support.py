"""Helpers several test folders (and the benchmarks) share. What only tests need lives here, not
in the package."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from gomoku_archive.db.pool import Connection, Pool, create_pool
from gomoku_archive.demo.examples import EXAMPLE_MONTH, EXAMPLES_DIR, example_archive
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.stats import StatsCounter
from gomoku_archive.profile.writer import GameRecord, game_parts
from gomoku_archive.sgf.tree import GameTree, Node
from gomoku_archive.storage.file_cache import FileCache


@asynccontextmanager
async def pool_from(dsn: str, **kwargs: Any) -> AsyncIterator[Pool]:
    """A pool on ``dsn``, closed afterwards."""
    pool = await create_pool(dsn, **kwargs)
    try:
        yield pool
    finally:
        await pool.close()


def bundled_archive_path() -> Path:
    """The committed example archive (its name carries its hash prefix)."""
    return EXAMPLES_DIR / archive_file_name(EXAMPLE_MONTH, example_archive().sha256)


def add_record(counter: StatsCounter, record: GameRecord) -> None:
    """Count a game as the export does, formatting its line first."""
    counter.add(record, game_parts(record))


def main_line(tree: GameTree) -> Iterator[Node]:
    """The nodes of the main line: the tree's sequence, then its first variation's, and so on."""
    current: GameTree | None = tree
    while current is not None:
        yield from current.nodes
        current = current.variations[0] if current.variations else None


async def wait_filled(cache: FileCache) -> None:
    """Until the cache has no copy in progress."""
    filling = cache._filling
    while filling:
        await asyncio.gather(*filling.values(), return_exceptions=True)


class _Recording(dict[str, str]):
    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)


def settings_read() -> frozenset[str]:
    """Every environment variable ``Settings.from_env`` reads (asked of the mapping it is given,
    not parsed out of its source)."""
    from gomoku_archive.settings import Settings

    environ = _Recording()
    Settings.from_env(environ, isatty=False)
    return frozenset(environ.asked)


async def part_segments(
    conn: Connection, archive_id: int, range_seq: int, attempt: int, first_seq: int, count: int
) -> list[bytes]:
    """Segments ``first_seq ..`` (at most ``count``) of a range's part, in order: how tests and
    the benchmarks look into a part; the service itself copies parts inside PostgreSQL."""
    rows = await conn.fetch(
        "SELECT data FROM archive_parts WHERE archive_id = $1 AND range_seq = $2 "
        "AND attempt = $3 AND seq >= $4 ORDER BY seq LIMIT $5",
        archive_id,
        range_seq,
        attempt,
        first_seq,
        count,
    )
    return [r["data"] for r in rows]
