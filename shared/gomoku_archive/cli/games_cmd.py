"""``gomoku-archive games FILE|DIR... [--format jsonl|csv] [filters]``: the games of downloaded
archives (``.sgf.gz`` or plain ``.sgf``; a directory stands for its files) as one stream of JSON
lines or CSV, each line checked as ``verify`` checks it. A line with problems is reported on
stderr (the first 20 of a file, then a count) and skipped; after ``MAX_PROBLEMS`` of them the
file is plainly no archive and the rest of it is not read. A gzip file is read to the end of its
first member, as ``verify`` reads it, and anything after it is reported. The exit status, for
all the files together, is then 1 (2 when a file cannot be read). Light imports only: no
database or network stack."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from typing import TextIO

from gomoku_archive.cli.sgf_files import FirstMember, expand_paths
from gomoku_archive.errors import ConfigError, UnreadableFile
from gomoku_archive.gomoku.game import Termination
from gomoku_archive.verify.archive import MAX_LINE_BYTES, MAX_LISTED, MAX_PROBLEMS
from gomoku_archive.verify.games_rows import (
    FIELDS,
    WINNERS,
    GameFilter,
    csv_row,
    game_filter,
    record,
)
from gomoku_archive.verify.line_check import check_line
from gomoku_archive.verify.report import Check

MAX_SHOWN = MAX_LISTED
"""Problems printed on stderr, as ``verify`` lists its first ones; the rest are counted."""
_BLANK_RUN = re.compile(rb"\n+")
_LF = ord("\n")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "games",
        help="print the games of downloaded archives as JSON lines or CSV",
        description="Stream the games of .sgf.gz archives (or plain .sgf files, told from "
        "their bytes; a directory stands for its files) as one stream of JSON lines or CSV: "
        "id, month, start, end, result, termination, ratings, time control, and moves as "
        "[[x, y], ...] counted from the top-left (the profile's coordinates: aa is [0, 0]). "
        "Each line is checked as verify checks it; a line with problems goes to stderr and is "
        "skipped, and the exit status is then 1 (2 when a file cannot be read).",
    )
    p.add_argument(
        "archives",
        nargs="+",
        metavar="FILE.sgf.gz|DIR",
        help="archives (or plain .sgf files), or directories of them",
    )
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl", help="default jsonl")
    p.add_argument(
        "--result",
        action="append",
        type=str.lower,  # BLACK, Black and black alike
        choices=sorted(set(WINNERS.values())),
        metavar="WINNER",
        help="only games won by this colour, or drawn: black, white or draw (repeat for several)",
    )
    p.add_argument(
        "--termination",
        action="append",
        type=str.upper,  # five, Five and FIVE alike
        choices=[t.value for t in Termination],
        metavar="HOW",
        help="only games that ended this way: "
        + ", ".join(t.value for t in Termination)
        + " (repeat for several)",
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
    paths = expand_paths(args.archives)
    if args.format == "csv":
        csv.writer(sys.stdout, lineterminator="\n").writerow(FIELDS)
    status = 0
    for path in paths:
        try:
            bad = write_games(str(path), wanted, args.format, sys.stdout, sys.stderr, header=False)
        except BrokenPipeError:
            raise  # stdout was closed (`| head`): not the archive's fault; main() ends quietly
        except (OSError, EOFError, zlib.error) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            if len(paths) == 1:
                raise UnreadableFile(f"cannot read {path}: {reason}") from None
            print(f"gomoku-archive: error: cannot read {path}: {reason}", file=sys.stderr)
            status = 2
            continue
        status = max(status, 1 if bad else 0)
    return status


def write_games(
    path: str,
    wanted: GameFilter,
    output_format: str,
    out: TextIO,
    err: TextIO,
    *,
    header: bool = True,
) -> int:
    """Print the accepted games of ``path``; returns how many problems were found (lines
    skipped, and what follows a gzip member). The first ``MAX_SHOWN`` go to ``err`` as
    ``FILE:LINE: check: message``, then one line says how many there were in all. After
    ``MAX_PROBLEMS`` lines with problems the rest of the file is not read (a file of bad lines
    is no archive: a gzip bomb of them must not keep the command busy for minutes).
    ``header``: the CSV header row first (a caller printing several files prints it once)."""
    writer = csv.writer(out, lineterminator="\n") if output_format == "csv" else None
    if writer is not None and header:
        writer.writerow(FIELDS)
    problems = _Problems(path, err)
    stopped = False
    with open(path, "rb") as stream:
        source = FirstMember(stream)
        for number, raw, count in _lines(source.blocks()):
            problem = _line_problem(raw)
            if problem is None:
                assert raw is not None
                facts = check_line(raw.rstrip(b"\n").decode("utf-8"))
                if facts.problems:
                    problem = "; ".join(f"{c.value}: {m}" for c, m in facts.problems)
            if problem is not None:
                problems.line(number, problem, count)
                if problems.lines >= MAX_PROBLEMS:
                    stopped = True
                    break
                continue
            if not wanted.accepts(facts):
                continue
            game = record(facts)
            if writer is not None:
                writer.writerow(csv_row(game))
            else:
                out.write(json.dumps(game, separators=(",", ":")) + "\n")
    if stopped:
        problems.summary()
        problems.file(
            f"stopped after {problems.lines:,} lines with problems: the rest of the file was "
            "not read (is it a gomoku-party-sgf-1 archive?)"
        )
        return problems.lines
    if source.after is not None:
        check, message = source.after
        problems.file(f"{check.value}: {message}")
    problems.summary()
    return problems.lines + (source.after is not None)


class _Problems:
    """Lines with problems, shown on ``err`` up to ``MAX_SHOWN`` (as ``verify`` lists its first
    ones) and all counted: a file of a million bad lines writes a screenful, not gigabytes."""

    def __init__(self, path: str, err: TextIO) -> None:
        self._path = path
        self._err = err
        self.lines = 0
        self._shown = 0

    def line(self, number: int, message: str, times: int = 1) -> None:
        """Line ``number`` has a problem; ``times`` > 1: so do the lines after it (a run of
        blank lines), in the same words."""
        for offset in range(min(times, MAX_SHOWN - self._shown)):
            print(f"{self._path}:{number + offset}: {message}", file=self._err)
        self._shown = min(MAX_SHOWN, self._shown + times)
        self.lines += times

    def file(self, message: str) -> None:
        """A problem of the file as a whole: always shown."""
        print(f"{self._path}: {message}", file=self._err)

    def summary(self) -> None:
        if not self.lines:
            return
        hidden = self.lines - self._shown
        more = f" ({hidden:,} of them not shown)" if hidden else ""
        print(
            f"gomoku-archive: {self.lines:,} lines with problems were skipped{more}",
            file=self._err,
        )


def _lines(blocks: Iterable[bytes]) -> Iterator[tuple[int, bytes | None, int]]:
    """The lines of ``blocks`` as ``(line number, the line with its LF, 1)``; a run of blank
    lines as one ``(its first line's number, b"\\n", how many)``, so a gzip bomb of newlines
    costs a regex match per block, not a Python step per line; a line over ``MAX_LINE_BYTES``
    as ``(number, None, 1)``, never held whole. The last line may lack its LF."""
    number = 1
    pending = bytearray()
    skipping = False
    for block in blocks:
        start, size = 0, len(block)
        while start < size:
            if not pending and not skipping and block[start] == _LF:
                run = _BLANK_RUN.match(block, start)
                assert run is not None
                count = run.end() - start
                yield number, b"\n", count
                number += count
                start = run.end()
                continue
            newline = block.find(b"\n", start)
            end = size if newline < 0 else newline + 1
            if not skipping:
                if len(pending) + (size if newline < 0 else newline) - start > MAX_LINE_BYTES:
                    yield number, None, 1
                    pending.clear()
                    skipping = True
                elif newline < 0:
                    pending += block[start:]
                elif pending:
                    pending += block[start:end]
                    yield number, bytes(pending), 1
                    pending.clear()
                else:
                    yield number, block[start:end], 1
            if newline >= 0:
                skipping = False
                number += 1
            start = end
    if pending:
        yield number, bytes(pending), 1


def _line_problem(raw: bytes | None) -> str | None:
    """What ``verify`` says of a line before reading its game, if anything."""
    if raw is None:
        return f"{Check.LINE_TOO_LONG.value}: more than {MAX_LINE_BYTES} bytes"
    if raw == b"\n":
        return f"{Check.BLANK_LINE.value}: blank line"
    if not raw.endswith(b"\n"):
        return f"{Check.NO_FINAL_LF.value}: the last line does not end with LF"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{Check.NOT_UTF8.value}: not UTF-8 at byte {exc.start + 1}"
    if b"\r" in raw:
        return f"{Check.CR.value}: the line contains a carriage return (CR)"
    return None
