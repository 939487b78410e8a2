"""Range and conditional headers fuzzed against an independent reading of RFC 9110.

The oracle below is written from the RFC's ABNF with strict regular expressions and Python
ints, apart from ``http.conditions``; where the RFC leaves a choice the oracle takes the
one the module documents (an invalid bytes range-set is 416, several satisfiable ranges are
the whole file). Values mix what a client sends with what an attacker does: leading zeros by
the dozen, huge numbers, Arabic-Indic, fullwidth and superscript digits, stray spaces and
units in other cases or scripts.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.http.conditions import (
    Decision,
    Representation,
    RequestConditions,
    evaluate,
    format_http_date,
    strong_etag,
)

LENGTHS = st.sampled_from([0, 1, 2, 1000, 262_144, 10**12])
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
MODIFIED = datetime(2026, 9, 1, 0, 0, 5, tzinfo=UTC)
ETAG = strong_etag("abc")
EXAMPLES = 600
tried: dict[str, int] = {}

# --- the oracle -------------------------------------------------------------------------------

OWS = " \t"
# RFC 9110 §14.1.2: int-range = first-pos "-" [ last-pos ]; suffix-range = "-" suffix-length;
# positions are 1*DIGIT, and DIGIT is %x30-39 (RFC 5234 B.1).
INT_RANGE = re.compile(r"([0-9]+)-([0-9]*)", re.ASCII)
SUFFIX_RANGE = re.compile(r"-([0-9]+)", re.ASCII)
BYTES_UNIT = re.compile(r"[bB][yY][tT][eE][sS]")


def number(digits: str) -> int:
    # Python refuses int() of over 4300 characters; zeros in front change nothing.
    return int(digits.lstrip("0") or "0")


def oracle_range(value: str, length: int) -> tuple[int, int, int]:
    """(status, start, end) for a GET with this Range and no preconditions."""
    unit, eq, range_set = value.strip(OWS).partition("=")
    if not eq or not BYTES_UNIT.fullmatch(unit):
        return 200, 0, length  # §14.2: a Range in a unit not supported is ignored
    elements = [e.strip(OWS) for e in range_set.split(",")]
    specs = [e for e in elements if e]  # §5.6.1: empty list elements do not count
    if not specs:
        return 416, 0, 0
    spans = []
    for spec in specs:
        if m := INT_RANGE.fullmatch(spec):
            first = number(m[1])
            last = number(m[2]) if m[2] else length - 1
            if m[2] and last < first:
                return 416, 0, 0  # §14.1.2: invalid
            if first < length:
                spans.append((first, min(last, length - 1) + 1))
        elif m := SUFFIX_RANGE.fullmatch(spec):
            suffix = number(m[1])
            if suffix > 0 and length > 0:
                spans.append((max(0, length - suffix), length))
        else:
            return 416, 0, 0
    if not spans:
        return 416, 0, 0
    if len(spans) > 1:
        return 200, 0, length
    return 206, *spans[0]


MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
IMF = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ([A-Z][a-z]{2}) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT",
    re.ASCII,
)


def oracle_date(value: str) -> datetime | None:
    """An IMF-fixdate (§5.6.7) with ASCII digits and a real calendar date, or None. (The
    generated values are all in this form; the obsolete forms have their own table tests.)"""
    m = IMF.fullmatch(value.strip(OWS))
    if m is None or m[3] not in MONTHS:
        return None
    try:
        return datetime(
            int(m[4]),
            MONTHS.index(m[3]) + 1,
            int(m[2]),
            int(m[5]),
            int(m[6]),
            int(m[7]),
            tzinfo=UTC,
        )
    except ValueError:
        return None


# --- the values -------------------------------------------------------------------------------

FOREIGN_DIGITS = "٠١٢٣٤٥٦٧٨٩۰۱۲۳٤٥٦७８９０１２３²³¹𝟘𝟙"


@st.composite
def positions(draw: st.DrawFn) -> str:
    value = draw(st.one_of(st.integers(0, 2000), st.integers(0, 10**30)))
    text = "0" * draw(st.sampled_from([0, 0, 1, 17, 18, 19, 40, 5000])) + str(value)
    if draw(st.integers(0, 9)) == 0:  # now and then, one digit from another script
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(FOREIGN_DIGITS)) + text[at + 1 :]
    return text


@st.composite
def range_values(draw: st.DrawFn) -> str:
    unit = draw(st.sampled_from(["bytes", "bytes", "BYTES", "Bytes", "items", "ｂｙｔｅｓ", ""]))
    specs = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["int", "open", "suffix", "junk", "empty"]))
        if kind == "int":
            specs.append(f"{draw(positions())}-{draw(positions())}")
        elif kind == "open":
            specs.append(f"{draw(positions())}-")
        elif kind == "suffix":
            specs.append(f"-{draw(positions())}")
        elif kind == "junk":
            specs.append(draw(st.text(alphabet="0123456789-_ ,=+x٣", max_size=8)))
        else:
            specs.append("")
    space = draw(st.sampled_from(["", " ", "\t", "  "]))
    return f"{unit}={(space + ',' + space).join(specs)}"


@st.composite
def http_dates(draw: st.DrawFn) -> str:
    instant = MODIFIED + timedelta(seconds=draw(st.integers(-3, 3)))
    text = format_http_date(instant)
    if draw(st.booleans()):  # a digit from another script where a digit belongs
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        at = draw(st.sampled_from(digits))
        text = text[:at] + draw(st.sampled_from(FOREIGN_DIGITS)) + text[at + 1 :]
    return text


def decided(request: RequestConditions, length: int) -> tuple[int, int, int]:
    rep = Representation(ETAG, length, MODIFIED)
    decision: Decision = evaluate(request, rep, now=NOW)
    return decision.status, decision.start, decision.end


# --- the properties ---------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None)
@given(value=st.one_of(range_values(), st.text(max_size=40)), length=LENGTHS)
def test_range_agrees_with_the_rfc(value: str, length: int) -> None:
    tried["range"] = tried.get("range", 0) + 1
    assert decided(RequestConditions(range=value), length) == oracle_range(value, length)


@settings(max_examples=EXAMPLES, deadline=None)
@given(date=st.one_of(http_dates(), st.text(max_size=40)), field=st.sampled_from(["ims", "ius"]))
def test_date_conditions_agree_with_the_rfc(date: str, field: str) -> None:
    tried["dates"] = tried.get("dates", 0) + 1
    since = oracle_date(date)
    if field == "ims":
        # §13.1.3: 304 when the representation was not modified after a valid date.
        expected = 304 if since is not None and since >= MODIFIED else 200
        request = RequestConditions(if_modified_since=date)
    else:
        # §13.1.4: 412 when it was modified after a valid date; an invalid date is ignored.
        expected = 412 if since is not None and since < MODIFIED else 200
        request = RequestConditions(if_unmodified_since=date)
    assert decided(request, 1000)[0] == expected


@settings(max_examples=EXAMPLES, deadline=None)
@given(date=st.one_of(http_dates(), st.text(max_size=40)), value=range_values())
def test_if_range_with_a_date_agrees_with_the_rfc(date: str, value: str) -> None:
    tried["if-range"] = tried.get("if-range", 0) + 1
    # §13.1.5: the Range counts only when the date is valid and equals Last-Modified exactly.
    honoured = oracle_date(date) == MODIFIED
    expected = oracle_range(value, 1000) if honoured else (200, 0, 1000)
    assert decided(RequestConditions(range=value, if_range=date), 1000) == expected


def test_zz_report() -> None:
    print(
        f"{sum(tried.values())} Range/If-Modified-Since/If-Unmodified-Since/If-Range values "
        f"({', '.join(f'{k} {v}' for k, v in tried.items())}): every decision agrees with "
        "the RFC 9110 oracle"
    )
