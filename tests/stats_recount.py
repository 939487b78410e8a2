"""A month's ``stats`` object recounted from the archive's text alone, as a downloader would
count it (a regex of the profile's fixed line shape, sorted lists, nearest rank), sharing no
code with ``gomoku_archive.profile.stats``: the unit and the integration tests hold the export's
counts equal to it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

_RE = re.compile(r"RE\[(B\+|W\+|Draw)[RT]?\]")
_MOVE = re.compile(r";([BW])\[([a-o])([a-o])\]")
_RATING = re.compile(r"(?:BR|WR)\[(-?\d+) Elo\]")
_XTC = re.compile(r"XTC\[(\d+)\]")
_WINNER = {"B+": "black", "W+": "white", "Draw": "draw"}


def rank(values: list[int], p: int) -> int | None:
    """Nearest rank: the value at 1-based rank ceil(p / 100 * N) of the sorted values."""
    ordered = sorted(values)
    return ordered[-(-p * len(ordered) // 100) - 1] if ordered else None


def recount(lines: Iterable[str]) -> dict[str, Any]:
    """The stats object of these game lines."""
    winners = {"black": 0, "white": 0, "draw": 0}
    lengths: list[int] = []
    first = [[0] * 15 for _ in range(15)]
    every = [[0] * 15 for _ in range(15)]
    ratings: list[int] = []
    time_controls: Counter[str] = Counter()
    for line in lines:
        result = _RE.search(line)
        assert result is not None, line
        winners[_WINNER[result.group(1)]] += 1
        moves = _MOVE.findall(line)
        assert moves and moves[0][0] == "B", line
        lengths.append(len(moves))
        _, x, y = moves[0]
        first[ord(y) - ord("a")][ord(x) - ord("a")] += 1
        for _, x, y in moves:
            every[ord(y) - ord("a")][ord(x) - ord("a")] += 1
        ratings.extend(int(r) for r in _RATING.findall(line))
        xtc = _XTC.search(line)
        time_controls[xtc.group(1) if xtc else "none"] += 1
    return {
        "winners": winners,
        "length": {
            "min": min(lengths, default=None),
            "median": rank(lengths, 50),
            "mean": round(sum(lengths) / len(lengths), 1) if lengths else None,
            "p90": rank(lengths, 90),
            "max": max(lengths, default=None),
            "histogram": [
                {
                    "from": low,
                    "to": min(low + 9, 225),
                    "games": sum(low <= n <= low + 9 for n in lengths),
                }
                for low in range(1, 226, 10)
            ],
        },
        "firstMoves": first,
        "allMoves": every,
        "ratings": {
            "count": len(ratings),
            "p10": rank(ratings, 10),
            "median": rank(ratings, 50),
            "p90": rank(ratings, 90),
        },
        "timeControls": dict(time_controls),
    }
