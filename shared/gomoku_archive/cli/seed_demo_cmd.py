"""``gomoku-archive seed-demo``: fill the games table with realistic demo games."""

from __future__ import annotations

import argparse

from gomoku_archive.db import source
from gomoku_archive.demo.games import generate_months
from gomoku_archive.errors import ArchiveError
from gomoku_archive.runtime import database, load_settings, month_arg, run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "seed-demo",
        help="fill the source table with realistic demo games",
        description="Inserts demo games (real freestyle play, out-of-scope games and broken "
        "rows of every exclusion kind) into GAMES_TABLE for the months given; the demo runs it.",
    )
    p.add_argument(
        "--from",
        dest="first",
        type=month_arg,
        required=True,
        metavar="YYYY-MM",
        help="the first month to fill",
    )
    p.add_argument(
        "--to",
        dest="last",
        type=month_arg,
        required=True,
        metavar="YYYY-MM",
        help="the last month to fill (inclusive)",
    )
    p.add_argument(
        "--games-per-month",
        type=int,
        required=True,
        metavar="N",
        help="valid games per month, on top of out-of-scope and broken rows",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=2026,
        help="the random seed: the same seed gives the same games (default 2026)",
    )
    p.set_defaults(run=cmd_seed_demo)


def cmd_seed_demo(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.last < args.first:
        raise ArchiveError("--to must not be before --from")
    if args.games_per_month < 0:
        raise ArchiveError("--games-per-month must be 0 or more")

    async def main() -> int:
        inserted = 0
        batch: list[tuple[object, ...]] = []
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            await source.create_reference_table(conn, settings.games_table)
            for game in generate_months(
                args.first, args.last, args.games_per_month, seed=args.seed
            ):
                batch.append(tuple(getattr(game, c) for c in source.INSERT_COLUMNS))
                if len(batch) >= 5000:
                    inserted += await source.insert_games(conn, settings.games_table, batch)
                    batch.clear()
            if batch:
                inserted += await source.insert_games(conn, settings.games_table, batch)
        return inserted

    inserted = run(main)
    print(f"inserted {inserted} rows into {settings.games_table}")
    return 0
