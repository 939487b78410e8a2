"""Timestamps, dates, sizes and numeric values take ASCII digits only, in every path of
``verify`` and ``games``: ``int()`` and an unanchored ``\\d`` also take every other script's
decimal digits (Arabic-Indic, fullwidth, ...), and an order check that compared
such text let a file with games out of order pass."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.errors import InvalidMonth
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import ARCHIVE_NAME_RE
from gomoku_archive.verify.games_rows import record
from gomoku_archive.verify.line_check import check_line, check_line_fast
from gomoku_archive.verify.report import Check
from tests.budget import examples
from tests.unit.verify.test_verify import LINES, found, verify, with_lines
from tests.unit.verify.test_verify_fast_path import LINES as EXPORTED

OTHER_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())
"""Every decimal digit of Unicode but ASCII's 0-9 (each script's ten are consecutive)."""
NUMERIC = re.compile(r"(?<=\])(?:DT|BR|WR|XTC|XST|XET)\[([^\]]*)\]")
"""The root values made of digits (and their separators)."""


def same_digit(ascii_digit: str, script: str) -> str:
    """``ascii_digit`` written in the script of ``script``: the same number for ``int()``."""
    zero = ord(script) - unicodedata.digit(script)
    return chr(zero + int(ascii_digit))


@settings(max_examples=examples(1000), deadline=None)
@given(line=st.sampled_from(EXPORTED), script=OTHER_DIGITS, data=st.data())
def test_another_scripts_digit_in_any_numeric_value_is_a_problem(
    line: str, script: str, data: st.DataObject
) -> None:
    values = list(NUMERIC.finditer(line))
    value = data.draw(st.sampled_from(values))
    digits = [value.start(1) + i for i, c in enumerate(value[1]) if c.isdigit()]
    at = data.draw(st.sampled_from(digits))
    text = line[:at] + same_digit(line[at], script) + line[at + 1 :]
    assert check_line_fast(text) is None
    facts = check_line(text)
    assert Check.PROPERTY_VALUE in [check for check, _ in facts.problems], (text, facts)


def test_games_out_of_order_with_arabic_indic_digits_are_found() -> None:
    """The audit's file: line 2 finished before line 1, its XST and XET in Arabic-Indic digits
    (``int()`` reads them, and as text they sort after ASCII, so the order check passed)."""
    arabic = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
    early = LINES[0]
    for ident in ("XST", "XET"):
        value = early.split(f"{ident}[", 1)[1].split("]", 1)[0]
        early = early.replace(f"{ident}[{value}]", f"{ident}[{value.translate(arabic)}]")
    report = verify(with_lines(LINES[1], early, LINES[2]))
    assert not report.ok
    assert found(report) == [(2, Check.PROPERTY_VALUE), (2, Check.PROPERTY_VALUE)]


@settings(max_examples=examples(300), deadline=None)
@given(script=OTHER_DIGITS, at=st.integers(0, 5))
def test_months_and_file_names_take_ascii_digits_only(script: str, at: int) -> None:
    month = "2026-08"
    position = [0, 1, 2, 3, 5, 6][at]
    written = month[:position] + same_digit(month[position], script) + month[position + 1 :]
    with pytest.raises(InvalidMonth):
        Month.parse(written)
    assert ARCHIVE_NAME_RE.fullmatch(f"gomoku-party-{written}-0123456789abcdef.sgf.gz") is None
    assert Month.parse(month) == Month(2026, 8)


@given(script=OTHER_DIGITS)
def test_games_prints_no_time_control_it_cannot_read(script: str) -> None:
    """``games`` reads XTC with ASCII digits only (``str.isdigit`` also takes superscripts)."""
    facts = check_line(EXPORTED[0])
    assert record(facts)["timeControl"] is not None
    odd = dict(facts.values)
    odd["XTC"] = same_digit("6", script) + "0"
    facts.values = odd
    assert record(facts)["timeControl"] is None
