"""Does the client prefer an HTML page to JSON? Read from its ``Accept`` field (RFC 9110
§12.5.1) as a pure function, so the table tests cover browsers, curl and API clients alike.

Browsers send ``text/html,...,*/*;q=0.8``: HTML wins. ``curl`` sends ``*/*`` and API clients
``application/json`` or nothing: JSON stays, as it always was (a tie goes to JSON)."""

from __future__ import annotations

import re

_QVALUE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)")
"""§12.4.2: ``qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )``."""


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    """(type, subtype, q) of every well-formed media range; malformed ones are left out."""
    found: list[tuple[str, str, float]] = []
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        kind, slash, sub = media.lower().partition("/")
        if not slash or not kind or not sub or (kind == "*" and sub != "*"):
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                value = value.strip()
                q = float(value) if _QVALUE.fullmatch(value) else -1.0
        if q >= 0:
            found.append((kind, sub, q))
    return found


def quality(accept: str | None, media_type: str) -> float:
    """The weight ``accept`` gives ``media_type``: the most specific matching range's q (§12.5.1:
    ``text/html`` before ``text/*`` before ``*/*``); 1 without the field, 0 when nothing matches.
    Several ranges equally specific: the highest q."""
    if accept is None:
        return 1.0
    kind, _, sub = media_type.lower().partition("/")
    best: tuple[int, float] | None = None
    for r_kind, r_sub, q in _ranges(accept):
        if (r_kind, r_sub) == (kind, sub):
            specificity = 2
        elif (r_kind, r_sub) == (kind, "*"):
            specificity = 1
        elif (r_kind, r_sub) == ("*", "*"):
            specificity = 0
        else:
            continue
        if best is None or (specificity, q) > best:
            best = (specificity, q)
    return best[1] if best is not None else 0.0


def prefers_html(accept: str | None) -> bool:
    """True when ``text/html`` weighs strictly more than ``application/json``."""
    if accept is None:
        return False
    return quality(accept, "text/html") > quality(accept, "application/json")
