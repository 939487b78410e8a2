"""The bundled example archive: 200 synthetic, valid games finished in August 2026.

``example_records()`` regenerates the games from a fixed seed, and ``build_archive()`` turns any
records into archive bytes exactly as the export does (profile lines in ``order_key`` order
through ``ArchiveStream``). The committed files beside this module are that output;
``tests/unit/demo/test_examples.py`` rebuilds them and fails if a single byte differs, and
``python -m gomoku_archive.demo.examples`` rewrites them after a deliberate change.

The games are made up by a seeded random player, not taken from real players. Self-contained on
purpose: a change to the demo data elsewhere must not move this golden file.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Move, Result, Termination
from gomoku_archive.gomoku.replay import replay
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name, checksum_line
from gomoku_archive.profile.stream import ArchiveStream
from gomoku_archive.profile.writer import GameRecord, game_line, order_key

EXAMPLE_MONTH = Month(2026, 8)
EXAMPLE_GAMES = 200
EXAMPLES_DIR = Path(__file__).parent
_SEED = 20260817

_ENDINGS = (
    (Termination.FIVE, 60),
    (Termination.RESIGNATION, 22),
    (Termination.TIMEOUT, 10),
    (Termination.AGREEMENT, 5),
    (Termination.BOARD_FULL, 3),
)
_TIME_CONTROLS = (60, 180, 300, 600, None)


@dataclass(frozen=True, slots=True)
class BuiltArchive:
    """An archive's bytes with its download name and companion checksum file."""

    name: str
    data: bytes
    sha256: str
    checksum_text: str
    games: int


def build_archive(records: Iterable[GameRecord], month: Month) -> BuiltArchive:
    """Write ``records`` as the month's archive: ordered by ``order_key``, one line each."""
    stream = ArchiveStream()
    chunks: list[bytes] = []
    games = 0
    for record in sorted(records, key=order_key):
        chunks.append(stream.write(game_line(record).encode("utf-8")))
        games += 1
    chunks.append(stream.finish())
    name = archive_file_name(month, stream.sha256)
    return BuiltArchive(
        name=name,
        data=b"".join(chunks),
        sha256=stream.sha256,
        checksum_text=checksum_line(name, stream.sha256),
        games=games,
    )


def example_archive() -> BuiltArchive:
    """The bundled example archive, rebuilt from scratch."""
    return build_archive(example_records(), EXAMPLE_MONTH)


def example_records() -> list[GameRecord]:
    """``EXAMPLE_GAMES`` valid games, the same on every run, in generation (not archive) order.

    Every termination appears; a few games span midnight UTC, one starts in July, board-full
    draws fill all 225 points, and timestamps carry microseconds and non-UTC offsets so
    that truncation and conversion are exercised.
    """
    rng = random.Random(_SEED)  # noqa: S311 - seeded on purpose: the games must be reproducible
    terminations = [t for t, _ in _ENDINGS]
    weights = [w for _, w in _ENDINGS]
    records: list[GameRecord] = []
    for index in range(EXAMPLE_GAMES):
        termination = terminations[index] if index < len(terminations) else None
        termination = termination or rng.choices(terminations, weights)[0]
        moves, result = _play(rng, termination)
        finished, started = _times(rng, index, len(moves))
        records.append(
            GameRecord(
                game_id=uuid.UUID(int=rng.getrandbits(128), version=4),
                started_at=started,
                finished_at=finished,
                result=result,
                termination=termination,
                moves=moves,
                time_control_seconds=rng.choice(_TIME_CONTROLS),
                black_rating=None if rng.random() < 0.05 else rng.randint(800, 2400),
                white_rating=None if rng.random() < 0.05 else rng.randint(800, 2400),
            )
        )
    return records


