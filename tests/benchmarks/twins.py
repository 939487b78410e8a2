"""Every fast path against the reference it accelerates (docs/architecture.md, "Fast paths
(twins)"), each on a realistic workload: the demo player's games of one month, as the export reads
them (candidate rows, moves as jsonb's text) and as it writes them (archive lines, the gzip
archive).

    python -m tests.benchmarks.twins PAIR fast|reference [--rounds N] [--games N]
    python -m tests.benchmarks.twins --list

A run builds the same workload in either mode (the month is generated once and kept in the
temporary directory), runs one side of the pair ``rounds`` times and prints what it computed as
a digest: both sides print the same one (tests/benchmarks/test_twins.py holds them equal). Time
whole runs, the reference's and the fast path's in turn, and take the ratio of the two: the
set-up counts on both sides, so the ratio slightly understates the pair's own speed-up, which the
printed ``work`` seconds show."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any
from unittest import mock
from uuid import UUID

import structlog
from aiohttp import hdrs, web
from aiohttp.test_utils import make_mocked_request

from gomoku_archive import logs
from gomoku_archive.catalog.manifest import MonthSummary, build_manifest
from gomoku_archive.demo.games import generate_month
from gomoku_archive.export.tally import Tally
from gomoku_archive.gomoku.game import Reason, Result, Termination
from gomoku_archive.gomoku.lines import (
    PAIR_SHIFT,
    bits_have_five,
    has_five,
    line_layout,
    point_bit,
)
from gomoku_archive.gomoku.replay import coerce_moves, is_valid_bitboards, parse_moves, replay
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name
from gomoku_archive.profile.row_pass import (
    BLACK_RATING,
    NODES,
    RESULT,
    TIME_CONTROL,
    WHITE_RATING,
    PassedGame,
    pass_row,
)
from gomoku_archive.profile.stats import StatsCounter
from gomoku_archive.profile.stream import ArchiveStream
from gomoku_archive.profile.writer import GameRecord, format_timestamp, game_parts, order_key
from gomoku_archive.sgf import check_chunks, checker, parse, parser
from gomoku_archive.verify.line_check import GameFacts, check_game, check_line
from gomoku_archive.web.api import manifest as manifest_api
from gomoku_archive.web.keys import MANIFEST
from gomoku_archive.web.manifest_cache import ManifestCache, Snapshot, render

MONTH = Month(2026, 8)
GAMES = 4000
"""Valid games of the month (the demo adds about 1 % broken candidates, all kept)."""
SEED = 35
CHUNK = 1 << 16
"""Bytes per read of a file by ``sgf check``."""
BATCH = 2000
"""Rows per batch, as the export's cursor fetches them."""
MODES = ("fast", "reference")


# --- the workload ---------------------------------------------------------------------------------


def jsonb_text(value: object) -> str:
    """PostgreSQL's ``jsonb::text`` of a JSON value: object keys ordered by length then bytes,
    ``", "`` and ``": "`` between items; what the export reads from the moves column."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(str(k).encode()), str(k).encode()))
        return "{" + ", ".join(f"{json.dumps(k)}: {jsonb_text(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    return json.dumps(value)


def _generated_rows(games: int) -> list[list[Any]]:
    """The month's candidate rows as JSON values, in archive order (XET second, then id)."""
    rows: list[list[Any]] = []
    for game in generate_month(MONTH, games, seed=SEED):
        if not game.in_scope or game.finished_at is None:
            continue
        started, finished = game.started_at.astimezone(UTC), game.finished_at.astimezone(UTC)
        rows.append(
            [
                str(game.id),
                game.status,
                game.board_size,
                started.isoformat(),
                finished.isoformat(),
                game.result,
                game.termination,
                jsonb_text(game.moves),
                game.time_control_seconds,
                game.black_rating,
                game.white_rating,
            ]
        )
    rows.sort(key=lambda row: (row[4][:19], row[0]))
    return rows


