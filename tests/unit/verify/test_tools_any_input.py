"""No line makes the downloaders' tools raise: ``verify``'s verifier and ``games``' reader and
records answer every game line, its instants in any year from 1 to 9999 and every root
property's value replaced or spoilt, with a report, a record or a problem, never an exception;
``games`` writes every year in four digits; and ``verify`` holds a game to the exporter's 31-day
rule. (A multi-day game ending 9999-12-31 raised OverflowError in both commands.)"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, date, datetime, timedelta

from hypothesis import event, given, settings
from hypothesis import strategies as st

from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import ROOT_PROPERTIES, format_dates
from gomoku_archive.verify.archive import ArchiveVerifier
from gomoku_archive.verify.games_rows import FIELDS, csv_row, record
from gomoku_archive.verify.line_check import check_line
from tests.budget import examples
from tests.unit.verify.test_verify import TOO_LONG
from tests.unit.verify.test_verify_fast_path import LINES, NASTY, POSITION, Edit, mutate, set_value

FIRST = datetime(1, 1, 1, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
INSTANTS = st.one_of(
    st.datetimes(min_value=FIRST.replace(tzinfo=None), max_value=LAST.replace(tzinfo=None)),
    # the ends of the calendar, where a day more or less does not exist
    st.datetimes(min_value=datetime(9999, 11, 25), max_value=LAST.replace(tzinfo=None)),
    st.datetimes(min_value=datetime(9999, 12, 31), max_value=LAST.replace(tzinfo=None)),
    st.datetimes(min_value=FIRST.replace(tzinfo=None), max_value=datetime(1, 2, 5)),
    st.datetimes(min_value=datetime(999, 1, 1), max_value=datetime(999, 12, 31)),
).map(lambda naive: naive.replace(microsecond=0, tzinfo=UTC))
NOT_INSTANTS = st.sampled_from(
    [
        "0000-01-01T00:00:00Z",
        "9999-12-32T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-02-29T10:00:00Z",
        "2026-08-01T24:00:00Z",
        "10000-01-01T00:00:00Z",
        "999-12-31T00:00:00Z",
    ]
)
SPANS = st.one_of(
    st.timedeltas(timedelta(0), LONGEST_GAME + timedelta(days=2)),
    st.sampled_from([LONGEST_GAME, LONGEST_GAME + timedelta(seconds=1), timedelta(days=1)]),
    st.timedeltas(-timedelta(days=3), timedelta(days=3_652_059)),
)
VARYING = [prop.ident for prop in ROOT_PROPERTIES if prop.fixed is None]
VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "0",
            "-1",
            "2147483648 Elo",
            "99999999999999999999",
            "B+",
            "Draw",
            "FIVE",
            "TIMEOUT",
            "00000000-0000-4000-8000-000000000001",
            "9999-12-31",
            "0001-01-01,02",
            "9999-12-30,31",
            "\\]",
        ]
    ),
    st.text(max_size=12),
)


def stamp(instant: datetime) -> str:
    return f"{instant.year:04d}-{instant:%m-%dT%H:%M:%S}Z"


_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def stamp_of(value: str) -> datetime | None:
    """The instant of an XST/XET value of the profile's form, None for any other value."""
    if _STAMP.fullmatch(value) is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def apart(finish: datetime, span: timedelta) -> datetime:
    """``finish - span``, held inside the calendar (years 1 to 9999)."""
    if span >= timedelta(0):
        return finish - min(span, finish - FIRST)
    return finish + min(-span, LAST - finish)


@st.composite
def lines(draw: st.DrawFn) -> tuple[str, bool]:
    """An exported line played at any instants of years 1 to 9999 (its DT right for them, or
    not), each varying root property kept or replaced, then edited anywhere; and whether it is
    the exported line but for its instants and DT (nothing replaced, no edit)."""
    text = draw(st.sampled_from(LINES))
    finish = draw(INSTANTS)
    start = apart(finish, draw(SPANS))
    xst, xet = stamp(start), stamp(finish)
    if draw(st.integers(0, 9)) == 0:
        xst, xet = draw(st.sampled_from([(draw(NOT_INSTANTS), xet), (xst, draw(NOT_INSTANTS))]))
    text = set_value(set_value(text, "XST", xst), "XET", xet)
    if start <= finish and (finish - start).days < 100:
        text = set_value(text, "DT", format_dates(start.date(), finish.date()))
    if draw(st.integers(0, 2)) == 0:  # a third of the lines keep the rest as exported
        return text, True
    replaced = draw(st.lists(st.sampled_from(VARYING), max_size=3, unique=True))
    for ident in replaced:
        if f"]{ident}[" in text:
            text = set_value(text, ident, draw(VALUES))
    edits: list[Edit] = draw(st.lists(st.tuples(POSITION, st.integers(0, 3), NASTY), max_size=2))
    return mutate(text, edits), not edits and not replaced


def value(text: str, ident: str) -> str | None:
    found = re.search(rf"\]{ident}\[([^\]]*)\]", text)
    return found.group(1) if found else None


@settings(max_examples=examples(1500), deadline=None)
@given(line=lines(), month=st.tuples(st.integers(0, 9999), st.integers(0, 99)))
def test_no_line_in_any_year_makes_verify_or_games_raise(
    line: tuple[str, bool], month: tuple[int, int]
) -> None:
    text, times_kept = line
    # games: each line through check_line, then its record as JSON and as a CSV row
    facts = check_line(text)
    if not facts.problems:
        event("a game games prints")
        game = record(facts)
        assert re.fullmatch(r"[0-9]{4}-[0-9]{2}", game["month"]), game["month"]
        assert game["month"] == game["end"][:7]
        json.dumps(game)
        written = io.StringIO()
        csv.writer(written).writerows([FIELDS, csv_row(game)])
        assert next(csv.DictReader(io.StringIO(written.getvalue())))["month"] == game["month"]
    else:
        event("a line with problems")
    # verify: the line as a whole archive, under a well-formed name of any month, possible or not
    name = f"gomoku-party-{month[0]:04d}-{month[1]:02d}-{'0' * 16}.sgf.gz"
    verifier = ArchiveVerifier(file_name=name, plain=True)
    verifier.feed(text.encode() + b"\n")
    assert verifier.finish().problem_count >= 1  # the name's hash prefix, at least
    # the exporter's 31-day rule, for a line whose instants are the ones written
    start, finish = stamp_of(value(text, "XST") or ""), stamp_of(value(text, "XET") or "")
    if times_kept and start is not None and finish is not None and start <= finish:
        too_long = finish - start > LONGEST_GAME
        event(f"longer than 31 days: {too_long}")
        assert (TOO_LONG in [m for _, m in facts.problems]) is too_long, facts.problems


def test_a_multi_day_game_at_the_end_of_the_calendar_is_checked() -> None:
    """The case that raised OverflowError: DT listing 9999-12-30 and 9999-12-31."""
    text = set_value(LINES[0], "XST", "9999-12-30T23:00:00Z")
    text = set_value(set_value(text, "XET", "9999-12-31T23:59:59Z"), "DT", "9999-12-30,31")
    facts = check_line(text)
    assert facts.problems == []
    assert record(facts)["month"] == "9999-12"
    assert format_dates(date(9999, 12, 30), date(9999, 12, 31)) == "9999-12-30,31"
