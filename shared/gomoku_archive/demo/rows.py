"""One row of the demo's ``games`` table, as the generator (``games``) and the defect recipes
(``defects``) make it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from gomoku_archive.gomoku.game import Reason


@dataclass(frozen=True, slots=True)
class SourceGame:
    """One row of the ``games`` table (field names are the column names), plus two labels that
    are not columns: what the export must decide for it, and whether it is a candidate at all."""

    id: uuid.UUID
    mode: str
    rated: bool
    ruleset: str
    board_size: int
    status: str
    started_at: datetime
    finished_at: datetime | None
    result: str | None
    termination: str | None
    moves: object
    """The jsonb value: a list of {"color", "x", "y"} objects, or any JSON in a broken row."""
    time_control_seconds: int | None
    black_rating: int | None
    white_rating: int | None
    black_player_id: uuid.UUID | None
    white_player_id: uuid.UUID | None
    expected_reason: Reason | None
    """For an in-scope candidate, the reason the export must exclude it; None means it publishes."""
    in_scope: bool
    """A candidate of its finished_at month: ranked, rated, freestyle, with a finish time."""
