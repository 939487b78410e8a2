"""The profile page (``/database/profile``): every root property, extension, result,
termination and exclusion reason, generated from the constants the writer and the export use
(``profile.writer``, ``profile.vocabulary``, ``gomoku.game``, ``catalog.manifest``) so the
page cannot drift from the files."""

from __future__ import annotations

import functools
import uuid
from datetime import UTC, datetime

from gomoku_archive.catalog.manifest import PROFILE, SCOPE
from gomoku_archive.companion.schema import COLUMNS, COMPRESSION_LEVEL, ROW_GROUPS, SCHEMA_ID
from gomoku_archive.gomoku.game import BOARD_SIZE, Color, Move, Reason, Result, Termination
from gomoku_archive.profile.vocabulary import RE_VALUES, REASON_DOCS, TERMINATION_DOCS
from gomoku_archive.profile.writer import ROOT_PROPERTIES, GameRecord, game_line
from gomoku_archive.web.pages.charts import LETTERS, Board, board
from gomoku_archive.web.pages.examples import SGFMILL_EXAMPLE, STDLIB_EXAMPLE
from gomoku_archive.web.pages.templating import render

EXAMPLE = GameRecord(
    game_id=uuid.UUID("00000000-0000-4000-8000-000000000001"),
    started_at=datetime(2026, 8, 12, 12, 0, tzinfo=UTC),
    finished_at=datetime(2026, 8, 12, 12, 2, tzinfo=UTC),
    result=Result.BLACK_WIN,
    termination=Termination.RESIGNATION,
    moves=(Move(Color.BLACK, 7, 7), Move(Color.WHITE, 8, 7), Move(Color.BLACK, 8, 8)),
    time_control_seconds=60,
    black_rating=1200,
    white_rating=1210,
)
"""The profile's documented example game, written by the real writer."""


PROFILE_REVISED = datetime(2026, 12, 7, tzinfo=UTC)
"""The profile page's Last-Modified (it is built from constants): change it with the page's
text, so that mirrors (``wget -N``) fetch the page again."""


def example_line() -> str:
    return game_line(EXAMPLE)


def example_board() -> Board:
    """The coordinate system drawn: letters on both edges and the example's moves."""
    stones = []
    for number, move in enumerate(EXAMPLE.moves, start=1):
        point = LETTERS[move.x] + LETTERS[move.y]
        colour = "b" if move.color is Color.BLACK else "w"
        stones.append((move.x, move.y, colour, f"move {number}: {move.color.value}[{point}]"))
    return board(
        BOARD_SIZE,
        stones,
        title="A 15 by 15 board: columns a to o from the left, rows a to o from the top; "
        "the example game's moves hh, ih and ii are shown",
    )


def _scope_text() -> str:
    rated = "rated" if SCOPE["rated"] else "unrated"
    return (
        f"completed games with mode={SCOPE['mode']}, rated={str(SCOPE['rated']).lower()} "
        f"({rated}) and ruleset={SCOPE['ruleset']}"
    )


@functools.cache
def render_profile_page() -> bytes:
    html = render(
        "profile.html",
        profile=PROFILE,
        scope=_scope_text(),
        standard=[p for p in ROOT_PROPERTIES if not p.extension],
        extensions=[p for p in ROOT_PROPERTIES if p.extension],
        results=[(f"RE[{value}]", text) for value, text in RE_VALUES.items()],
        terminations=[(t.value, TERMINATION_DOCS[t]) for t in Termination],
        reasons=[(r.value, REASON_DOCS[r]) for r in Reason],
        board=example_board(),
        example=example_line().rstrip("\n"),
        stdlib_example=STDLIB_EXAMPLE,
        sgfmill_example=SGFMILL_EXAMPLE,
        parquet={
            "schema_id": SCHEMA_ID,
            "columns": COLUMNS,
            "row_groups": ROW_GROUPS,
            "compression_level": COMPRESSION_LEVEL,
        },
    )
    return html.encode("utf-8")