def _cached_rows(games: int) -> list[list[Any]]:
    folder = Path(tempfile.gettempdir()) / "gomoku-archive-twins"
    path = folder / f"candidates-{MONTH}-{games}-{SEED}.json"
    if path.exists():
        rows: list[list[Any]] = json.loads(path.read_text("utf-8"))
        return rows
    rows = _generated_rows(games)
    folder.mkdir(exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_text(json.dumps(rows), "utf-8")
    partial.replace(path)
    return rows


def _instant(text: str) -> datetime:
    # asyncpg gives datetime.UTC in the pool's UTC sessions; the one-pass reader relies on it.
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


Row = tuple[Any, ...]
"""A candidate's columns (``CandidateColumns``), indexable."""


@dataclass
class Workload:
    """One month of candidates and what the export makes of them (each built on first use)."""

    games: int

    @cached_property
    def rows(self) -> list[Row]:
        """The candidates' columns as the cursor gives them, in archive order."""
        return [
            (UUID(row[0]), *row[1:3], _instant(row[3]), _instant(row[4]), *row[5:])
            for row in _cached_rows(self.games)
        ]

    @cached_property
    def records(self) -> list[GameRecord]:
        """The published games, in archive order."""
        return [
            r for r in (classify(Candidate(*row)) for row in self.rows) if not isinstance(r, Reason)
        ]

    @cached_property
    def lines(self) -> list[str]:
        """The archive's lines, each with its LF."""
        return ["".join(game_parts(record)) for record in self.records]

    @cached_property
    def text(self) -> bytes:
        return "".join(self.lines).encode()

    @cached_property
    def archive(self) -> tuple[str, bytes]:
        """The archive's file name and bytes, as the export writes them."""
        stream = ArchiveStream()
        data = stream.write(self.text) + stream.finish()
        return archive_file_name(MONTH, hashlib.sha256(data).hexdigest()), data


# --- the pairs ------------------------------------------------------------------------------------

Side = Callable[[], object]
"""One round of one side of a pair; returns what it computed (the digest is made of it)."""


@dataclass(frozen=True)
class Pair:
    name: str
    fast: str
    reference: str
    rounds: int
    """Rounds of the default workload: a few seconds of the reference's work."""
    sides: Callable[[Workload], tuple[Side, Side]]
    """The workload's (fast, reference) sides, built from the month (the set-up)."""


def _chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


GENERAL_TOKENS = re.compile(r"(?!)()()|(?!)()()|" + parser._GENERAL_TOKENS)
"""The parser's token regex with its hot alternatives (groups 1 to 4) never matching."""


@contextmanager
def general_tokens() -> Iterator[None]:
    with mock.patch.object(parser, "_TOKEN", GENERAL_TOKENS):
        yield


def _no_runs(self: object, run: str, line: int, column: int) -> bool:
    return False


@contextmanager
def node_by_node() -> Iterator[None]:
    """The checker without its runs of moves: every node through ``_GameChecker.node``."""
    with mock.patch.object(checker._GameChecker, "moves", _no_runs):
        yield


def _tree_summary(trees: Sequence[object]) -> object:
    return len(trees), trees[0], trees[-1]


def sgf_tokens(month: Workload) -> tuple[Side, Side]:
    text = month.text

    def fast() -> object:
        return _tree_summary(parse(text))

    def reference() -> object:
        with general_tokens():
            return _tree_summary(parse(text))

    return fast, reference


def _check_summary(chunks: list[bytes]) -> object:
    report = check_chunks(chunks)
    return report.parse_error, report.games, report.findings, report.counts


def sgf_move_runs(month: Workload) -> tuple[Side, Side]:
    chunks = _chunks(month.text)

    def fast() -> object:
        return _check_summary(chunks)

    def reference() -> object:
        with node_by_node():
            return _check_summary(chunks)

    return fast, reference


def parse_moves_pair(month: Workload) -> tuple[Side, Side]:
    texts = [row[7] for row in month.rows]

    def fast() -> object:
        return [parse_moves(text) for text in texts]

    def reference() -> object:
        return [coerce_moves(None if t is None else json.loads(t)) for t in texts]

    return fast, reference


def _reference_row(row: Row) -> PassedGame | Reason:
    """What the reference path makes of a row, in ``pass_row``'s terms."""
    outcome = classify(Candidate(*row))
    if isinstance(outcome, Reason):
        return outcome
    parts = game_parts(outcome)
    finished, game_id = order_key(outcome)
    return (
        "".join(parts),
        parts[1:-1],
        outcome.result,
        outcome.termination.value,
        outcome.time_control_seconds,
        outcome.black_rating,
        outcome.white_rating,
        format_timestamp(finished)[:-1],
        game_id,
    )


def row_pass(month: Workload) -> tuple[Side, Side]:
    rows = month.rows

    def fast() -> object:
        return [pass_row(row) or _reference_row(row) for row in rows]

    def reference() -> object:
        return [_reference_row(row) for row in rows]

    return fast, reference


def _canonical(document: dict[str, Any]) -> str:
    """A JSON document with its keys sorted: counters list their keys in the order met."""
    return json.dumps(document, sort_keys=True)


def stats_add(month: Workload) -> tuple[Side, Side]:
    """The games the one-pass reader takes (nearly all), counted as the export counts them."""
    passed: list[PassedGame] = []
    games: list[tuple[GameRecord, list[str]]] = []
    for row in month.rows:
        game = pass_row(row)
        record = classify(Candidate(*row))
        if game is not None and isinstance(record, GameRecord):
            passed.append(game)
            games.append((record, game_parts(record)))

    def fast() -> object:
        counter = StatsCounter()
        for start in range(0, len(passed), BATCH):
            batch = passed[start : start + BATCH]
            counter.add_many(
                results=map(RESULT, batch),
                nodes=list(map(NODES, batch)),
                time_controls=map(TIME_CONTROL, batch),
                ratings=chain(map(BLACK_RATING, batch), map(WHITE_RATING, batch)),
            )
        return _canonical(counter.to_json())

    def reference() -> object:
        counter = StatsCounter()
        for record, parts in games:
            counter.add(record, parts)
        return _canonical(counter.to_json())

    return fast, reference


def take_rows(month: Workload) -> tuple[Side, Side]:
    rows = month.rows

    def fast() -> object:
        tally = Tally(str(MONTH))
        lines = []
        for start in range(0, len(rows), BATCH):
            lines += tally.take_rows(rows[start : start + BATCH])
        return lines, _canonical(tally.to_json())

    def reference() -> object:
        tally = Tally(str(MONTH))
        lines = [tally.take(Candidate(*row)) for row in rows]
        return [line for line in lines if line is not None], _canonical(tally.to_json())

    return fast, reference


def _facts(facts: GameFacts) -> object:
    return facts.gn, facts.result, facts.problems, len(facts.moves)


def verify_line(month: Workload) -> tuple[Side, Side]:
    lines = [line[:-1] for line in month.lines]

    def fast() -> object:
        return [_facts(check_line(line)) for line in lines]

    def reference() -> object:
        return [_facts(check_game(parse(line)[0])) for line in lines]

    return fast, reference


def _outcome(record: GameRecord) -> tuple[Result, Termination]:
    return record.result, record.termination


def bitboards(month: Workload) -> tuple[Side, Side]:
    """The verifier's replay of a valid line: bitboards built from the moves' texts through a
    table, as ``check_line_fast`` does, against ``replay`` of the moves."""
    bit_of = {
        f";{colour}[{x}{y}]": point_bit(ord(x) - 97, ord(y) - 97)
        for colour in "BW"
        for x in "abcdefghijklmno"
        for y in "abcdefghijklmno"
    }
    games = [
        (re.findall(r";[BW]\[..\]", line), list(record.moves), *_outcome(record))
        for line, record in zip(month.lines, month.records, strict=True)
    ]
    bit = bit_of.__getitem__

    def fast() -> object:
        valid = 0
        for played, _, result, termination in games:
            black, white = sum(map(bit, played[0::2])), sum(map(bit, played[1::2]))
            n = len(played)
            valid += is_valid_bitboards(black, white, bit(played[-1]), n, result, termination)
        return valid

    def reference() -> object:
        return sum(
            replay(moves, result, termination).valid for _, moves, result, termination in games
        )

    return fast, reference


def five_detectors(month: Workload) -> tuple[Side, Side]:
    """Every published game's final position (and the one before its last move, as the replay
    and the verifier both look at it) built and searched for five: a pair bitboard against the
    line buffer."""
    layout = line_layout(15, 15)
    cells = layout.cells
    pair_bit = {
        (move.color.value, move.x, move.y): point_bit(move.x, move.y)
        << (PAIR_SHIFT if move.color.value == "W" else 0)
        for record in month.records
        for move in record.moves
    }
    games = [
        ([pair_bit[m.color.value, m.x, m.y] for m in r.moves], [m.y * 15 + m.x for m in r.moves])
        for r in month.records
    ]

    def fast() -> object:
        fives = 0
        for bits, _ in games:
            board = sum(bits)
            if bits_have_five(board):
                fives += 1 + bits_have_five(board ^ bits[-1])
        return fives

    def reference() -> object:
        fives = 0
        for _, points in games:
            board = bytearray(layout.length)
            stone = 1
            for point in points:
                a, b, c, d = cells[point]
                board[a] = board[b] = board[c] = board[d] = stone
                stone = 3 - stone
            if has_five(board):
                a, b, c, d = cells[points[-1]]
                board[a] = board[b] = board[c] = board[d] = 0
                fives += 1 + has_five(board)
        return fives

    return fast, reference


def timestamps(month: Workload) -> tuple[Side, Side]:
    """XST and XET of every candidate: the writer's ``format_timestamp`` against the plain
    formatting it stands for (tests/unit/profile/test_profile.py's reference)."""
    instants: list[datetime] = [instant for row in month.rows for instant in (row[3], row[4])]

    def plain(instant: datetime) -> str:
        t = instant.astimezone(UTC).replace(microsecond=0)
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"

    def fast() -> object:
        return list(map(format_timestamp, instants))

    def reference() -> object:
        return list(map(plain, instants))

    return fast, reference


ROUTES = (
    ("GET", "/api/v1/database", "/api/v1/database", 200, 48_213),
    ("GET", "/database/", "/database/", 200, 31_877),
    ("HEAD", "/api/v1/database", "/api/v1/database", 200, 0),
    ("GET", "/api/v1/database", "/api/v1/database", 304, 0),
)


def _requests(month: Workload) -> list[tuple[str, str, str, int, int, float, str]]:
    """An access log's worth of requests: the manifest, the pages, and a download of each
    month's file and checksum (the demo's file names), with ids and durations."""
    name, data = month.archive
    download = "/api/v1/database/files/{file}"
    requests: list[tuple[str, str, str, int, int, float, str]] = []
    for k in range(len(month.rows)):
        method, route, path, status, sent = ROUTES[k % len(ROUTES)]
        if k % 5 == 4:
            file = name if k % 2 else name + ".sha256"
            method, route, path = "GET", download, f"/api/v1/database/files/{file}"
            status, sent = (206, 1 << 18) if k % 3 == 0 else (200, len(data))
        request_id = UUID(int=k * 2654435761 % (1 << 128)).hex
        requests.append(
            (method, route, path, status, sent, round(0.05 + k % 97 * 0.13, 2), request_id)
        )
    return requests


@contextmanager
def _access_log() -> Iterator[io.StringIO]:
    """``configure_logging`` as ``serve`` runs it (JSON lines), into memory. Each request binds
    its id (``bind``) as the middleware does, by the cheapest call: the binding is not the
    writers' work."""
    stream = io.StringIO()
    logs.configure_logging(fmt="json", level="INFO", stream=stream)
    try:
        yield stream
    finally:
        structlog.contextvars.clear_contextvars()
        logs._direct_setup.clear()
        logs._direct.clear()
        structlog.reset_defaults()


bind = structlog.contextvars.bind_contextvars


def _info_lines(
    requests: list[tuple[str, str, str, int, int, float, str]],
    make_info: Callable[[], Callable[..., object]],
) -> str:
    """The access log of ``requests`` written by ``DirectLogger.info`` calls, the info method
    made by ``make_info`` once the log is configured: ``json_line``'s pair and
    ``request_line``'s reference."""
    with _access_log() as stream:
        info = make_info()
        for method, route, path, status, sent, duration, request_id in requests:
            bind(request_id=request_id)
            info(
                "http_request",
                method=method,
                route=route,
                path=path,
                status=status,
                bytes=sent,
                duration_ms=duration,
            )
        return stream.getvalue()


def json_line(month: Workload) -> tuple[Side, Side]:
    """``DirectLogger.info``'s JSON line, built directly, against the structlog chain that the
    direct logger runs otherwise (``logs._direct_logger``)."""
    requests = _requests(month)

    def fast() -> object:
        return _info_lines(requests, lambda: logs.get_direct_logger(logs.ACCESS_LOGGER).info)

    def reference() -> object:
        return _info_lines(requests, lambda: logs._direct_logger(logs.ACCESS_LOGGER).info)

    return fast, reference


def request_line(month: Workload) -> tuple[Side, Side]:
    """The access line by one format string (``DirectLogger.http_request``) against
    ``json_line`` (``DirectLogger.info``)."""
    requests = _requests(month)
    access = logs.get_direct_logger(logs.ACCESS_LOGGER)

    def fast() -> object:
        with _access_log() as stream:
            for method, route, path, status, sent, duration, request_id in requests:
                bind(request_id=request_id)
                access.http_request(method, route, path, status, sent, duration)
            return stream.getvalue()

    def reference() -> object:
        return _info_lines(requests, lambda: access.info)

    return fast, reference


class _FixedManifest(ManifestCache):
    """A manifest cache holding one snapshot (no database)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._fixed = snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._fixed


def manifest_get(month: Workload) -> tuple[Side, Side]:
    """``GET /api/v1/database`` without preconditions, the API's busiest route: the handler's
    plain 200 built at once, against the RFC decision (``respond_bytes``) that a request with
    preconditions takes. Handler only (mocked requests): the server's own work per request is
    the same on both sides and left out, so this is the short cut's most favourable measure."""
    name, data = month.archive
    counter = StatsCounter()
    for record in month.records:
        counter.add(record, game_parts(record))
    summary = MonthSummary(
        month=str(MONTH),
        games=len(month.records),
        file_name=name,
        bytes=len(data),
        uncompressed_bytes=len(month.text),
        sha256=hashlib.sha256(data).hexdigest(),
        published_at=datetime(2026, 9, 1, 0, 10, tzinfo=UTC),
        candidate_games=len(month.rows),
        excluded_games=len(month.rows) - len(month.records),
        exclusions={"occupied": len(month.rows) - len(month.records)},
        results={"FIVE": len(month.records)},
        stats=counter.result(),
    )
    app = web.Application()
    app[MANIFEST] = _FixedManifest(render(build_manifest([summary] * 12)))
    agents = ("curl/8.5.0", "Wget/1.21.4", "Mozilla/5.0", "python-httpx/0.28.1")
    kinds = [
        make_mocked_request(
            "GET",
            "/api/v1/database",
            headers={hdrs.USER_AGENT: agent, hdrs.ACCEPT_ENCODING: encoding},
            app=app,
        )
        for agent in agents
        for encoding in ("gzip, deflate, br", "identity")
    ]
    requests = [kinds[k % len(kinds)] for k in range(len(month.rows))]

    async def serve() -> object:
        # A fresh request object each time, as the server makes one per request: nothing that
        # a request caches on itself (its parsed headers) carries over.
        answers = [await manifest_api.manifest(request.clone()) for request in requests]
        return [(a.status, a.body, sorted(a.headers.items())) for a in answers[-2:]]

    def fast() -> object:
        return asyncio.run(serve())

    def reference() -> object:
        # Every benchmark request carries a User-Agent: each takes the decision's path.
        with mock.patch.object(manifest_api, "_CONDITIONAL", (hdrs.USER_AGENT,)):
            return asyncio.run(serve())

    return fast, reference


PAIRS = {
    pair.name: pair
    for pair in (
        Pair("sgf-tokens", "parser hot tokens", "general tokens", 2, sgf_tokens),
        Pair("sgf-move-runs", "checker runs of moves", "node by node", 3, sgf_move_runs),
        Pair(
            "parse-moves",
            "parse_moves table of items",
            "coerce_moves(json.loads)",
            35,
            parse_moves_pair,
        ),
        Pair("row-pass", "pass_row", "classify + game_parts", 10, row_pass),
        Pair("stats-add", "StatsCounter.add_many", "StatsCounter.add", 140, stats_add),
        Pair("take-rows", "Tally.take_rows", "Tally.take", 10, take_rows),
        Pair("verify-line", "check_line_fast", "parse + check_game", 5, verify_line),
        Pair("bitboards", "is_valid_bitboards", "replay", 60, bitboards),
        Pair("five-detectors", "bits_have_five", "line buffer has_five", 140, five_detectors),
        Pair("timestamps", "format_timestamp", "plain formatting", 100, timestamps),
        Pair("json-line", "logs.json_line", "structlog chain", 40, json_line),
        Pair("request-line", "logs.request_line", "logs.json_line", 60, request_line),
        Pair("manifest-get", "plain GET short cut", "respond_bytes", 20, manifest_get),
    )
}


def run(pair: Pair, mode: str, rounds: int, games: int) -> tuple[float, float, str]:
    """Set up, then ``rounds`` rounds of one side: (set-up seconds, work seconds, digest)."""
    started = time.perf_counter()
    fast, reference = pair.sides(Workload(games))
    side = fast if mode == "fast" else reference
    working = time.perf_counter()
    result: object = None
    for _ in range(rounds):
        result = side()
    done = time.perf_counter()
    if isinstance(result, str):  # log lines: the time each was written differs
        result = re.sub(r'"timestamp": "[^"]*"', "", result)
    digest = hashlib.sha256(repr(result).encode()).hexdigest()[:16]
    return working - started, done - working, digest


def main(argv: list[str] | None = None) -> int:
    parser_ = argparse.ArgumentParser(prog="python -m tests.benchmarks.twins", description=__doc__)
    parser_.add_argument("pair", nargs="?", choices=sorted(PAIRS))
    parser_.add_argument("mode", nargs="?", choices=MODES)
    parser_.add_argument("--rounds", type=int, help="rounds of work (default: the pair's)")
    parser_.add_argument("--games", type=int, default=GAMES, help=f"valid games (default {GAMES})")
    parser_.add_argument("--list", action="store_true", help="list the pairs")
    args = parser_.parse_args(argv)
    if args.list:
        for pair in PAIRS.values():
            print(f"{pair.name:15} {pair.fast}  <-  {pair.reference}")
        return 0
    if args.pair is None or args.mode is None:
        parser_.error("give a pair and a mode (or --list)")
    pair = PAIRS[args.pair]
    rounds = args.rounds or pair.rounds
    setup, work, digest = run(pair, args.mode, rounds, args.games)
    print(
        f"{pair.name} {args.mode}: {rounds} rounds, set-up {setup:.2f} s, "
        f"work {work:.2f} s, digest {digest}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
