"""Which reason a candidate row gets, in the documented order, for rows of any shape."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import GameRecord, game_line
from tests.budget import examples

T0 = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
FIVE = [
    {"color": c, "x": x, "y": y}
    for c, x, y in [
        ("B", 0, 0),
        ("W", 0, 1),
        ("B", 1, 0),
        ("W", 1, 1),
        ("B", 2, 0),
        ("W", 2, 1),
        ("B", 3, 0),
        ("W", 3, 1),
        ("B", 4, 0),
    ]
]


def candidate(**overrides: Any) -> Candidate:
    values: dict[str, Any] = {
        "id": uuid.UUID(int=7),
        "status": "FINISHED",
        "board_size": 15,
        "started_at": T0,
        "finished_at": T0 + timedelta(minutes=2),
        "result": "BLACK_WIN",
        "termination": "FIVE",
        "moves": FIVE,
        "time_control_seconds": 60,
        "black_rating": 1500,
        "white_rating": 1400,
    }
    values.update(overrides)
    # The source reads the column as JSON text (SQL NULL stays None).
    values["moves"] = None if values["moves"] is None else json.dumps(values["moves"])
    return Candidate(**values)


def test_valid_game_becomes_a_record() -> None:
    record = classify(candidate())
    assert isinstance(record, GameRecord)
    assert record.termination is Termination.FIVE
    assert len(record.moves) == 9
    assert (record.black_rating, record.white_rating, record.time_control_seconds) == (
        1500,
        1400,
        60,
    )


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"status": "ABORTED", "result": None}, Reason.ABORTED),
        ({"status": "ABORTED", "moves": "garbage"}, Reason.ABORTED),  # status is checked first
        ({"status": "IN_PROGRESS"}, Reason.INCOMPLETE),
        ({"status": None}, Reason.INCOMPLETE),
        ({"result": None}, Reason.INCOMPLETE),
        ({"result": "black_win"}, Reason.INCOMPLETE),
        ({"termination": "RESIGN"}, Reason.INCOMPLETE),
        ({"termination": 5}, Reason.INCOMPLETE),
        ({"board_size": 19}, Reason.INCOMPLETE),
        ({"board_size": None}, Reason.INCOMPLETE),
        ({"board_size": 19, "moves": []}, Reason.INCOMPLETE),  # incomplete outranks empty
        ({"started_at": T0 + timedelta(hours=1)}, Reason.INCOMPLETE),
        ({"moves": []}, Reason.EMPTY),
        ({"moves": None}, Reason.EMPTY),
        ({"moves": "B[hh]"}, Reason.MALFORMED),
        ({"moves": [{"color": "B", "x": True, "y": 1}]}, Reason.MALFORMED),
        ({"moves": [{"color": "W", "x": 7, "y": 7}]}, Reason.TURN_ORDER),
        ({"moves": [{"color": "B", "x": 7, "y": 15}]}, Reason.OUT_OF_BOUNDS),
        ({"moves": [*FIVE[:2], {"color": "B", "x": 0, "y": 0}]}, Reason.OCCUPIED),
        ({"moves": [*FIVE, {"color": "W", "x": 9, "y": 9}]}, Reason.MOVES_AFTER_FIVE),
        ({"result": "DRAW"}, Reason.RESULT_MISMATCH),
    ],
)
def test_reasons(overrides: dict[str, Any], reason: Reason) -> None:
    assert classify(candidate(**overrides)) is reason


@pytest.mark.parametrize(
    ("column", "value", "published"),
    [
        ("time_control_seconds", 0, None),
        ("time_control_seconds", -5, None),
        ("time_control_seconds", "60", None),
        ("time_control_seconds", True, None),
        ("black_rating", None, None),
        ("black_rating", 0, 0),
        ("black_rating", -20, -20),
        ("white_rating", 15.5, None),
    ],
)
def test_optional_values_are_published_only_when_well_formed(
    column: str, value: object, published: object
) -> None:
    record = classify(candidate(**{column: value}))
    assert isinstance(record, GameRecord)
    assert getattr(record, column) == published


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.sampled_from(["color", "x", "y", "z"]), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    status=st.sampled_from(["FINISHED", "ABORTED", "IN_PROGRESS", "", None]),
    result=st.sampled_from(["BLACK_WIN", "WHITE_WIN", "DRAW", None, "X"]),
    termination=st.sampled_from([t.value for t in Termination] + [None, ""]),
    board_size=st.sampled_from([15, 19, 0, None]),
    moves=json_values,
)
def test_rows_of_any_shape_get_a_record_or_a_reason(
    status: object, result: object, termination: object, board_size: object, moves: object
) -> None:
    outcome = classify(
        candidate(
            status=status,
            result=result,
            termination=termination,
            board_size=board_size,
            moves=moves,
        )
    )
    assert isinstance(outcome, (GameRecord, Reason))


# --- start times: every value gives a record or a reason, never an exception -------------------

ZONES = st.sampled_from([UTC, timezone(timedelta(hours=14)), timezone(-timedelta(hours=12))])
aware = st.datetimes(timezones=ZONES)
"""Every aware instant Python can hold (years 1 to 9999 in any of these offsets)."""
near = st.timedeltas(min_value=-timedelta(days=40), max_value=timedelta(days=40))


@settings(max_examples=examples(1000), deadline=None)
@given(
    started=st.one_of(
        aware,
        st.datetimes(),  # naive: no instant at all
        near.map(lambda d: T0 + d),  # within days of the finish: both sides of every bound
        st.sampled_from([None, "infinity", 0, datetime.max, datetime.min]),
    ),
    finished=st.one_of(aware, st.just(T0), st.datetimes(), st.none()),
)
def test_any_start_and_finish_give_a_record_or_incomplete(
    started: object, finished: object
) -> None:
    outcome = classify(candidate(started_at=started, finished_at=finished))
    placed = (
        isinstance(started, datetime)
        and isinstance(finished, datetime)
        and started.tzinfo is not None
        and finished.tzinfo is not None
        and timedelta(0) <= finished - started <= LONGEST_GAME
    )
    if not placed:
        assert outcome is Reason.INCOMPLETE
        return
    assert isinstance(outcome, GameRecord)
    dates = game_line(outcome).split("DT[", 1)[1].split("]", 1)[0].split(",")
    assert len(dates) <= LONGEST_GAME.days + 1  # never thousands of dates on one line


@pytest.mark.parametrize(
    ("started", "reason"),
    [
        pytest.param(datetime(1970, 1, 1, tzinfo=UTC), Reason.INCOMPLETE, id="epoch"),
        pytest.param(datetime(1, 1, 1, tzinfo=UTC), Reason.INCOMPLETE, id="year-1"),
        pytest.param(T0 - LONGEST_GAME - timedelta(seconds=1), Reason.INCOMPLETE, id="31-days-1s"),
        pytest.param(T0 - LONGEST_GAME, None, id="31-days"),
        pytest.param(T0, None, id="same-second"),
        pytest.param(None, Reason.INCOMPLETE, id="unreadable"),  # db.source's guard gives NULL
        pytest.param(datetime(2026, 8, 10, 12), Reason.INCOMPLETE, id="naive"),
    ],
)
def test_a_start_far_before_the_finish_or_unreadable_is_incomplete(
    started: datetime | None, reason: Reason | None
) -> None:
    outcome = classify(candidate(started_at=started, finished_at=T0))
    if reason is None:
        assert isinstance(outcome, GameRecord)
    else:
        assert outcome is reason
