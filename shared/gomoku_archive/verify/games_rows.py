"""``gomoku-archive games``' view of one checked game: a flat record (JSON lines or CSV) and the
filters a downloader asks for. Pure: it reads ``GameFacts`` that ``verify.line_check`` made."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from gomoku_archive.gomoku.game import Result
from gomoku_archive.verify.line_check import GameFacts

WINNERS: dict[Result, str] = {
    Result.BLACK_WIN: "black",
    Result.WHITE_WIN: "white",
    Result.DRAW: "draw",
}
FIELDS = (
    "id",
    "month",
    "start",
    "end",
    "result",
    "termination",
    "blackRating",
    "whiteRating",
    "timeControl",
    "moves",
)
FILTER_OPTIONS = ("--result", "--termination", "--min-moves", "--since", "--until")
"""``games``' filters, in the order the page and the docs list them (a test holds the parser,
the page and docs/downloaders.md to this list)."""
_RATING = re.compile(r"(-?[0-9]+) Elo")
_WHOLE = re.compile(r"[0-9]+")
"""ASCII digits only: str.isdigit() also takes superscripts and other scripts' digits."""


def _rating(value: str | None) -> int | None:
    match = _RATING.fullmatch(value) if value is not None else None
    return int(match.group(1)) if match else None


def _month(instant: datetime) -> str:
    """``YYYY-MM`` of a UTC instant, the year in four digits as the archive's names write it
    (``strftime("%Y")`` gives ``999`` for the year 999 on glibc)."""
    utc = instant.astimezone(UTC)
    return f"{utc.year:04d}-{utc.month:02d}"


def record(facts: GameFacts) -> dict[str, Any]:
    """One game as JSON-ready data; ``month`` is the UTC month of its finish (XET), the month
    of the archive that holds it; moves as ``[x, y]`` counted from the top-left, as the
    profile's coordinates are (``aa`` is ``[0, 0]``, ``oa`` is ``[14, 0]``)."""
    values = facts.values
    tc = values.get("XTC")
    finished = facts.finished
    return {
        "id": facts.gn,
        "month": _month(finished) if finished is not None else None,
        "start": values.get("XST"),
        "end": values.get("XET"),
        "result": WINNERS[facts.result] if facts.result is not None else None,
        "termination": facts.termination,
        "blackRating": _rating(values.get("BR")),
        "whiteRating": _rating(values.get("WR")),
        "timeControl": int(tc) if tc is not None and _WHOLE.fullmatch(tc) else None,
        "moves": [[m.x, m.y] for m in facts.moves],
    }


def csv_row(game: dict[str, Any]) -> list[str]:
    """The record's values in ``FIELDS`` order; moves as their JSON text, empty for None."""
    row = []
    for name in FIELDS:
        value = game[name]
        if name == "moves":
            row.append(json.dumps(value, separators=(",", ":")))
        else:
            row.append("" if value is None else str(value))
    return row


def parse_instant(text: str) -> datetime:
    """``2026-09-01`` (midnight UTC) or ``2026-09-01T12:00:00Z`` (an offset, or none: UTC)."""
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a date or time like 2026-09-01T12:00:00Z") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which games to print; every condition must hold (None or empty: no condition)."""

    results: frozenset[str] = frozenset()
    terminations: frozenset[str] = frozenset()
    min_moves: int = 0
    since: datetime | None = None
    """Finished at or after (XET)."""
    until: datetime | None = None
    """Finished before (XET)."""

    def accepts(self, facts: GameFacts) -> bool:
        if self.results and (facts.result is None or WINNERS[facts.result] not in self.results):
            return False
        if self.terminations and facts.termination not in self.terminations:
            return False
        if len(facts.moves) < self.min_moves:
            return False
        finished = facts.finished
        if self.since is not None and (finished is None or finished < self.since):
            return False
        return not (self.until is not None and (finished is None or finished >= self.until))


def game_filter(
    *,
    results: Sequence[str] = (),
    terminations: Sequence[str] = (),
    min_moves: int = 0,
    since: str | None = None,
    until: str | None = None,
) -> GameFilter:
    """A filter from command-line values; raises ValueError for a bad time."""
    return GameFilter(
        results=frozenset(results),
        terminations=frozenset(terminations),
        min_moves=min_moves,
        since=parse_instant(since) if since else None,
        until=parse_instant(until) if until else None,
    )
