"""The export's step for one candidate row, the same in every range of a month: classify the
row, check the archive order, count it, and give its line. A range's tally travels to the
month's assembly as JSON (``to_json``), which merges the ranges' tallies in order (``extend``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gomoku_archive.errors import ExportFailed
from gomoku_archive.gomoku.game import Reason
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.stats import StatsCounter
from gomoku_archive.profile.writer import game_parts, order_key

OUT_OF_ORDER = "the source returned games out of archive order"

OrderKey = tuple[datetime, str]


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
        ``ExportFailed`` for a game that does not come after the previous one."""
        self.candidates += 1
        verdict = classify(row)
        if isinstance(verdict, Reason):
            self.exclusions[verdict.value] += 1
            return None
        key = order_key(verdict)
        if self.last_key is None:
            self.first_key = key
        elif key <= self.last_key:
            raise ExportFailed(f"{self.label}: {OUT_OF_ORDER}")
        self.last_key = key
        self.results[verdict.termination.value] += 1
        parts = game_parts(verdict)
        self.stats.add(verdict, parts)
        return "".join(parts)

    def extend(self, later: Tally) -> None:
        """Add the counts of rows that come after these (the next slice of the month)."""
        if later.first_key is not None:
            if self.last_key is not None and later.first_key <= self.last_key:
                raise ExportFailed(f"{self.label}: {OUT_OF_ORDER}")
            if self.first_key is None:
                self.first_key = later.first_key
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
    return None if key is None else [key[0].isoformat(), key[1]]


def _key_from_json(data: list[str] | None) -> OrderKey | None:
    return None if data is None else (datetime.fromisoformat(data[0]), data[1])
