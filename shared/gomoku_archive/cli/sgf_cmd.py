"""``gomoku-archive sgf check FILE... [--json]``: check SGF files like a compiler.

For each file: the structural result (parsed, with the number of games, or the parse error
with its line and column), then one line per semantic finding, then a summary. Files are read
in chunks and never written. Exit status: 0 nothing found, 1 warnings only, 2 errors (a parse
error is one), 3 a file could not be read; with several files, the highest.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Iterator
from typing import Any

from gomoku_archive.cli.sgf_files import open_sgf
from gomoku_archive.sgf import CheckReport, Finding, check_chunks

EXIT_CLEAN = 0
EXIT_WARNINGS = 1
EXIT_ERRORS = 2
EXIT_UNREADABLE = 3
_CHUNK_SIZE = 1 << 20

_EPILOG = (
    "exit status: 0 nothing found, 1 warnings only, 2 errors (a parse error counts as one), "
    "3 a file could not be read; with several files, the highest. Finding codes are listed "
    'in docs/downloaders.md ("sgf check findings").'
)
"""One paragraph, wrapped to the terminal like the description (it used to be kept raw, and
the description with it, one 150-column line)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sgf = subparsers.add_parser(
        "sgf",
        help="work with SGF game records",
        description="Tools for SGF files of any origin; `sgf check FILE...` validates them.",
    )
    commands = sgf.add_subparsers(dest="sgf_command", metavar="SUBCOMMAND", required=True)
    check = commands.add_parser(
        "check",
        help="check SGF files: structure first, then FF[4] and Gomoku semantics",
        description="Parse each FILE, then check what its games mean: board sizes, points, "
        "node structure, property values, and the main line of Gomoku (GM[4]) games.",
        epilog=_EPILOG,
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="SGF file to check")
    check.add_argument("--json", action="store_true", help="print one JSON document")
    check.set_defaults(run=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    status = EXIT_CLEAN
    documents: list[dict[str, Any]] = []
    totals = [0, 0]  # errors, warnings
    for name in args.files:
        try:
            report = _check_file(name)
        except UNREADABLE as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            print(f"gomoku-archive: error: cannot read {name}: {reason}", file=sys.stderr)
            documents.append(_unreadable_document(name, reason))
            status = max(status, EXIT_UNREADABLE)
            continue
        status = max(status, exit_status(report))
        totals[0] += report.errors
        totals[1] += report.warnings
        if args.json:
            documents.append(report_document(name, report))
        else:
            for line in report_lines(name, report):
                print(line)
    if args.json:
        print(json.dumps(documents, indent=2, ensure_ascii=False))
    elif len(args.files) > 1:
        print(
            f"total: {len(args.files)} files, {_count(totals[0], 'error')}, "
            f"{_count(totals[1], 'warning')}"
        )
    return status


def exit_status(report: CheckReport) -> int:
    """0, 1 or 2 for one file's report (see the module docstring)."""
    if report.errors:
        return EXIT_ERRORS
    return EXIT_WARNINGS if report.warnings else EXIT_CLEAN


def report_lines(name: str, report: CheckReport) -> Iterator[str]:
    """The compiler-style lines for one file."""
    error = report.parse_error
    if error is None:
        yield f"{name}: parse ok: {_count(report.games, 'game')}"
    else:
        read = f" (after {_count(report.games, 'complete game')})" if report.games else ""
        yield f"{name}:{error.line}:{error.column}: parse error: {error.message}{read}"
    for finding in report.findings:
        game, node = finding.node_path.split(":")
        yield (
            f"{name}:{finding.line}:{finding.column}: {finding.severity} {finding.code} "
            f"[game {game}, node {node}] {finding.message}"
        )
    if report.unlisted:
        yield (
            f"{name}: ... and {report.unlisted:,} more findings "
            f"(the first {len(report.findings):,} are listed)"
        )
    yield f"{name}: {_count(report.errors, 'error')}, {_count(report.warnings, 'warning')}"


def report_document(name: str, report: CheckReport) -> dict[str, Any]:
    """The JSON object for one file."""
    error = report.parse_error
    return {
        "file": name,
        "read_error": None,
        "parse": {
            "ok": error is None,
            "error": None
            if error is None
            else {"line": error.line, "column": error.column, "message": error.message},
        },
        "games": report.games,
        "findings": [_finding_document(finding) for finding in report.findings],
        "unlisted": report.unlisted,
        "counts": {"errors": report.errors, "warnings": report.warnings},
    }


def _finding_document(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "severity": finding.severity,
        "line": finding.line,
        "column": finding.column,
        "node": finding.node_path,
        "message": finding.message,
    }


def _unreadable_document(name: str, reason: str) -> dict[str, Any]:
    return {
        "file": name,
        "read_error": reason,
        "parse": None,
        "games": 0,
        "findings": [],
        "unlisted": 0,
        "counts": {"errors": 0, "warnings": 0},
    }


UNREADABLE = (OSError, EOFError, zlib.error)
"""How reading a file fails: the file itself, or a truncated or corrupt gzip stream."""


def _check_file(name: str) -> CheckReport:
    # .sgf.gz or plain .sgf, told from the bytes; positions are in the decompressed text.
    with open_sgf(name) as file:
        return check_chunks(iter(lambda: file.read(_CHUNK_SIZE), b""))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
