"""Table tests of the HTTP precondition and range decisions (RFC 9110 §8.8, §13, §14)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gomoku_archive.http.conditions import (
    ANY,
    ByteRangeSpec,
    Decision,
    EntityTag,
    Representation,
    RequestConditions,
    accepts_gzip,
    evaluate,
    format_http_date,
    parse_entity_tag,
    parse_http_date,
    parse_range,
    parse_tag_list,
    satisfiable_span,
    strong_etag,
)

ETAG = EntityTag('"abc"')
MODIFIED = datetime(2026, 9, 1, 0, 12, 30, 456_789, tzinfo=UTC)
MODIFIED_HTTP = "Tue, 01 Sep 2026 00:12:30 GMT"
BEFORE_HTTP = "Tue, 01 Sep 2026 00:12:29 GMT"
AFTER_HTTP = "Tue, 01 Sep 2026 00:12:31 GMT"
LENGTH = 1000
REP = Representation(ETAG, LENGTH, MODIFIED)
NOW = datetime(2026, 10, 1, tzinfo=UTC)


def rq(**fields: str) -> RequestConditions:
    return RequestConditions(**fields)


def whole() -> Decision:
    return Decision(200, 0, LENGTH)


def part(start: int, end: int) -> Decision:
    return Decision(206, start, end, f"bytes {start}-{end - 1}/{LENGTH}")


UNSATISFIABLE = Decision(416, content_range=f"bytes */{LENGTH}")


# --- entity-tag lists ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"abc"', (EntityTag('"abc"'),)),
        ('W/"abc"', (EntityTag('"abc"', weak=True),)),
        ('"a", W/"b" ,"c"', (EntityTag('"a"'), EntityTag('"b"', True), EntityTag('"c"'))),
        (' , "a",, ', (EntityTag('"a"'),)),  # empty list elements are allowed (§5.6.1)
        ('""', (EntityTag('""'),)),
        ("*", ANY),
        (" * ", ANY),
        ("abc", ()),  # unquoted: malformed, matches nothing
        ('"abc', ()),
        ('"a" "b"', ()),  # missing comma
        ('w/"a"', ()),  # the weak prefix is case-sensitive
        ('"a b"', ()),  # space is not an etagc
        ('"a", *', ()),  # "*" only stands alone
        ("", ()),
    ],
)
def test_parse_tag_list(value: str, expected: object) -> None:
    assert parse_tag_list(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"x"', EntityTag('"x"')),
        (' W/"x" ', EntityTag('"x"', True)),
        ("x", None),
        ('"x", "y"', None),
    ],
)
def test_parse_entity_tag(value: str, expected: EntityTag | None) -> None:
    assert parse_entity_tag(value) == expected


def test_strong_etag_rejects_a_quote() -> None:
    assert str(strong_etag("a-b")) == '"a-b"'
    with pytest.raises(ValueError, match="entity-tag"):
        strong_etag('a"b')


# --- HTTP dates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Sun, 06 Nov 1994 08:49:37 GMT", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
        ("Sun Nov  6 08:49:37 1994", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
        ("Thursday, 01-Oct-26 00:00:00 GMT", datetime(2026, 10, 1, tzinfo=UTC)),
        # two-digit years more than 50 years ahead are in the past century (§5.6.7)
        ("Friday, 01-Jan-77 00:00:00 GMT", datetime(1977, 1, 1, tzinfo=UTC)),
        ("Friday, 01-Jan-76 00:00:00 GMT", datetime(2076, 1, 1, tzinfo=UTC)),
        ("Friday, 01-Jan-99 00:00:00 GMT", datetime(1999, 1, 1, tzinfo=UTC)),
        ("Sun, 06 Nov 1994 08:49:37 +0000", None),  # only GMT
        ("Sun, 6 Nov 1994 08:49:37 GMT", None),
        ("Sun, 31 Feb 1994 08:49:37 GMT", None),
        ("Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT", None),
        ("1994-11-06T08:49:37Z", None),
        ("", None),
        # Only ASCII DIGIT is a digit (RFC 9110 §5.6.7, RFC 5234 B.1): not Arabic-Indic,
        # fullwidth or other Unicode digits, which Python's \\d and int() both accept.
        ("Sun, ٠٦ Nov 1994 08:49:37 GMT", None),
        ("Sun, 06 Nov １９９４ 08:49:37 GMT", None),
        ("Sunday, 06-Nov-٩٤ 08:49:37 GMT", None),
        ("Sun Nov  ٦ 08:49:37 1994", None),
        ("Sun, 06 Nov 1994 ０8:49:37 GMT", None),
    ],
)
def test_parse_http_date(value: str, expected: datetime | None) -> None:
    assert parse_http_date(value, now=NOW) == expected


def test_format_http_date_is_imf_fixdate_truncated_to_the_second() -> None:
    assert format_http_date(MODIFIED) == MODIFIED_HTTP
    assert parse_http_date(format_http_date(MODIFIED)) == MODIFIED.replace(microsecond=0)


# --- Range parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("bytes=0-499", (ByteRangeSpec(0, 499),)),
        ("bytes=500-", (ByteRangeSpec(500, None),)),
        ("bytes=-500", (ByteRangeSpec(None, 500),)),
        ("BYTES=1-2", (ByteRangeSpec(1, 2),)),  # units compare case-insensitively
        ("bytes=0-0, -1", (ByteRangeSpec(0, 0), ByteRangeSpec(None, 1))),
        ("bytes= 1-2 ,,3-4", (ByteRangeSpec(1, 2), ByteRangeSpec(3, 4))),
        ("bytes=5-4", "invalid"),
        ("bytes=abc", "invalid"),
        ("bytes=", "invalid"),
        ("bytes=1-2-3", "invalid"),
        ("bytes=--1", "invalid"),
        ("bytes=+1-2", "invalid"),
        ("bytes=1 - 2", "invalid"),
        ("bytes=0-1, bytes=2-3", "invalid"),  # the field sent twice, joined
        ("items=0-1", "ignore"),
        ("0-499", "ignore"),
        ("", "ignore"),
        ("bytes=" + "9" * 5000 + "-", (ByteRangeSpec(10**18, None),)),
        # Numbers of any length are numbers (§14.1.2): leading zeros do not make them large.
        ("bytes=-" + "0" * 30 + "1", (ByteRangeSpec(None, 1),)),
        ("bytes=" + "0" * 5000 + "7-" + "0" * 40 + "9", (ByteRangeSpec(7, 9),)),
        ("bytes=" + "0" * 19 + "2-1", "invalid"),
        # ... and last < first is decided exactly, whatever the length.
        ("bytes=" + "1" * 30 + "-" + "1" * 29, "invalid"),
        ("bytes=" + "1" * 29 + "-" + "1" * 30, (ByteRangeSpec(10**18, 10**18),)),
        # Only ASCII digits, and only the ASCII unit name.
        ("bytes=٠-٩", "invalid"),
        ("bytes=-５", "invalid"),
        ("bytes=1-²", "invalid"),
        ("bytes=1_0-20", "invalid"),
        ("bytes=1-1_0", "invalid"),
        ("ｂｙｔｅｓ=0-1", "ignore"),
    ],
)
def test_parse_range(value: str, expected: object) -> None:
    assert parse_range(value) == expected


@pytest.mark.parametrize(
    ("spec", "span"),
    [
        (ByteRangeSpec(0, 0), (0, 1)),
        (ByteRangeSpec(0, 999), (0, 1000)),
        (ByteRangeSpec(0, 5000), (0, 1000)),  # last-pos past the end is clamped
        (ByteRangeSpec(999, None), (999, 1000)),
        (ByteRangeSpec(1000, None), None),
        (ByteRangeSpec(1000, 2000), None),
        (ByteRangeSpec(None, 1), (999, 1000)),
        (ByteRangeSpec(None, 5000), (0, 1000)),  # a suffix longer than the file is all of it
        (ByteRangeSpec(None, 0), None),
    ],
)
def test_satisfiable_span(spec: ByteRangeSpec, span: tuple[int, int] | None) -> None:
    assert satisfiable_span(spec, LENGTH) == span


def test_nothing_of_an_empty_representation_is_satisfiable() -> None:
    assert satisfiable_span(ByteRangeSpec(None, 5), 0) is None
    assert satisfiable_span(ByteRangeSpec(0, None), 0) is None


# --- the decision table ----------------------------------------------------------------------

CASES: list[tuple[str, RequestConditions, Decision]] = [
    ("plain GET", rq(), whole()),
    ("plain HEAD", rq(method="HEAD"), whole()),
    # If-None-Match (weak comparison)
    ("INM match", rq(if_none_match='"abc"'), Decision(304)),
    ("INM match HEAD", rq(method="HEAD", if_none_match='"abc"'), Decision(304)),
    ("INM weak tag matches weakly", rq(if_none_match='W/"abc"'), Decision(304)),
    ("INM in a list", rq(if_none_match='"x", "abc"'), Decision(304)),
    ("INM star", rq(if_none_match="*"), Decision(304)),
    ("INM other", rq(if_none_match='"x"'), whole()),
    ("INM malformed is no match", rq(if_none_match="abc"), whole()),
    ("INM match, unsafe method: 412", rq(method="POST", if_none_match='"abc"'), Decision(412)),
    # If-Match (strong comparison)
    ("IM match", rq(if_match='"abc"'), whole()),
    ("IM star", rq(if_match="*"), whole()),
    ("IM in a list", rq(if_match='"x", "abc"'), whole()),
    ("IM other", rq(if_match='"x"'), Decision(412)),
    ("IM weak never matches", rq(if_match='W/"abc"'), Decision(412)),
    ("IM malformed fails", rq(if_match="abc"), Decision(412)),
    ("IM fails before INM", rq(if_match='"x"', if_none_match='"abc"'), Decision(412)),
    ("IM passes then INM", rq(if_match='"abc"', if_none_match='"abc"'), Decision(304)),
    # If-Unmodified-Since
    ("IUS same second", rq(if_unmodified_since=MODIFIED_HTTP), whole()),
    ("IUS later", rq(if_unmodified_since=AFTER_HTTP), whole()),
    ("IUS earlier", rq(if_unmodified_since=BEFORE_HTTP), Decision(412)),
    ("IUS invalid is ignored", rq(if_unmodified_since="yesterday"), whole()),
    ("IUS ignored with If-Match", rq(if_match='"abc"', if_unmodified_since=BEFORE_HTTP), whole()),
    # If-Modified-Since
    ("IMS same second", rq(if_modified_since=MODIFIED_HTTP), Decision(304)),
    ("IMS later", rq(if_modified_since=AFTER_HTTP), Decision(304)),
    ("IMS earlier", rq(if_modified_since=BEFORE_HTTP), whole()),
    ("IMS invalid is ignored", rq(if_modified_since="yesterday"), whole()),
    ("IMS two dates are ignored", rq(if_modified_since=f"{AFTER_HTTP}, {AFTER_HTTP}"), whole()),
    ("IMS ignored with INM", rq(if_none_match='"x"', if_modified_since=AFTER_HTTP), whole()),
    ("IMS ignored on POST", rq(method="POST", if_modified_since=AFTER_HTTP), whole()),
    ("IMS HEAD", rq(method="HEAD", if_modified_since=AFTER_HTTP), Decision(304)),
    # Range
    ("range first bytes", rq(range="bytes=0-99"), part(0, 100)),
    ("range open end", rq(range="bytes=900-"), part(900, 1000)),
    ("range suffix", rq(range="bytes=-10"), part(990, 1000)),
    ("range clamps last", rq(range="bytes=10-99999"), part(10, 1000)),
    ("range whole file is still 206", rq(range="bytes=0-"), part(0, 1000)),
    ("range last byte", rq(range="bytes=999-999"), part(999, 1000)),
    ("range past the end", rq(range="bytes=1000-"), UNSATISFIABLE),
    ("range suffix zero", rq(range="bytes=-0"), UNSATISFIABLE),
    ("range invalid order", rq(range="bytes=9-3"), UNSATISFIABLE),
    ("range garbage bytes set", rq(range="bytes=x-y"), UNSATISFIABLE),
    ("range other unit ignored", rq(range="pages=1-2"), whole()),
    ("range without unit ignored", rq(range="0-10"), whole()),
    ("several ranges: whole file", rq(range="bytes=0-9,20-29"), whole()),
    ("several, one satisfiable", rq(range="bytes=0-9,5000-"), part(0, 10)),
    ("several, none satisfiable", rq(range="bytes=5000-,-0"), UNSATISFIABLE),
    ("range ignored on HEAD", rq(method="HEAD", range="bytes=0-9"), whole()),
    ("range ignored on HEAD even if bad", rq(method="HEAD", range="bytes=5000-"), whole()),
    ("304 wins over range", rq(if_none_match='"abc"', range="bytes=0-9"), Decision(304)),
    ("412 wins over range", rq(if_match='"x"', range="bytes=5000-"), Decision(412)),
    ("INM miss then range", rq(if_none_match='"x"', range="bytes=0-9"), part(0, 10)),
    # If-Range
    ("if-range etag match", rq(range="bytes=0-9", if_range='"abc"'), part(0, 10)),
    ("if-range etag other", rq(range="bytes=0-9", if_range='"x"'), whole()),
    ("if-range weak etag never", rq(range="bytes=0-9", if_range='W/"abc"'), whole()),
    ("if-range etag list is no etag", rq(range="bytes=0-9", if_range='"abc", "x"'), whole()),
    ("if-range date exact", rq(range="bytes=0-9", if_range=MODIFIED_HTTP), part(0, 10)),
    ("if-range date later is not exact", rq(range="bytes=0-9", if_range=AFTER_HTTP), whole()),
    ("if-range date earlier", rq(range="bytes=0-9", if_range=BEFORE_HTTP), whole()),
    ("if-range garbage", rq(range="bytes=0-9", if_range="whenever"), whole()),
    ("if-range false skips 416", rq(range="bytes=5000-", if_range='"x"'), whole()),
    ("if-range true keeps 416", rq(range="bytes=5000-", if_range='"abc"'), UNSATISFIABLE),
    ("if-range without range", rq(if_range='"x"'), whole()),
]


@pytest.mark.parametrize(
    ("request_", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_evaluate(request_: RequestConditions, expected: Decision) -> None:
    assert evaluate(request_, REP, now=NOW) == expected


def test_without_last_modified_the_date_conditions_are_ignored() -> None:
    rep = Representation(ETAG, LENGTH)
    assert evaluate(rq(if_modified_since=AFTER_HTTP), rep) == whole()
    assert evaluate(rq(if_unmodified_since=BEFORE_HTTP), rep) == whole()
    assert evaluate(rq(range="bytes=0-9", if_range=MODIFIED_HTTP), rep) == whole()


def test_a_representation_without_ranges_ignores_range() -> None:
    rep = Representation(ETAG, LENGTH, MODIFIED, ranges=False)
    assert evaluate(rq(range="bytes=0-9"), rep) == whole()
    assert evaluate(rq(range="bytes=5000-"), rep) == whole()


def test_decision_helpers() -> None:
    assert part(10, 20).length == 10


# --- Accept-Encoding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZip", True),
        ("x-gzip", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.8", True),
        ("gzip;q=0", False),
        ("gzip; q=0.000", False),
        ("gzip;q=abc", False),
        ("gzip;q=١", False),  # qvalue digits are ASCII (§12.4.2)
        ("gzip;q=inf", False),
        ("gzip;q=1e0", False),
        ("gzip;q=0.5", True),
        ("gzip;q=1.000", True),
        ("identity", False),
        ("deflate, br", False),
        ("*", True),
        ("*;q=0", False),
        ("*, gzip;q=0", False),
        ("gzip;q=0, *", False),
        ("identity;q=1, *;q=0.5", True),
    ],
)
def test_accepts_gzip(value: str | None, expected: bool) -> None:
    assert accepts_gzip(value) is expected
