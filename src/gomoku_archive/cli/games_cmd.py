"""``gomoku-archive games FILE [--format jsonl|csv] [filters]``: the games of a downloaded
archive (``.sgf.gz`` or plain ``.sgf``) as JSON lines or CSV, each line checked as ``verify``
checks it. A line with problems is reported on stderr and skipped; the exit status is then 1
(2 when the file cannot be read). Light imports only: no database or network stack."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import zlib
from typing import BinaryIO, TextIO

from gomoku_archive.cli.sgf_files import open_sgf
from gomoku_archive.errors import ConfigError, UnreadableFile
from gomoku_archive.gomoku.game import Termination
from gomoku_archive.verify.game import check_line
from gomoku_archive.verify.records import FIELDS, WINNERS, GameFilter, csv_row, game_filter, record
from gomoku_archive.verify.report import Check

MAX_LINE_BYTES = 1024 * 1024
"""As ``verify``: no game of the profile comes near it, and a longer line is not read whole."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "games",
        help="print the games of a downloaded archive as JSON lines or CSV",
        description="Stream the games of a .sgf.gz archive (or a plain .sgf file, told from "
        "its bytes) as JSON lines or CSV: id, start, end, result, termination, ratings, time "
        "control, and moves as [[x, y], ...] counted from the top-left (the profile's "
        "coordinates: aa is [0, 0]). Each line is checked as verify checks it; a line with "
        "problems goes to stderr and is skipped, and the exit status is then 1.",
    )
    p.add_argument("archive", metavar="FILE.sgf.gz", help="the archive (or a plain .sgf)")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl", help="default jsonl")
    p.add_argument(
        "--result",
        action="append",
        type=str.lower,  # BLACK, Black and black alike
        choices=sorted(set(WINNERS.values())),
        help="only games won by this colour, or drawn (repeat for several)",
    )
    p.add_argument(
        "--termination",
        action="append",
        type=str.upper,  # five, Five and FIVE alike
        choices=[t.value for t in Termination],
        help="only games that ended this way (repeat for several)",
    )
    p.add_argument("--min-moves", type=int, default=0, metavar="N", help="at least N moves")
    p.add_argument(
        "--since", metavar="TIME", help="finished at or after TIME (2026-09-01 or ISO 8601, UTC)"
    )
    p.add_argument("--until", metavar="TIME", help="finished before TIME")
    p.set_defaults(run=cmd_games)


def cmd_games(args: argparse.Namespace) -> int:
    try:
        wanted = game_filter(
            results=args.result or (),
            terminations=args.termination or (),
            min_moves=args.min_moves,
            since=args.since,
            until=args.until,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    try:
        bad = write_games(args.archive, wanted, args.format, sys.stdout, sys.stderr)
    except BrokenPipeError:
        raise  # stdout was closed (`| head`): not the archive's fault; main() ends quietly
    except (OSError, EOFError, zlib.error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise UnreadableFile(f"cannot read {args.archive}: {reason}") from None
    if bad:
        print(f"gomoku-archive: {bad} lines with problems were skipped", file=sys.stderr)
    return 1 if bad else 0


def write_games(path: str, wanted: GameFilter, output_format: str, out: TextIO, err: TextIO) -> int:
    """Print the accepted games of ``path``; returns how many lines had problems."""
    writer = csv.writer(out, lineterminator="\n") if output_format == "csv" else None
    if writer is not None:
        writer.writerow(FIELDS)
    bad = 0
    with open_sgf(path) as stream:
        for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), 1):
            problem = _line_problem(raw)
            if problem is None:
                facts = check_line(raw.rstrip(b"\n").decode("utf-8"))
                if facts.problems:
                    problem = "; ".join(f"{c.value}: {m}" for c, m in facts.problems)
            if problem is not None:
                bad += 1
                print(f"{path}:{number}: {problem}", file=err)
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    _skip_rest_of_line(stream)
                continue
            if not wanted.accepts(facts):
                continue
            game = record(facts)
            if writer is not None:
                writer.writerow(csv_row(game))
            else:
                out.write(json.dumps(game, separators=(",", ":")) + "\n")
    return bad


def _line_problem(raw: bytes) -> str | None:
    """What ``verify`` says of a line before reading its game, if anything."""
    if len(raw) > MAX_LINE_BYTES:
        return f"{Check.LINE_TOO_LONG.value}: more than {MAX_LINE_BYTES} bytes"
    if not raw.endswith(b"\n"):
        return f"{Check.NO_FINAL_LF.value}: the last line does not end with LF"
    if raw == b"\n":
        return f"{Check.BLANK_LINE.value}: blank line"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{Check.NOT_UTF8.value}: not UTF-8 at byte {exc.start + 1}"
    if b"\r" in raw:
        return f"{Check.CR.value}: the line contains a carriage return (CR)"
    return None


def _skip_rest_of_line(stream: BinaryIO) -> None:
    while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
        pass
