"""A month's statistics, counted while the export writes its games: who won, how long games
last, where stones are played, the players' ratings and the time controls. The manifest's
``stats`` object is derived from these counts (docs/http-api.md, "Statistics", has the fields).

Every figure is a count, so memory stays flat in the size of the month: at most one counter
per board point and colour, per game length (1 to 225), per rating value and per time control.
Stats are a function of the published lines alone (RE, the move nodes, BR/WR, XTC), so a
rebuild that gives the same bytes gives the same stats.

Percentiles use the nearest-rank method: of N sorted values, the p-th percentile is the value
of rank ceil(p / 100 * N) (1-based), so it is always a value that occurred; the median is
p50, the lower of the two middle values when N is even. Computed exactly from the counts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, cast

from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Result
from gomoku_archive.profile.writer import GameRecord, move_node

STATS_VERSION = 1
"""The stored form's version (``MonthStats.to_json``)."""
LENGTH_BIN = 10
"""Width of the length histogram's bins, in moves: 1-10, 11-20, ..., 221-225."""
WINNERS: Mapping[Result, str] = {
    Result.BLACK_WIN: "black",
    Result.WHITE_WIN: "white",
    Result.DRAW: "draw",
}
NO_TIME_CONTROL = "none"
"""The ``timeControls`` key of games without XTC."""

_FIRST = itemgetter(0)

_POINT_OF_NODE: Mapping[str, int] = {
    move_node(color, point): point for color in Color for point in range(POINTS)
}


