"""Conditional and range requests decided without I/O (RFC 9110 §8.8, §13, §14): the HTTP layer
hands over the request's header strings and the representation's facts, and ``evaluate``
answers with a ``Decision`` (200, 206, 304, 412 or 416 and the byte span to send).
docs/http-api.md ("Conditional requests and ranges") lists the choices where the RFC leaves
room; each is kept in one place below."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal

# --- entity-tags (§8.8.3) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntityTag:
    opaque: str
    """The quoted opaque-tag, quotes included: ``"abc"``."""
    weak: bool = False

    def __str__(self) -> str:
        return ("W/" if self.weak else "") + self.opaque


ANY: Final = "*"
TagList = tuple[EntityTag, ...] | Literal["*"]

# etagc = %x21 / %x23-7E / obs-text
_OPAQUE = re.compile(r'"[\x21\x23-\x7e\x80-\xff]*"')
_OWS = " \t"


def strong_etag(opaque_text: str) -> EntityTag:
    """A strong entity-tag around ``opaque_text`` (which must not contain a double quote)."""
    tag = EntityTag(f'"{opaque_text}"')
    if not _OPAQUE.fullmatch(tag.opaque):
        raise ValueError(f"not a valid entity-tag value: {opaque_text!r}")
    return tag


def parse_entity_tag(value: str) -> EntityTag | None:
    """One entity-tag (If-Range's form), or None when it is not one."""
    text = value.strip(_OWS)
    weak = text.startswith("W/")
    opaque = text[2:] if weak else text
    return EntityTag(opaque, weak) if _OPAQUE.fullmatch(opaque) else None


def parse_tag_list(value: str) -> TagList:
    """``If-Match`` / ``If-None-Match``: ``*`` or a comma list of entity-tags (empty list
    elements are allowed, §5.6.1). A malformed field yields an empty tuple: it matches nothing."""
    text = value.strip(_OWS)
    if text == ANY:
        return ANY
    tags: list[EntityTag] = []
    pos = 0
    while pos < len(text):
        if text[pos] in _OWS + ",":
            pos += 1
            continue
        weak = text.startswith("W/", pos)
        start = pos + 2 if weak else pos
        match = _OPAQUE.match(text, start)
        if match is None:
            return ()
        tags.append(EntityTag(match.group(), weak))
        pos = match.end()
        while pos < len(text) and text[pos] in _OWS:
            pos += 1
        if pos < len(text) and text[pos] != ",":
            return ()
    return tuple(tags)


def strong_match(a: EntityTag, b: EntityTag) -> bool:
    """§8.8.3.2: both strong and identical."""
    return not a.weak and not b.weak and a.opaque == b.opaque


def weak_match(a: EntityTag, b: EntityTag) -> bool:
    """§8.8.3.2: identical opaque-tags, weak or not."""
    return a.opaque == b.opaque


# --- HTTP-date (§5.6.7) -----------------------------------------------------------------------

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_LONG_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MON = "|".join(_MONTHS)
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
_IMF_FIXDATE = re.compile(rf"(?:{'|'.join(_DAYS)}), ([0-9]{{2}}) ({_MON}) ([0-9]{{4}}) {_TIME} GMT")
_RFC850 = re.compile(rf"(?:{'|'.join(_LONG_DAYS)}), ([0-9]{{2}})-({_MON})-([0-9]{{2}}) {_TIME} GMT")
_ASCTIME = re.compile(rf"(?:{'|'.join(_DAYS)}) ({_MON}) ([ 0-9][0-9]) {_TIME} ([0-9]{{4}})")


def format_http_date(instant: datetime) -> str:
    """IMF-fixdate, the one form a sender generates: ``Sun, 06 Nov 1994 08:49:37 GMT``."""
    t = instant.astimezone(UTC)
    return (
        f"{_DAYS[t.weekday()]}, {t.day:02d} {_MONTHS[t.month - 1]} {t.year:04d} "
        f"{t.hour:02d}:{t.minute:02d}:{t.second:02d} GMT"
    )


def parse_http_date(value: str, *, now: datetime | None = None) -> datetime | None:
    """Any of the three HTTP-date forms a recipient must accept, as an aware UTC datetime; None
    when the value is not exactly one valid HTTP-date (a list of two dates is not one)."""
    text = value.strip(_OWS)
    try:
        if m := _IMF_FIXDATE.fullmatch(text):
            day, mon, year, hh, mm, ss = m.groups()
            return _utc(int(year), mon, int(day), hh, mm, ss)
        if m := _ASCTIME.fullmatch(text):
            mon, day, hh, mm, ss, year = m.groups()
            return _utc(int(year), mon, int(day.strip()), hh, mm, ss)
        if m := _RFC850.fullmatch(text):
            day, mon, yy, hh, mm, ss = m.groups()
            # §5.6.7: a two-digit year more than 50 years in the future is the most recent
            # past year with those digits.
            this_year = (now or datetime.now(UTC)).year
            year = this_year - this_year % 100 + int(yy)
            if year > this_year + 50:
                year -= 100
            return _utc(year, mon, int(day), hh, mm, ss)
    except ValueError:  # 31 Feb, 25:00:00 ...
        return None
    return None


def _utc(year: int, mon: str, day: int, hh: str, mm: str, ss: str) -> datetime:
    return datetime(year, _MONTHS.index(mon) + 1, day, int(hh), int(mm), int(ss), tzinfo=UTC)


def to_second(instant: datetime) -> datetime:
    """HTTP-dates have one-second resolution; comparisons use the truncated instant."""
    return instant.astimezone(UTC).replace(microsecond=0)


# --- Range (§14.1, §14.2) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ByteRangeSpec:
    """``first-last`` (last may be None: to the end) or, with ``first`` None, a suffix of
    ``last`` bytes (``-500``)."""

    first: int | None
    last: int | None


RangeParse = tuple[ByteRangeSpec, ...] | Literal["ignore", "invalid"]

_INT_RANGE = re.compile(r"([0-9]+)-([0-9]*)")
_SUFFIX_RANGE = re.compile(r"-([0-9]+)")
_HUGE = 10**18
"""Positions with more significant digits than this are past any representation (and int() of
thousands of digits is slow or refused), so they are clamped to a number larger than any
length."""


def _significant(digits: str) -> str:
    return digits.lstrip("0") or "0"


def _position(digits: str) -> int:
    significant = _significant(digits)
    return int(significant) if len(significant) <= 18 else _HUGE


def _before(a: str, b: str) -> bool:
    """Whether the number written ``a`` is less than the one written ``b``, exactly, whatever
    their lengths: after the leading zeros, fewer digits is smaller, and equal lengths compare
    digit by digit."""
    a, b = _significant(a), _significant(b)
    return (len(a), a) < (len(b), b)


def parse_range(value: str) -> RangeParse:
    """A Range field: its byte-range-specs, ``"ignore"`` when the unit is not bytes (or there
    is no unit at all), ``"invalid"`` when a bytes range-set does not parse or has a range whose
    last position is before its first."""
    unit, sep, range_set = value.strip(_OWS).partition("=")
    # range-unit is a case-insensitive token (§14.1); isascii() keeps lower() from mapping
    # another script's letters onto ASCII ones.
    if not sep or not unit.isascii() or unit.lower() != "bytes":
        return "ignore"
    specs: list[ByteRangeSpec] = []
    for element in range_set.split(","):
        item = element.strip(_OWS)
        if not item:
            continue
        if m := _INT_RANGE.fullmatch(item):
            if m.group(2) and _before(m.group(2), m.group(1)):
                return "invalid"  # §14.1.2: last-pos less than first-pos
            last = _position(m.group(2)) if m.group(2) else None
            specs.append(ByteRangeSpec(_position(m.group(1)), last))
        elif m := _SUFFIX_RANGE.fullmatch(item):
            specs.append(ByteRangeSpec(None, _position(m.group(1))))
        else:
            return "invalid"
    return tuple(specs) if specs else "invalid"


def satisfiable_span(spec: ByteRangeSpec, length: int) -> tuple[int, int] | None:
    """The half-open byte span ``[start, end)`` a range selects, or None (§14.1.2)."""
    if spec.first is None:
        suffix = spec.last or 0
        if suffix == 0 or length == 0:
            return None
        return max(0, length - suffix), length
    if spec.first >= length:
        return None
    last = length - 1 if spec.last is None else min(spec.last, length - 1)
    return spec.first, last + 1


# --- the decision -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Representation:
    """What the server knows of the selected representation."""

    etag: EntityTag
    length: int
    last_modified: datetime | None = None
    ranges: bool = True
    """Whether byte ranges are offered (``Accept-Ranges: bytes``)."""


@dataclass(frozen=True, slots=True)
class RequestConditions:
    """The request's method and conditional header values (None when absent; a field sent
    several times is passed joined with ``", "``, which makes a singleton field invalid)."""

    method: str = "GET"
    if_match: str | None = None
    if_none_match: str | None = None
    if_modified_since: str | None = None
    if_unmodified_since: str | None = None
    range: str | None = None
    if_range: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    status: Literal[200, 206, 304, 412, 416]
    start: int = 0
    end: int = 0
    """Half-open span of the representation to send (empty for 304, 412 and 416)."""
    content_range: str | None = None

    @property
    def length(self) -> int:
        return self.end - self.start


def evaluate(
    request: RequestConditions, rep: Representation, *, now: datetime | None = None
) -> Decision:
    """What to answer a GET or HEAD for an existing representation (§13.2.2 order)."""
    safe = request.method in ("GET", "HEAD")
    modified = to_second(rep.last_modified) if rep.last_modified is not None else None

    # 1. If-Match (§13.1.1): strong comparison; "*" matches any current representation.
    if request.if_match is not None:
        if not _any_matches(parse_tag_list(request.if_match), rep.etag, strong=True):
            return Decision(412)
    # 2. If-Unmodified-Since (§13.1.4), only without If-Match; an invalid date is ignored.
    elif request.if_unmodified_since is not None and modified is not None:
        since = parse_http_date(request.if_unmodified_since, now=now)
        if since is not None and modified > since:
            return Decision(412)

    # 3. If-None-Match (§13.1.2): weak comparison; a match is 304 for GET/HEAD, else 412.
    if request.if_none_match is not None:
        if _any_matches(parse_tag_list(request.if_none_match), rep.etag, strong=False):
            return Decision(304) if safe else Decision(412)
    # 4. If-Modified-Since (§13.1.3), only without If-None-Match and only for GET/HEAD.
    elif safe and request.if_modified_since is not None and modified is not None:
        since = parse_http_date(request.if_modified_since, now=now)
        if since is not None and modified <= since:
            return Decision(304)

    whole = Decision(200, 0, rep.length)
    # 5. Range (§14.2) for GET only, and If-Range (§13.1.5) decides whether it counts.
    if request.method != "GET" or not rep.ranges or request.range is None:
        return whole
    if request.if_range is not None and not _if_range_holds(request.if_range, rep, modified, now):
        return whole
    parsed = parse_range(request.range)
    if parsed == "ignore":
        return whole
    unsatisfiable = Decision(416, content_range=f"bytes */{rep.length}")
    if parsed == "invalid":
        return unsatisfiable
    spans = [s for s in (satisfiable_span(spec, rep.length) for spec in parsed) if s is not None]
    if not spans:
        return unsatisfiable
    if len(spans) > 1:
        return whole  # several ranges: the whole representation, never multipart
    start, end = spans[0]
    return Decision(206, start, end, f"bytes {start}-{end - 1}/{rep.length}")


def _any_matches(tags: TagList, current: EntityTag, *, strong: bool) -> bool:
    if tags == ANY:
        return True
    compare = strong_match if strong else weak_match
    return any(compare(tag, current) for tag in tags)


def _if_range_holds(
    value: str, rep: Representation, modified: datetime | None, now: datetime | None
) -> bool:
    """§13.1.5: an entity-tag must match strongly; a date must equal Last-Modified exactly."""
    text = value.strip(_OWS)
    if text.startswith(('"', "W/")):
        tag = parse_entity_tag(text)
        return tag is not None and strong_match(tag, rep.etag)
    date = parse_http_date(text, now=now)
    return date is not None and modified is not None and date == modified


# --- content coding of pre-compressed bodies (§12.5.3) ----------------------------------------


_QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether a gzip-coded body may be sent. No header, or gzip refused with ``q=0`` (or
    only ``*`` refused), means the identity coding."""
    if accept_encoding is None:
        return False
    gzip_q: float | None = None
    star_q: float | None = None
    for element in accept_encoding.split(","):
        coding, *params = (p.strip(_OWS) for p in element.split(";"))
        q = 1.0
        for param in params:
            name, _, raw = param.partition("=")
            if name.strip(_OWS).lower() == "q":
                # §12.4.2's qvalue grammar: float() would take "inf", "1e0", non-ASCII digits.
                weight = raw.strip(_OWS)
                q = float(weight) if _QVALUE.fullmatch(weight) else 0.0
        coding = coding.lower()
        if coding in ("gzip", "x-gzip"):
            gzip_q = q if gzip_q is None else max(gzip_q, q)
        elif coding == "*":
            star_q = q
    if gzip_q is not None:
        return gzip_q > 0
    return star_q is not None and star_q > 0