def _times(rng: random.Random, index: int, plies: int) -> tuple[datetime, datetime]:
    """(finished_at, started_at) for game ``index``: inside August 2026, a few across midnight."""
    duration = timedelta(seconds=plies * rng.uniform(2.0, 20.0), microseconds=rng.randrange(10**6))
    month_start, month_end = EXAMPLE_MONTH.start, EXAMPLE_MONTH.end
    if index == 0:  # started in July, finished in August: belongs to August
        finished = month_start + timedelta(minutes=3, microseconds=999_999)
        return finished, finished - timedelta(minutes=9)
    if index in (1, 2, 3):  # across midnight inside the month
        midnight = month_start + timedelta(days=9 + index)
        finished = midnight + timedelta(seconds=rng.randrange(1, 600))
        return finished, midnight - timedelta(seconds=rng.randrange(1, 600))
    if index == 4:  # the last second of the month
        finished = month_end - timedelta(microseconds=1)
        return finished, finished - duration
    span = (month_end - month_start).total_seconds()
    finished = month_start + timedelta(seconds=rng.uniform(3600, span - 3600))
    offset = timezone(timedelta(hours=rng.choice((-7, 0, 2, 9))))
    return finished.astimezone(offset), (finished - duration).astimezone(offset)


def _play(rng: random.Random, termination: Termination) -> tuple[list[Move], Result]:
    """Random valid moves and the result for ``termination``; retried until the replay agrees."""
    while True:
        if termination is Termination.FIVE:
            moves = _five_game(rng)
            result = Result.BLACK_WIN if len(moves) % 2 else Result.WHITE_WIN
        elif termination is Termination.BOARD_FULL:
            moves, result = _full_board(rng), Result.DRAW
        else:
            moves = _scattered(rng, rng.randint(3, 70))
            if termination is Termination.AGREEMENT:
                result = Result.DRAW
            else:
                result = rng.choice((Result.BLACK_WIN, Result.WHITE_WIN))
        if replay(moves, result, termination).valid:
            return moves, result


def _alternate(points: Iterable[int]) -> list[Move]:
    return [
        Move(Color.BLACK if i % 2 == 0 else Color.WHITE, p % BOARD_SIZE, p // BOARD_SIZE)
        for i, p in enumerate(points)
    ]


def _scattered(rng: random.Random, plies: int) -> list[Move]:
    return _alternate(rng.sample(range(POINTS), plies))


def _five_game(rng: random.Random) -> list[Move]:
    """The winner lays down a straight five among random moves, completing it last."""
    dx, dy = rng.choice(((1, 0), (0, 1), (1, 1), (1, -1)))
    x0 = rng.randrange(0, BOARD_SIZE - 4) if dx else rng.randrange(BOARD_SIZE)
    y0 = rng.randrange(4, BOARD_SIZE) if dy == -1 else rng.randrange(0, BOARD_SIZE - 4 * dy)
    line = [(y0 + k * dy) * BOARD_SIZE + x0 + k * dx for k in range(5)]
    rng.shuffle(line)
    others = rng.sample([p for p in range(POINTS) if p not in line], 60)
    winner_extra = rng.randint(0, 12)
    winner = line[:4] + others[:winner_extra]
    rng.shuffle(winner)
    winner.append(line[4])
    loser = others[winner_extra : winner_extra + len(winner)]
    white_wins = rng.random() < 0.45
    # The loser moves first when white wins, so black gets one stone more than white (or equal).
    first, second = (loser, winner) if white_wins else (winner, loser[: len(winner) - 1])
    points = [p for pair in zip(first, second, strict=False) for p in pair]
    if len(first) > len(second):
        points.append(first[-1])
    return _alternate(points)


def _full_board(rng: random.Random) -> list[Move]:
    """All 225 points with no five: pairs of stones shifted by one pair each row, random order."""
    black = [p for p in range(POINTS) if (p % BOARD_SIZE + 2 * (p // BOARD_SIZE)) // 2 % 2 == 0]
    white = [p for p in range(POINTS) if p not in set(black)]
    rng.shuffle(black)
    rng.shuffle(white)
    points = [p for pair in zip(black, white, strict=False) for p in pair] + black[len(white) :]
    return _alternate(points)