class StatsCounter:
    """Fed every published game of a month, in any order; ``result()`` gives the counts.

    ``add`` costs a few dictionary updates per game and one C-level counter update over its
    move nodes, which are strings shared by every game with their hash cached. The export
    counts a batch of games at once with ``add_many``: one C-level counter update per figure
    over the whole batch."""

    __slots__ = ("_first", "_lengths", "_nodes", "_ratings", "_time_controls", "_winners")

    def __init__(self) -> None:
        self._winners: Counter[Result] = Counter()
        self._lengths = [0] * (POINTS + 1)
        self._first: Counter[str] = Counter()
        self._nodes: Counter[str] = Counter()
        self._ratings: Counter[int] = Counter()
        self._time_controls: Counter[int | None] = Counter()

    def add(self, record: GameRecord, parts: Sequence[str]) -> None:
        """Count one published game. ``parts`` is ``game_parts(record)``, the pieces its line
        is joined from: the root, one move node per move (black's first), and ``)\\n``."""
        self.add_game(
            record.result,
            parts[1],
            len(parts) - 2,
            record.time_control_seconds,
            record.black_rating,
            record.white_rating,
        )
        self.add_nodes(parts[1:-1])  # a slice: cheaper than islice for ~40 items

    def add_game(
        self,
        result: Result,
        first: str,
        moves: int,
        time_control: int | None,
        black: int | None,
        white: int | None,
    ) -> None:
        """Count one published game but its move nodes (``add_nodes`` counts those): its result,
        its first move node, its number of moves, its time control and ratings."""
        self._winners[result] += 1
        self._lengths[moves] += 1
        self._first[first] += 1
        self._time_controls[time_control] += 1
        if black is not None:
            self._ratings[black] += 1
        if white is not None:
            self._ratings[white] += 1

    def add_nodes(self, nodes: Iterable[str]) -> None:
        """Count the move nodes of published games, of one game or of many at once."""
        self._nodes.update(nodes)

    def add_many(
        self,
        *,
        results: Iterable[Result],
        nodes: Sequence[Sequence[str]],
        time_controls: Iterable[int | None],
        ratings: Iterable[int | None],
    ) -> None:
        """Count many published games at once: the counts ``add`` gives game by game, counted
        here a figure at a time over the whole batch (each a C-level pass). ``results``,
        ``nodes`` (each game's move nodes, black's first) and ``time_controls`` (None: no time
        control) have one item a game, in one order; ``ratings`` holds every BR and WR of
        the games, None where one is not recorded."""
        self._winners.update(results)
        for moves, count in Counter(map(len, nodes)).items():
            self._lengths[moves] += count
        self._first.update(map(_FIRST, nodes))
        self._nodes.update(chain.from_iterable(nodes))
        self._time_controls.update(time_controls)
        recorded: Counter[int | None] = Counter(ratings)
        recorded.pop(None, None)
        self._ratings.update(cast("Counter[int]", recorded))

    def merge(self, other: StatsCounter) -> None:
        """Add ``other``'s counts to these: the counts of both sets of games (a two-process
        export counts each slice apart and merges them)."""
        self._winners.update(other._winners)
        for moves, games in enumerate(other._lengths):
            self._lengths[moves] += games
        self._first.update(other._first)
        self._nodes.update(other._nodes)
        self._ratings.update(other._ratings)
        self._time_controls.update(other._time_controls)

    def to_json(self) -> dict[str, Any]:
        """The raw counts, for a range's tally to travel to the month's assembly (JSON keys are
        strings: ratings and time controls as decimal text, no time control as ``none``)."""
        return {
            "winners": {result.value: n for result, n in self._winners.items()},
            "lengths": list(self._lengths),
            "first": dict(self._first),
            "nodes": dict(self._nodes),
            "ratings": {str(r): n for r, n in self._ratings.items()},
            "timeControls": {
                NO_TIME_CONTROL if t is None else str(t): n for t, n in self._time_controls.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StatsCounter:
        """The counter ``to_json`` described."""
        counter = cls()
        counter._winners.update({Result(k): n for k, n in data["winners"].items()})
        lengths = list(data["lengths"])
        if len(lengths) != POINTS + 1:
            raise ValueError(f"{len(lengths)} game lengths, expected {POINTS + 1}")
        counter._lengths = lengths
        counter._first.update(data["first"])
        counter._nodes.update(data["nodes"])
        counter._ratings.update({int(r): n for r, n in data["ratings"].items()})
        counter._time_controls.update(
            {None if t == NO_TIME_CONTROL else int(t): n for t, n in data["timeControls"].items()}
        )
        return counter

    def result(self) -> MonthStats:
        first = [0] * POINTS
        for node, count in self._first.items():
            first[_POINT_OF_NODE[node]] += count
        every = [0] * POINTS
        for node, count in self._nodes.items():
            every[_POINT_OF_NODE[node]] += count
        return MonthStats(
            winners={name: self._winners[result] for result, name in WINNERS.items()},
            lengths={n: c for n, c in enumerate(self._lengths) if c},
            first_moves=tuple(first),
            all_moves=tuple(every),
            ratings=dict(sorted(self._ratings.items())),
            time_controls=_time_control_order(self._time_controls.items()),
        )


def _time_control_order(items: Iterable[tuple[int | None, int]]) -> dict[int | None, int]:
    """Seconds ascending, games without a time control last."""
    return dict(sorted(items, key=lambda item: (item[0] is None, item[0] or 0)))


@dataclass(frozen=True, slots=True)
class MonthStats:
    """The exact counts of one month's published games."""

    winners: Mapping[str, int]
    """``black``, ``white`` and ``draw``: games won by each colour, and drawn."""
    lengths: Mapping[int, int]
    """Moves in a game -> games of that length (lengths with no game are absent)."""
    first_moves: tuple[int, ...]
    """Black's first move: games per point, index ``y * 15 + x`` (x from the left, y from the
    top, as the profile counts)."""
    all_moves: tuple[int, ...]
    """Every move of either colour: stones played per point, indexed like ``first_moves``."""
    ratings: Mapping[int, int]
    """Rating -> how often it was recorded with a game (BR and WR each count once a game)."""
    time_controls: Mapping[int | None, int]
    """XTC in seconds -> games (None: games without a time control)."""

    @property
    def games(self) -> int:
        return sum(self.winners.values())

    def to_json(self) -> dict[str, Any]:
        """The stored form (the archive row's ``stats`` jsonb): every count, nothing derived."""
        return {
            "version": STATS_VERSION,
            "winners": dict(self.winners),
            "lengths": {str(n): c for n, c in self.lengths.items()},
            "first_moves": list(self.first_moves),
            "all_moves": list(self.all_moves),
            "ratings": {str(r): c for r, c in self.ratings.items()},
            "time_controls": {
                NO_TIME_CONTROL if t is None else str(t): c for t, c in self.time_controls.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MonthStats:
        if data.get("version") != STATS_VERSION:
            raise ValueError(f"unknown stats version {data.get('version')!r}")
        return cls(
            winners={name: int(data["winners"].get(name, 0)) for name in WINNERS.values()},
            lengths={int(n): int(c) for n, c in sorted(data["lengths"].items(), key=_numeric)},
            first_moves=tuple(int(c) for c in data["first_moves"]),
            all_moves=tuple(int(c) for c in data["all_moves"]),
            ratings={int(r): int(c) for r, c in sorted(data["ratings"].items(), key=_numeric)},
            time_controls=_time_control_order(
                (None if t == NO_TIME_CONTROL else int(t), int(c))
                for t, c in data["time_controls"].items()
            ),
        )


def _numeric(item: tuple[str, object]) -> int:
    return int(item[0])


EMPTY = StatsCounter().result()
"""A month without games: zero counts."""


def percentile(counts: Mapping[int, int], p: float) -> int | None:
    """The nearest-rank ``p``-th percentile (0 < p <= 100) of values given as value -> count;
    None when there are none."""
    total = sum(counts.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(p / 100 * total))
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return value
    raise AssertionError("unreachable: the ranks add up to the total")


def length_histogram(lengths: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """(first, last, games) for every ``LENGTH_BIN``-move bin from 1 to 225, both ends
    inclusive, empty bins included; the last bin is 221-225."""
    bins = []
    for first in range(1, POINTS + 1, LENGTH_BIN):
        last = min(first + LENGTH_BIN - 1, POINTS)
        bins.append((first, last, sum(lengths.get(n, 0) for n in range(first, last + 1))))
    return bins


def grid(points: Sequence[int]) -> list[list[int]]:
    """Per-point counts as 15 rows of 15, rows from the top, columns from the left."""
    return [list(points[row * BOARD_SIZE : (row + 1) * BOARD_SIZE]) for row in range(BOARD_SIZE)]
