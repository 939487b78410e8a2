"""``gomoku-archive mirror``: copy published archives to the S3 bucket now (backfill), or
re-check every copy already there (scrub), in this process rather than through the worker."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from gomoku_archive.db import archive_store
from gomoku_archive.errors import ArchiveError, ConfigError
from gomoku_archive.runtime import database, load_settings, print_json, run

if TYPE_CHECKING:
    from gomoku_archive.storage.mirror import ArchiveMirror, MirrorReport

_MIB = 1024 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "mirror",
        help="copy archives to the S3 bucket, or re-check the copies there",
        description="Needs S3_BUCKET (and S3_ENDPOINT_URL for an S3-compatible store); "
        "credentials and region come from boto3's standard chain. Every copy is read back "
        "and compared with the archive's SHA-256 and length before downloads are "
        "redirected to it.",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--all",
        action="store_true",
        help="mirror every published or superseded file not yet verified in the bucket",
    )
    which.add_argument(
        "--verify",
        action="store_true",
        help="re-read every mirrored copy and re-upload the ones that no longer match",
    )
    which.add_argument("--file", metavar="NAME", help="mirror one archive file")
    p.add_argument("--json", action="store_true", help="print one JSON summary instead")
    p.set_defaults(run=cmd_mirror)


def cmd_mirror(args: argparse.Namespace) -> int:
    settings = load_settings()
    if not settings.mirror_enabled:
        raise ConfigError("S3_BUCKET is not set: mirroring is off")
    # boto3 takes a good part of a second to import: only this command pays for it.
    from gomoku_archive.storage.mirror import ArchiveMirror
    from gomoku_archive.storage.s3 import S3Store

    async def main() -> MirrorReport:
        async with database(settings, max_size=4) as pool:
            store = S3Store(settings)
            try:
                mirror = ArchiveMirror(pool, store)
                if args.verify:
                    return await mirror.scrub()
                if args.all:
                    return await mirror.backfill()
                return await _one(mirror, args.file)
            finally:
                await asyncio.to_thread(store.close)

    report = run(main)
    if args.json:
        print_json(report.summary())
    else:
        _print_report(report, scrub=bool(args.verify))
    return 1 if report.failures else 0


async def _one(mirror: ArchiveMirror, name: str) -> MirrorReport:
    async with mirror.pool.acquire() as conn:
        row = await archive_store.downloadable_archive(conn, name)
    if row is None:
        raise ArchiveError(f"no published or superseded archive is called {name!r}")
    from gomoku_archive.storage.mirror import MirrorReport

    report = MirrorReport()
    try:
        report.results.append(await mirror.mirror(row.id))
    except ArchiveError as exc:
        report.failures[row.id] = str(exc)
    return report


def _print_report(report: MirrorReport, *, scrub: bool) -> None:
    for result in report.results:
        size = f"{result.uploaded_bytes / _MIB:.1f} MiB sent" if result.uploaded_bytes else ""
        extra = ", ".join(x for x in (size, result.reason or "") if x)
        print(f"{result.action:<9} {result.file_name}" + (f"  ({extra})" if extra else ""))
    for archive_id, error in report.failures.items():
        print(f"failed    archive {archive_id}: {error}")
    s = report.summary()
    if scrub:
        print(
            f"checked {s['checked']}: {s['fine']} fine, {s['repaired']} repaired, "
            f"{s['failed']} failed"
        )
    else:
        print(
            f"mirrored {s['checked']}: {s['uploaded']} uploaded, {s['present']} already "
            f"present, {s['skipped']} skipped, {s['failed']} failed"
        )
