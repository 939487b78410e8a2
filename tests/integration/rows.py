"""Build rows of the game server's table for tests, in ``db.source.INSERT_COLUMNS`` order."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from gomoku_archive.db.source import INSERT_COLUMNS

# A short valid game: black makes five on the top row (x = 0..4), white plays row 1.
FIVE_MOVES: list[dict[str, Any]] = []
for i in range(5):
    FIVE_MOVES.append({"color": "B", "x": i, "y": 0})
    if i < 4:
        FIVE_MOVES.append({"color": "W", "x": i, "y": 1})


def game_row(
    *,
    finished_at: datetime,
    id: uuid.UUID | None = None,
    started_at: datetime | None = None,
    mode: str = "RANKED",
    rated: bool = True,
    ruleset: str = "FREESTYLE",
    board_size: int = 15,
    status: str = "FINISHED",
    result: str | None = "BLACK_WIN",
    termination: str | None = "FIVE",
    moves: Any = None,
    time_control_seconds: int | None = 60,
    black_rating: int | None = 1500,
    white_rating: int | None = 1490,
    black_player_id: uuid.UUID | None = None,
    white_player_id: uuid.UUID | None = None,
) -> tuple[Any, ...]:
    values = {
        "id": id or uuid.uuid4(),
        "mode": mode,
        "rated": rated,
        "ruleset": ruleset,
        "board_size": board_size,
        "status": status,
        "started_at": started_at or finished_at - timedelta(minutes=3),
        "finished_at": finished_at,
        "result": result,
        "termination": termination,
        "moves": FIVE_MOVES if moves is None else moves,
        "time_control_seconds": time_control_seconds,
        "black_rating": black_rating,
        "white_rating": white_rating,
        "black_player_id": black_player_id or uuid.uuid4(),
        "white_player_id": white_player_id or uuid.uuid4(),
    }
    return tuple(values[c] for c in INSERT_COLUMNS)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]
