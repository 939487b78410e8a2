"""Decide what happens to one candidate row: published as a GameRecord, or excluded with one
reason. Reasons are checked in the documented order (``gomoku.game.Reason``): the row's
status first, then the replay engine's verdict. Pure: a bad row of any shape gives a reason,
never an exception."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

from gomoku_archive.gomoku.game import BOARD_SIZE, Reason, Result, Termination
from gomoku_archive.gomoku.replay import parse_moves, replay
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import GameRecord

_RESULTS = {r.value: r for r in Result}
_TERMINATIONS = {t.value: t for t in Termination}


@dataclass(frozen=True, slots=True)
class Candidate:
    """The columns of a candidate row that decide its fate, in the source query's order (no
    player ids: they never leave the database). ``moves`` is the column's JSON text."""

    id: uuid.UUID
    status: object
    board_size: object
    started_at: datetime | None
    """None when the source could not read it as an instant (``db.source``'s guard)."""
    finished_at: datetime
    result: object
    termination: object
    moves: str | None
    time_control_seconds: object
    black_rating: object
    white_rating: object


CandidateColumns: TypeAlias = Iterable[Any]
"""A candidate row as the database driver gives it: its columns in ``Candidate``'s field order
(``Candidate(*columns)`` is the row)."""


def _optional_int(value: object, *, positive: bool = False) -> int | None:
    # Ratings and time controls are integers or absent; anything else (a zero or negative time
    # control included) is published as absent rather than excluding an otherwise valid game.
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return None if positive and value <= 0 else value


def _instant(value: object) -> datetime | None:
    """``value`` when it is a timezone-aware instant (naive or absent times place no game)."""
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value
    return None


def classify(row: Candidate) -> GameRecord | Reason:
    if row.status == "ABORTED":
        return Reason.ABORTED
    result = _RESULTS.get(row.result) if isinstance(row.result, str) else None
    termination = _TERMINATIONS.get(row.termination) if isinstance(row.termination, str) else None
    started, finished = _instant(row.started_at), _instant(row.finished_at)
    if (
        row.status != "FINISHED"
        or result is None
        or termination is None
        or row.board_size != BOARD_SIZE
        or started is None
        or finished is None
        or finished < started
        or finished - started > LONGEST_GAME
    ):
        return Reason.INCOMPLETE
    moves = parse_moves(row.moves)
    if not isinstance(moves, list):
        assert moves.reason is not None
        return moves.reason
    verdict = replay(moves, result, termination)
    if verdict.reason is not None:
        return verdict.reason
    return GameRecord(
        game_id=row.id,
        started_at=started,
        finished_at=finished,
        result=result,
        termination=termination,
        moves=moves,
        time_control_seconds=_optional_int(row.time_control_seconds, positive=True),
        black_rating=_optional_int(row.black_rating),
        white_rating=_optional_int(row.white_rating),
    )
