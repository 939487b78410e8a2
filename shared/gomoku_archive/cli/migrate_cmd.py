"""``gomoku-archive migrate``: create or upgrade the service's own tables."""

from __future__ import annotations

import argparse

from gomoku_archive.db.migrate import migrate
from gomoku_archive.runtime import database, load_settings, run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "migrate",
        help="create or upgrade the service's own tables",
        description="Applies the service's SQL migrations that DATABASE_URL's database has not "
        "had yet, in order, each in its own transaction; running it again changes nothing. The "
        "game server's table is never touched.",
    )
    p.set_defaults(run=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = load_settings()

    async def main() -> list[str]:
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            return await migrate(conn)

    applied = run(main)
    print(f"applied {len(applied)} migration(s)" + (": " + ", ".join(applied) if applied else ""))
    return 0
