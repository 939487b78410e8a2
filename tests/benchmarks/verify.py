"""The downloader's tools (issue 11, targets 3 and 4): ``gomoku-archive verify`` on an exported
archive against sgfmill parsing every line plus a plain dictionary-board replay (and, for scale,
``gzip -dc | wc -l``); ``gomoku-archive sgf check`` on the decompressed collection against
sgfmill's ``parse_sgf_collection`` of the same bytes, after checking that both read the same
move sequences."""

from __future__ import annotations

import asyncio
import gzip
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sgfmill import sgf_grammar

from gomoku_archive.profile.months import Month
from gomoku_archive.sgf import parse
from gomoku_archive.storage.chunks import iter_archive
from tests.support import pool_from

from .data import seed_month
from .figures import Figure, Size
from .support import ROOT, scratch_database

SECTION = "verify"
MONTH = Month(2026, 8)
VERIFY_AT_LEAST = 3.0
PARSER_AT_LEAST = 1.0
_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


@dataclass(frozen=True, slots=True)
class Plan:
    games: int
    rounds: int


PLANS = {Size.SMOKE: Plan(games=300, rounds=1), Size.FULL: Plan(games=100_000, rounds=2)}


def run(size: Size, workdir: Path) -> list[Figure]:
    plan = PLANS[size]
    with scratch_database(SECTION) as dsn:
        asyncio.run(seed_month(dsn, MONTH, plan.games))
        archive = _export(dsn, workdir)
    collection = workdir / archive.name.removesuffix(".gz")
    collection.write_bytes(gzip.decompress(archive.read_bytes()))
    games = collection.read_bytes().count(b"\n")

    ours = min(_timed(_cli, "verify", str(archive)) for _ in range(plan.rounds))
    sgfmill = min(_timed(_sgfmill_verify, archive) for _ in range(plan.rounds))
    lines = min(_timed(_gzip_wc, archive) for _ in range(plan.rounds))
    _same_moves(collection)
    check = min(_timed(_cli, "sgf", "check", str(collection)) for _ in range(plan.rounds))
    collection_parse = min(_timed(_sgfmill_collection, collection) for _ in range(plan.rounds))
    return [
        Figure(
            SECTION,
            f"verify of {games:,} games, games/s",
            "games/s",
            games / ours,
            games / sgfmill,
            "sgfmill parse_sgf_game per line + dict replay",
            ">=",
            VERIFY_AT_LEAST,
            note=f"verify {ours:.2f} s, sgfmill {sgfmill:.2f} s; gzip -dc | wc -l {lines:.2f} s "
            f"(verify takes {ours / lines:.1f} x that)",
        ),
        Figure(
            SECTION,
            f"sgf check of the decompressed collection ({games:,} games), games/s",
            "games/s",
            games / check,
            games / collection_parse,
            "sgfmill parse_sgf_collection",
            ">=",
            PARSER_AT_LEAST,
            note=f"sgf check {check:.2f} s, sgfmill {collection_parse:.2f} s; "
            "move sequences checked identical",
        ),
    ]


def _export(dsn: str, workdir: Path) -> Path:
    env = dict(os.environ) | {"DATABASE_URL": dsn, "LOG_FORMAT": "json", "LOG_LEVEL": "WARNING"}
    subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", "export", "--month", str(MONTH)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
    )

    async def fetch() -> Path:
        async with pool_from(dsn, max_size=2) as pool:
            async with pool.acquire() as conn:
                row = await conn.fetchrow(
                    "SELECT id, bytes, file_name FROM archives WHERE state = 'published' "
                    "AND companion_of IS NULL"
                )
            assert row is not None
            path = workdir / str(row["file_name"])
            with path.open("wb") as out:
                async for view in iter_archive(pool, row["id"], row["bytes"]):
                    out.write(view)
        return path

    return asyncio.run(fetch())


def _timed(action: Callable[..., None], *args: object) -> float:
    started = time.monotonic()
    action(*args)
    return time.monotonic() - started


def _cli(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", *args], cwd=ROOT, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-500:]


def _gzip_wc(archive: Path) -> None:
    subprocess.run(f"gzip -dc '{archive}' | wc -l > /dev/null", shell=True, check=True)


def _sgfmill_verify(archive: Path) -> None:
    """What a downloader might write with sgfmill: parse each line, replay it on a dictionary
    board (occupied points, fives in four directions)."""
    with gzip.open(archive, "rb") as lines:
        for line in lines:
            tree = sgf_grammar.parse_sgf_game(line)
            _replay([node for node in tree.sequence[1:]])


def _replay(nodes: list[dict[str, list[bytes]]]) -> bool:
    board: dict[tuple[int, int], str] = {}
    five = False
    for node in nodes:
        colour = "B" if "B" in node else "W"
        value = node[colour][0]
        point = (value[0] - 97, value[1] - 97)
        if point in board or not (0 <= point[0] < 15 and 0 <= point[1] < 15):
            return False
        board[point] = colour
        for dx, dy in _DIRECTIONS:
            run = 1
            for sign in (1, -1):
                x, y = point[0] + sign * dx, point[1] + sign * dy
                while board.get((x, y)) == colour:
                    run += 1
                    x, y = x + sign * dx, y + sign * dy
            five = five or run >= 5
    return five


def _sgfmill_collection(collection: Path) -> None:
    sgf_grammar.parse_sgf_collection(collection.read_bytes())


def _same_moves(collection: Path) -> None:
    """Both parsers read the same games and the same moves, in the same order."""
    data = collection.read_bytes()
    theirs = [
        [
            (c, node[c][0].decode())
            for node in game.sequence[1:]
            for c in ("B", "W")  # sgfmill's identifiers are str, its values bytes
            if c in node
        ]
        for game in sgf_grammar.parse_sgf_collection(data)
    ]
    ours = [
        [
            (p.ident, p.values[0])
            for node in tree.nodes[1:]
            for p in node.properties
            if p.ident in ("B", "W")
        ]
        for tree in parse(data.decode())
    ]
    if ours != theirs:
        first = next(
            (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None
        )
        raise AssertionError(
            f"the two parsers read different move sequences: {len(ours)} games against "
            f"{len(theirs)}, first difference in game {first}"
        )
