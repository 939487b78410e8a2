"""The export's step for candidate rows, the same in every range of a month: classify each row,
check the archive order, count it, and give its line. A range's tally travels to the month's
assembly as JSON (``to_json``), which merges the ranges' tallies in order (``extend``).

``take_rows`` is the export's path: a batch of rows as the cursor gives them, each through the
one-pass reader (``profile.row_pass``) and, for a row that one leaves to it, ``take``, the
reference path (classify, ``game_parts``, the statistics' ``add``). Both count the same, also
when a game out of order stops them: a row counts once its game is known to follow the last one
(``_follow``, the one order check, which ``extend`` uses for a range's first game too)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Any

from gomoku_archive.errors import ExportFailed
from gomoku_archive.gomoku.game import Reason
from gomoku_archive.profile.classify import Candidate, CandidateColumns, classify
from gomoku_archive.profile.row_pass import (
    BLACK_RATING,
    LINE,
    NODES,
    ORDER_KEY,
    RESULT,
    TERMINATION,
    TIME_CONTROL,
    WHITE_RATING,
    PassedGame,
    pass_row,
)
from gomoku_archive.profile.stats import StatsCounter
from gomoku_archive.profile.writer import format_timestamp, game_parts, order_key

OUT_OF_ORDER = "the source returned games out of archive order"

OrderKey = tuple[str, str]
"""A game's place in the archive: its XET without the final ``Z`` (``YYYY-MM-DDTHH:MM:SS``) and
its UUID's text. Compared as strings they order exactly as ``writer.order_key``'s (datetime,
text) pairs: both texts have fixed widths, the year four digits."""


@dataclass(slots=True)
class Tally:
    """What the rows taken so far add up to: candidates, exclusions by reason, results by
    termination, the statistics, and the first and last order keys of the games written."""

    label: str
    """The month, first word of the out-of-order error."""
    candidates: int = 0
    exclusions: Counter[str] = field(default_factory=Counter)
    results: Counter[str] = field(default_factory=Counter)
    stats: StatsCounter = field(default_factory=StatsCounter)
    first_key: OrderKey | None = None
    last_key: OrderKey | None = None

    def take(self, row: Candidate) -> str | None:
        """Count ``row``; its archive line, or None when it is excluded. Raises
        ``ExportFailed`` for a game that does not come after the previous one (not counted)."""
        verdict = classify(row)
        if isinstance(verdict, Reason):
            self.candidates += 1
            self.exclusions[verdict.value] += 1
            return None
        finished, game_id = order_key(verdict)
        self._follow((format_timestamp(finished)[:-1], game_id))
        parts = game_parts(verdict)
        self.candidates += 1
        self.results[verdict.termination.value] += 1
        self.stats.add(verdict, parts)
        return "".join(parts)

    def take_rows(self, rows: Iterable[CandidateColumns]) -> list[str]:
        """Count ``rows`` (each the columns of a ``Candidate``, in its field order) as ``take``
        does one by one; the lines of those that publish, in order."""
        lines: list[str] = []
        passed: list[PassedGame] = []
        follow, take, add_line, add_game = self._follow, self.take, lines.append, passed.append
        try:
            for row in rows:
                game = pass_row(row)
                if game is None:
                    line = take(Candidate(*row))
                    if line is not None:
                        add_line(line)
                    continue
                follow(ORDER_KEY(game))
                add_game(game)
                add_line(LINE(game))
        finally:
            # The batch's games counted at once: the same counts, a C-level pass a field.
            self.candidates += len(passed)
            self.results.update(map(TERMINATION, passed))
            self.stats.add_many(
                results=map(RESULT, passed),
                nodes=list(map(NODES, passed)),
                time_controls=map(TIME_CONTROL, passed),
                ratings=chain(map(BLACK_RATING, passed), map(WHITE_RATING, passed)),
            )
        return lines

    def _follow(self, key: OrderKey) -> None:
        """The archive order's one check: record the next published game's key, or raise
        ``ExportFailed`` unless it comes after the last one."""
        last = self.last_key
        if last is None:
            self.first_key = key
        elif key <= last:
            raise ExportFailed(f"{self.label}: {OUT_OF_ORDER}")
        self.last_key = key

    def extend(self, later: Tally) -> None:
        """Add the counts of rows that come after these (the next slice of the month)."""
        if later.first_key is not None:
            self._follow(later.first_key)
            self.last_key = later.last_key
        self.candidates += later.candidates
        self.exclusions.update(later.exclusions)
        self.results.update(later.results)
        self.stats.merge(later.stats)

    def to_json(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "exclusions": dict(self.exclusions),
            "results": dict(self.results),
            "stats": self.stats.to_json(),
            "firstKey": _key_json(self.first_key),
            "lastKey": _key_json(self.last_key),
        }

    @classmethod
    def from_json(cls, label: str, data: dict[str, Any]) -> Tally:
        return cls(
            label,
            candidates=int(data["candidates"]),
            exclusions=Counter(data["exclusions"]),
            results=Counter(data["results"]),
            stats=StatsCounter.from_json(data["stats"]),
            first_key=_key_from_json(data["firstKey"]),
            last_key=_key_from_json(data["lastKey"]),
        )

    @property
    def excluded(self) -> int:
        return sum(self.exclusions.values())

    @property
    def games(self) -> int:
        return self.candidates - self.excluded


def _key_json(key: OrderKey | None) -> list[str] | None:
    # As before the keys were texts: the finish second's isoformat() in UTC, and the UUID.
    return None if key is None else [f"{key[0]}+00:00", key[1]]


def _key_from_json(data: list[str] | None) -> OrderKey | None:
    if data is None:
        return None
    return format_timestamp(datetime.fromisoformat(data[0]))[:-1], data[1]
