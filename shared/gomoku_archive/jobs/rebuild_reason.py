"""A forced rebuild's reason: one short line of plain text that operators give (``rebuild
--reason``, the ``/ops/`` form), kept with the build's archive row and shown to downloaders on
``/database/``, in the feed and in the manifest when the rebuild changed the file. Pure."""

from __future__ import annotations

import unicodedata

from gomoku_archive.errors import InvalidRebuildReason

MAX_REASON_CHARS = 200
"""A line on the page and in a feed entry, like a commit's subject; the details belong in the
operators' own notes. Migration 0011 holds the column to it as well."""

_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character (such as a direction override)",
    "Cs": "bytes that are not text",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
}
"""What a reason may not hold: characters that would not read as the same plain text on every
page, feed reader and terminal (whitespace is folded to spaces before this check)."""


def rebuild_reason(text: str | None) -> str | None:
    """The reason as it is kept: runs of whitespace (line breaks and tabs included) folded into
    one space, the ends stripped; None when nothing is left (no reason given). Raises
    ``InvalidRebuildReason`` for more than ``MAX_REASON_CHARS`` characters, or one of the
    ``_REFUSED_CATEGORIES``."""
    if text is None:
        return None
    folded = " ".join(text.split())
    if not folded:
        return None
    if len(folded) > MAX_REASON_CHARS:
        raise InvalidRebuildReason(
            f"a rebuild's reason is at most {MAX_REASON_CHARS} characters, got {len(folded)}"
        )
    for position, char in enumerate(folded, start=1):
        what = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if what is not None:
            raise InvalidRebuildReason(
                f"a rebuild's reason is plain text; character {position} is {what} "
                f"(U+{ord(char):04X})"
            )
    return folded
