"""``parse_moves``' fast path (jsonb's text form read by regex) accepts only what the full path
(``coerce_moves(json.loads(text))``) accepts, with the same moves; everything else takes the
full path, so both always agree."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import Color, Move, Reason
from gomoku_archive.gomoku.replay import (
    JSONB_ITEMS,
    Verdict,
    coerce_moves,
    parse_moves,
    read_jsonb,
)
from tests.budget import examples


def jsonb_text(value: object) -> str:
    """What PostgreSQL's ``jsonb::text`` writes: keys ordered by length then bytes, ``", "``
    and ``": "`` between items (numbers as Python writes them, which jsonb would normalise)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(f"{json.dumps(k)}: {jsonb_text(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    return json.dumps(value)


def full_path(text: str) -> object:
    return coerce_moves(json.loads(text))


coordinates = st.integers(min_value=-2, max_value=16) | st.sampled_from([2**70, -(2**64)])
odd_values = st.floats(allow_nan=False) | st.booleans() | st.text(max_size=2) | st.none()
items = (
    st.fixed_dictionaries(
        {
            "color": st.sampled_from(["B", "W", "b", "", "BW"]) | odd_values,
            "x": coordinates | odd_values,
            "y": coordinates,
        },
        optional={"z": st.integers()},
    )
    | st.none()
    | st.integers()
    | st.text(max_size=3)
)
move_lists = st.lists(items, max_size=12)


@settings(max_examples=examples(500), deadline=None)
@given(move_lists)
def test_fast_and_full_paths_agree_on_jsonb_text(raw: list[object]) -> None:
    text = jsonb_text(raw)
    assert parse_moves(text) == full_path(text)


@settings(max_examples=examples(300), deadline=None)
@given(move_lists)
def test_fast_and_full_paths_agree_on_any_formatting(raw: list[object]) -> None:
    for text in (json.dumps(raw), json.dumps(raw, separators=(",", ":")), jsonb_text(raw) + " "):
        assert parse_moves(text) == full_path(text)


@given(st.text(alphabet='[]{}", :xycolorBW0123456789١٥-', max_size=60))
def test_hostile_text_never_raises(text: str) -> None:
    outcome = parse_moves(text)
    try:
        expected = full_path(text)
    except ValueError:
        assert not isinstance(outcome, list)
        assert outcome.reason is Reason.MALFORMED
    else:
        assert outcome == expected


def test_the_common_case_takes_the_fast_path() -> None:
    text = '[{"x": 7, "y": 7, "color": "B"}, {"x": 14, "y": 0, "color": "W"}]'
    assert read_jsonb(text, JSONB_ITEMS) is not None
    assert parse_moves(text) == [Move(Color.BLACK, 7, 7), Move(Color.WHITE, 14, 0)]


def test_unicode_digits_and_off_board_points_take_the_full_path() -> None:
    for text in (
        '[{"x": ٧, "y": 7, "color": "B"}]',  # not JSON at all
        '[{"x": 15, "y": 7, "color": "B"}]',
        '[{"x": 07, "y": 7, "color": "B"}]',
        '[{"x": 7.0, "y": 7, "color": "B"}]',
    ):
        assert read_jsonb(text, JSONB_ITEMS) is None
    assert parse_moves('[{"x": 15, "y": 7, "color": "B"}]') == [Move(Color.BLACK, 15, 7)]
    outcome = parse_moves('[{"x": 7.0, "y": 7, "color": "B"}]')
    assert not isinstance(outcome, list)
    assert outcome.reason is Reason.MALFORMED


def test_null_and_empty() -> None:
    for text in (None, "null", "[]"):
        outcome = parse_moves(text)
        assert not isinstance(outcome, list)
        assert outcome.reason is Reason.EMPTY


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,  # jsonb keeps arrays this deep; Python's decoder recurses
        '[{"color": "B", "x": 1' + "0" * 5000 + ', "y": 7}]',  # more digits than int() reads
        "[1, 2",
    ],
)
def test_json_that_python_cannot_decode_is_malformed_not_an_exception(text: str) -> None:
    verdict = parse_moves(text)
    assert isinstance(verdict, Verdict)
    assert verdict.reason is Reason.MALFORMED
