"""The profile page (``/database/profile``): every root property, extension, result,
termination and exclusion reason, generated from the constants the writer and the export use
(``shared.archive.profile``, ``shared.gomoku.game``, ``shared.catalog.manifest``) so the page
cannot drift from the files."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from services.html import h, page, table, template
from services.page_examples import SGFMILL_EXAMPLE, STDLIB_EXAMPLE
from shared.archive.profile import (
    RE_VALUES,
    REASON_DOCS,
    ROOT_PROPERTIES,
    TERMINATION_DOCS,
    GameRecord,
    PropertyDoc,
    game_line,
)
from shared.catalog.manifest import PROFILE, SCOPE
from shared.gomoku.game import BOARD_SIZE, Color, Move, Reason, Result, Termination

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

_LETTERS = "abcdefghijklmno"


def example_line() -> str:
    return game_line(EXAMPLE)


def _presence(prop: PropertyDoc) -> str:
    if prop.fixed is not None:
        return "always, fixed"
    return "optional" if prop.optional else "always"


def _property_table(props: Sequence[PropertyDoc], *, id: str) -> str:
    rows = [
        (
            f'<code id="prop-{h(p.ident)}">{h(p.ident)}</code>',
            h(p.meaning),
            h(p.value),
            f"<code>{h(p.ident)}[{h(p.example)}]</code>",
            h(_presence(p)),
        )
        for p in props
    ]
    return table(["Property", "Meaning", "Value", "Example", "Present"], rows, id=id)


def _board() -> str:
    """The coordinate system drawn: letters on both edges, the corners and the example moves."""
    cell, margin = 20, 26
    size = margin * 2 + cell * (BOARD_SIZE - 1)
    parts = [
        f'<svg class="board" viewBox="0 0 {size} {size}" role="img" '
        'aria-label="A 15 by 15 board: columns a to o from the left, rows a to o from the top; '
        'the example game\'s moves hh, ih and ii are shown" xmlns="http://www.w3.org/2000/svg">'
    ]
    end = margin + cell * (BOARD_SIZE - 1)
    for i, letter in enumerate(_LETTERS):
        p = margin + i * cell
        parts.append(f'<line x1="{p}" y1="{margin}" x2="{p}" y2="{end}"/>')
        parts.append(f'<line x1="{margin}" y1="{p}" x2="{end}" y2="{p}"/>')
        parts.append(f'<text x="{p}" y="{margin - 10}">{letter}</text>')
        parts.append(f'<text x="{margin - 14}" y="{p + 4}">{letter}</text>')
    for number, move in enumerate(EXAMPLE.moves, start=1):
        x, y = margin + move.x * cell, margin + move.y * cell
        colour = "b" if move.color is Color.BLACK else "w"
        point = _LETTERS[move.x] + _LETTERS[move.y]
        parts.append(
            f'<circle cx="{x}" cy="{y}" r="8" class="stone-{colour}">'
            f"<title>move {number}: {move.color.value}[{point}]</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _scope_text() -> str:
    rated = "rated" if SCOPE["rated"] else "unrated"
    return h(
        f"completed games with mode={SCOPE['mode']}, rated={str(SCOPE['rated']).lower()} "
        f"({rated}) and ruleset={SCOPE['ruleset']}"
    )


@functools.cache
def render_profile_page() -> bytes:
    standard = [p for p in ROOT_PROPERTIES if not p.extension]
    extensions = [p for p in ROOT_PROPERTIES if p.extension]
    results = table(
        ["RE value", "Meaning"],
        [(f"<code>RE[{h(value)}]</code>", h(text)) for value, text in RE_VALUES.items()],
        id="results-table",
    )
    terminations = table(
        ["XER value", "Meaning"],
        [(f"<code>{h(t.value)}</code>", h(TERMINATION_DOCS[t])) for t in Termination],
        id="terminations-table",
    )
    reasons = table(
        ["Manifest key", "Meaning"],
        [(f"<code>{h(r.value)}</code>", h(REASON_DOCS[r])) for r in Reason],
        id="reasons-table",
    )
    main = template("profile.html").substitute(
        profile=h(PROFILE),
        scope=_scope_text(),
        standard_table=_property_table(standard, id="properties-table"),
        extension_table=_property_table(extensions, id="extensions-table"),
        result_table=results,
        termination_table=terminations,
        reason_table=reasons,
        board=_board(),
        example=h(example_line().rstrip("\n")),
        stdlib_example=h(STDLIB_EXAMPLE),
        sgfmill_example=h(SGFMILL_EXAMPLE),
    )
    return page(
        title=f"{PROFILE}: the Gomoku Party SGF profile",
        description="Every property, extension, result, termination and exclusion reason of "
        "the Gomoku Party SGF archive profile.",
        main=main,
    )
