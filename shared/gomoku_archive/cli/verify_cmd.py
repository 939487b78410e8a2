"""``gomoku-archive verify ARCHIVE.sgf.gz|DIR... [--sha256 FILE] [--json]``: what a downloader
runs to check archives against the ``gomoku-party-sgf-1`` profile. The checks live in
``gomoku_archive.verify.archive``; this module only reads the files and prints the reports.

Exit status, for all the files together: 0 when every check holds, 1 when problems were found,
2 when a file cannot be read (argparse also exits 2 on bad usage).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from gomoku_archive.cli.sgf_files import expand_paths, is_gzip
from gomoku_archive.errors import ArchiveError, UnreadableFile
from gomoku_archive.verify.archive import ArchiveVerifier
from gomoku_archive.verify.report import VerifyReport

_READ_BLOCK = 1024 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check downloaded archives against the gomoku-party-sgf-1 profile",
        description="Check downloaded .sgf.gz archives: checksum, gzip framing, encoding, "
        "every game's properties and moves, and the order of the games; a directory stands "
        "for its .sgf.gz and .sgf files. One report per file; the exit status is 0 when all "
        "checks of every file hold, 1 when problems were found, 2 when a file cannot be read.",
    )
    p.add_argument(
        "archives",
        nargs="+",
        metavar="ARCHIVE.sgf.gz|DIR",
        help="downloaded archives, or directories of them",
    )
    p.add_argument(
        "--sha256",
        metavar="FILE",
        help="the checksum file of a single archive (default: ARCHIVE.sgf.gz.sha256 beside "
        "each archive, when present)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON on stdout (a list of reports for several files)",
    )
    p.set_defaults(run=cmd_verify, parser=p)


EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2


def cmd_verify(args: argparse.Namespace) -> int:
    paths = expand_paths(args.archives)
    several = len(paths) > 1 or any(Path(a).is_dir() for a in args.archives)
    if args.sha256 and several:
        args.parser.error(
            "--sha256 names the checksum file of one archive; with several, "
            "each archive's ARCHIVE.sha256 beside it is read"
        )
    status = EXIT_OK
    documents: list[dict[str, object]] = []
    counts = {"OK": 0, "with problems": 0, "unreadable": 0}
    for index, archive in enumerate(paths):
        try:
            report = verify_file(archive, args.sha256, quiet=args.json)
        except ArchiveError as exc:
            if not several:
                raise
            print(f"gomoku-archive: error: {exc}", file=sys.stderr)
            documents.append({"fileName": archive.name, "path": str(archive), "error": str(exc)})
            counts["unreadable"] += 1
            status = max(status, EXIT_UNREADABLE)
            continue
        counts["OK" if report.ok else "with problems"] += 1
        status = max(status, EXIT_OK if report.ok else EXIT_PROBLEMS)
        if args.json:
            documents.append(
                {**report.as_json(), "path": str(archive)} if several else report.as_json()
            )
        else:
            if index:
                print()
            print(render(report))
    if args.json:
        print(json.dumps(documents if several else documents[0], indent=2, ensure_ascii=False))
    elif several:
        summary = ", ".join(f"{count:,} {what}" for what, count in counts.items() if count)
        print(f"\n{len(paths):,} files: {summary}")
    return status


def verify_file(archive: Path, sha256: str | None, *, quiet: bool) -> VerifyReport:
    """One archive's report; raises ``UnreadableFile`` when it (or its named checksum file)
    cannot be read."""
    checksum = _read_checksum(archive, sha256)
    try:
        with (
            archive.open("rb") as stream,
            _progress(archive.stat().st_size, quiet=quiet) as advance,
        ):
            # gzip or plain SGF is told from the bytes (gzip's magic), never from the name.
            plain = not is_gzip(stream.peek(2)[:2])
            verifier = ArchiveVerifier(file_name=archive.name, checksum_file=checksum, plain=plain)
            for chunk in iter(lambda: stream.read(_READ_BLOCK), b""):
                verifier.feed(chunk)
                advance(len(chunk))
    except OSError as exc:
        raise UnreadableFile(f"cannot read {archive}: {exc.strerror or exc}") from None
    return verifier.finish()


def _read_checksum(archive: Path, named: str | None) -> bytes | None:
    """The checksum file's bytes: the one named, else ``ARCHIVE.sha256`` if it exists."""
    path = Path(named) if named else archive.with_name(archive.name + ".sha256")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if named:
            raise UnreadableFile(f"no such checksum file: {path}") from None
        return None
    except OSError as exc:
        raise UnreadableFile(f"cannot read {path}: {exc.strerror or exc}") from None


@contextmanager
def _progress(total: int, *, quiet: bool) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr for a large archive on a terminal; silent otherwise."""
    if quiet or total < 64 * _READ_BLOCK or not sys.stderr.isatty():
        yield lambda _: None
        return
    columns = (TextColumn("verifying"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("verify", total=total)
        yield lambda n: bar.advance(task, n)


def render(report: VerifyReport) -> str:
    """The human summary: what the archive holds, then the problems or OK."""
    name = report.file_name or "archive"
    results = ", ".join(f"{what} {count}" for what, count in report.terminations.items())
    lines = [
        name,
        f"  sha256   {report.sha256}  (checksum file: {report.checksum.value})",
        f"  size     {report.compressed_bytes:,} bytes, {report.uncompressed_bytes:,} uncompressed",
        f"  games    {report.games:,}",
        f"  results  {results}",
    ]
    lines += [f"  note     {note}" for note in report.notes]
    if report.ok:
        lines.append("OK: every check of gomoku-party-sgf-1 holds")
        return "\n".join(lines)
    lines.append(f"PROBLEMS: {report.problem_count:,}")
    for problem in report.problems:
        where = f"line {problem.line}" if problem.line else "file"
        lines.append(f"  {where:<11} {problem.check.value:<20} {problem.message}")
    hidden = report.problem_count - len(report.problems)
    if hidden:
        lines.append(f"  ... and {hidden:,} more")
    return "\n".join(lines)
