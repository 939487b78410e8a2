"""``gomoku-archive manifest``: print the manifest JSON the API serves."""

from __future__ import annotations

import argparse

from gomoku_archive.catalog.manifest import build_manifest
from gomoku_archive.db import archive_store
from gomoku_archive.runtime import database, load_settings, print_json, run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "manifest",
        help="print the manifest JSON the API serves",
        description="Prints the manifest that /api/v1/database/manifest.json serves, read "
        "from DATABASE_URL: every published month, its file, checksum and counts.",
    )
    p.set_defaults(run=cmd_manifest)


def cmd_manifest(args: argparse.Namespace) -> int:
    settings = load_settings()

    async def main() -> dict[str, object]:
        async with database(settings, max_size=1) as pool, pool.acquire() as conn:
            summaries = await archive_store.manifest_summaries(conn)
        return build_manifest(summaries)

    print_json(run(main), indent=2)
    return 0
