"""The profile writer: the published example byte for byte, every root property and format rule,
and the documentation tables the profile page is generated from."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import Color, Move, Reason, Result, Termination
from gomoku_archive.profile.vocabulary import PROFILE_ID, RE_VALUES, REASON_DOCS, TERMINATION_DOCS
from gomoku_archive.profile.writer import (
    RE_BY_OUTCOME,
    ROOT_PROPERTIES,
    GameRecord,
    escape_text,
    format_dates,
    format_timestamp,
    game_line,
    order_key,
    re_value,
)

# Copied verbatim from the profile text (/work/shared/seeds/003_9e1b14dd58351a44.txt).
SEED_EXAMPLE = (
    "(;FF[4]GM[4]CA[UTF-8]AP[GomokuParty:1.0]SZ[15]RU[Gomoku Freestyle]"
    "GN[00000000-0000-4000-8000-000000000001]PC[https://gomokuparty.com]DT[2026-08-12]"
    "PB[Black]PW[White]BR[1200 Elo]WR[1210 Elo]RE[B+R]SO[https://gomokuparty.com/database/]"
    "CP[CC0-1.0]XGP[gomoku-party-sgf-1]XRT[rated]XTC[60]XST[2026-08-12T12:00:00Z]"
    "XET[2026-08-12T12:02:00Z]XER[RESIGNATION];B[hh];W[ih];B[ii])"
)
B, W = Color.BLACK, Color.WHITE
THREE_MOVES = (Move(B, 7, 7), Move(W, 8, 7), Move(B, 8, 8))


def example(**changes: object) -> GameRecord:
    fields: dict[str, object] = {
        "game_id": uuid.UUID("00000000-0000-4000-8000-000000000001"),
        "started_at": datetime(2026, 8, 12, 12, 0, 0, tzinfo=UTC),
        "finished_at": datetime(2026, 8, 12, 12, 2, 0, tzinfo=UTC),
        "result": Result.BLACK_WIN,
        "termination": Termination.RESIGNATION,
        "moves": THREE_MOVES,
        "time_control_seconds": 60,
        "black_rating": 1200,
        "white_rating": 1210,
    }
    fields.update(changes)
    return GameRecord(**fields)  # type: ignore[arg-type]


def test_the_published_example_comes_out_byte_identical() -> None:
    assert game_line(example()) == SEED_EXAMPLE + "\n"


def test_offsets_and_sub_seconds_do_not_change_the_bytes() -> None:
    plus_two = timezone(timedelta(hours=2))
    record = example(
        started_at=datetime(2026, 8, 12, 14, 0, 0, 999_999, tzinfo=plus_two),
        finished_at=datetime(2026, 8, 12, 7, 2, 0, 500_000, tzinfo=timezone(timedelta(hours=-5))),
    )
    assert game_line(record) == SEED_EXAMPLE + "\n"


def test_root_properties_document_the_example_in_order() -> None:
    # The docs table's examples, written in its order, are the published example's root node.
    root = "(;" + "".join(f"{p.ident}[{p.example}]" for p in ROOT_PROPERTIES)
    assert SEED_EXAMPLE.startswith(root + ";B[hh]")
    for prop in ROOT_PROPERTIES:
        assert prop.fixed is None or prop.fixed == prop.example
        assert prop.extension == prop.ident.startswith("X")
        assert prop.meaning
        assert prop.value
    assert [p.ident for p in ROOT_PROPERTIES if p.optional] == ["BR", "WR", "XTC"]
    assert [p.fixed for p in ROOT_PROPERTIES if p.ident == "XGP"] == [PROFILE_ID]


def test_docs_cover_every_value() -> None:
    assert set(RE_VALUES) == set(RE_BY_OUTCOME.values())
    assert set(TERMINATION_DOCS) == set(Termination)
    assert set(REASON_DOCS) == set(Reason)
    assert all(text for text in [*RE_VALUES.values(), *TERMINATION_DOCS.values()])


@pytest.mark.parametrize(
    ("x", "y", "text"),
    [(0, 0, "aa"), (14, 0, "oa"), (0, 14, "ao"), (7, 7, "hh"), (8, 7, "ih"), (14, 14, "oo")],
)
def test_coordinates_are_column_then_row(x: int, y: int, text: str) -> None:
    line = game_line(example(moves=[Move(B, x, y)], result=Result.WHITE_WIN))
    assert line.endswith(f"XER[RESIGNATION];B[{text}])\n")


@pytest.mark.parametrize(("x", "y"), [(15, 0), (0, 15), (-1, 0), (0, -1)])
def test_off_board_moves_are_refused(x: int, y: int) -> None:
    with pytest.raises(ValueError, match="off the 15 x 15 board"):
        game_line(example(moves=[Move(B, 7, 7), Move(W, x, y)]))


@pytest.mark.parametrize(
    ("termination", "result", "re"),
    [
        (Termination.FIVE, Result.BLACK_WIN, "B+"),
        (Termination.FIVE, Result.WHITE_WIN, "W+"),
        (Termination.RESIGNATION, Result.BLACK_WIN, "B+R"),
        (Termination.RESIGNATION, Result.WHITE_WIN, "W+R"),
        (Termination.TIMEOUT, Result.BLACK_WIN, "B+T"),
        (Termination.TIMEOUT, Result.WHITE_WIN, "W+T"),
        (Termination.BOARD_FULL, Result.DRAW, "Draw"),
        (Termination.AGREEMENT, Result.DRAW, "Draw"),
    ],
)
def test_result_values(termination: Termination, result: Result, re: str) -> None:
    assert re_value(result, termination) == re
    line = game_line(example(result=result, termination=termination))
    assert f"RE[{re}]" in line
    assert f"XER[{termination.value}];B[hh]" in line


@pytest.mark.parametrize(
    ("termination", "result"),
    [
        (Termination.FIVE, Result.DRAW),
        (Termination.RESIGNATION, Result.DRAW),
        (Termination.TIMEOUT, Result.DRAW),
        (Termination.BOARD_FULL, Result.BLACK_WIN),
        (Termination.AGREEMENT, Result.WHITE_WIN),
    ],
)
def test_contradictory_results_are_refused(termination: Termination, result: Result) -> None:
    with pytest.raises(ValueError, match="cannot end with"):
        game_line(example(result=result, termination=termination))


@pytest.mark.parametrize(
    ("first", "last", "text"),
    [
        (date(2026, 8, 12), date(2026, 8, 12), "2026-08-12"),
        (date(2026, 7, 31), date(2026, 8, 1), "2026-07-31,08-01"),
        (date(2026, 8, 1), date(2026, 8, 2), "2026-08-01,02"),
        (date(2026, 8, 1), date(2026, 8, 3), "2026-08-01,02,03"),
        (date(2026, 12, 31), date(2027, 1, 1), "2026-12-31,2027-01-01"),
        (date(2026, 12, 30), date(2027, 1, 2), "2026-12-30,31,2027-01-01,02"),
        (date(2028, 2, 28), date(2028, 3, 1), "2028-02-28,29,03-01"),
        (date(2026, 8, 30), date(2026, 9, 2), "2026-08-30,31,09-01,02"),
    ],
)
def test_dates(first: date, last: date, text: str) -> None:
    assert format_dates(first, last) == text


def test_dt_uses_the_utc_dates_of_start_and_end() -> None:
    # 23:50 on the 31st in New York is already August 1st in UTC: one date only.
    new_york = timezone(timedelta(hours=-4))
    record = example(
        started_at=datetime(2026, 7, 31, 21, 0, tzinfo=new_york),
        finished_at=datetime(2026, 7, 31, 23, 50, tzinfo=new_york),
    )
    assert "DT[2026-08-01]" in game_line(record)
    spanning = example(
        started_at=datetime(2026, 7, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        finished_at=datetime(2026, 8, 1, 0, 0, 1, tzinfo=UTC),
    )
    line = game_line(spanning)
    assert "DT[2026-07-31,08-01]" in line
    assert "XST[2026-07-31T23:59:59Z]XET[2026-08-01T00:00:01Z]" in line


@pytest.mark.parametrize(
    ("instant", "text"),
    [
        (datetime(2026, 8, 12, 12, 0, 0, 999_999, tzinfo=UTC), "2026-08-12T12:00:00Z"),
        (datetime(2026, 8, 31, 23, 59, 59, 999_999, tzinfo=UTC), "2026-08-31T23:59:59Z"),
        (datetime(2026, 8, 1, 1, 30, tzinfo=timezone(timedelta(hours=2))), "2026-07-31T23:30:00Z"),
        (
            datetime(2026, 8, 1, 9, 5, 7, tzinfo=timezone(timedelta(hours=-9))),
            "2026-08-01T18:05:07Z",
        ),
    ],
)
def test_timestamps_are_utc_and_truncated(instant: datetime, text: str) -> None:
    assert format_timestamp(instant) == text


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        game_line(example(started_at=datetime(2026, 8, 12, 12, 0)))


def test_a_game_cannot_finish_before_it_starts() -> None:
    with pytest.raises(ValueError, match="finish before it starts"):
        game_line(example(finished_at=datetime(2026, 8, 12, 11, 59, 59, tzinfo=UTC)))


def test_a_game_needs_moves() -> None:
    with pytest.raises(ValueError, match="without moves"):
        game_line(example(moves=()))


def test_missing_ratings_and_time_control_drop_the_whole_property() -> None:
    line = game_line(example(black_rating=None, white_rating=None, time_control_seconds=None))
    assert "BR[" not in line
    assert "WR[" not in line
    assert "XTC[" not in line
    assert "PW[White]RE[B+R]" in line
    assert "XRT[rated]XST[" in line
    only_white = game_line(example(black_rating=None))
    assert "PW[White]WR[1210 Elo]RE[" in only_white


@pytest.mark.parametrize(("rating", "text"), [(0, "0 Elo"), (-35, "-35 Elo"), (3001, "3001 Elo")])
def test_ratings_are_written_as_integers(rating: int, text: str) -> None:
    assert f"BR[{text}]WR[{text}]" in game_line(example(black_rating=rating, white_rating=rating))


@pytest.mark.parametrize(
    "changes",
    [
        {"time_control_seconds": 0},
        {"time_control_seconds": -60},
        {"black_rating": True},
        {"white_rating": 1200.0},
    ],
)
def test_values_the_profile_cannot_express_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be"):
        game_line(example(**changes))


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain", "plain"),
        ("a]b", "a\\]b"),
        ("back\\slash", "back\\\\slash"),
        ("\\]", "\\\\\\]"),
        ("[open", "[open"),
        ("", ""),
    ],
)
def test_escape_text(raw: str, escaped: str) -> None:
    assert escape_text(raw) == escaped


@pytest.mark.parametrize("raw", ["two\nlines", "carriage\rreturn", "\r\n"])
def test_escape_text_refuses_line_breaks(raw: str) -> None:
    with pytest.raises(ValueError, match="line breaks"):
        escape_text(raw)


def test_order_key_truncates_and_uses_the_lowercase_uuid() -> None:
    key = order_key(
        example(
            game_id=uuid.UUID("ABCDEF00-0000-4000-8000-00000000000A"),
            finished_at=datetime(
                2026, 8, 12, 14, 2, 0, 999_999, tzinfo=timezone(timedelta(hours=2))
            ),
        )
    )
    assert key == (
        datetime(2026, 8, 12, 12, 2, 0, tzinfo=UTC),
        "abcdef00-0000-4000-8000-00000000000a",
    )


def test_order_key_sorts_same_second_games_by_uuid() -> None:
    later_in_second = example(
        game_id=uuid.UUID(int=1), finished_at=datetime(2026, 8, 12, 12, 2, 0, 900_000, tzinfo=UTC)
    )
    earlier_in_second = example(
        game_id=uuid.UUID(int=2), finished_at=datetime(2026, 8, 12, 12, 2, 0, 100_000, tzinfo=UTC)
    )
    ordered = sorted([earlier_in_second, later_in_second], key=order_key)
    assert ordered == [later_in_second, earlier_in_second]


@given(
    st.lists(
        st.tuples(st.sampled_from(Color), st.integers(0, 14), st.integers(0, 14)),
        min_size=1,
        max_size=60,
    ),
    st.integers(-(10**6), 10**6) | st.none(),
    st.integers(1, 10**6) | st.none(),
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.just(UTC),
    ),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3)),
)
def test_every_line_is_one_line_of_known_shape(
    moves: list[tuple[Color, int, int]],
    rating: int | None,
    time_control: int | None,
    started: datetime,
    duration: timedelta,
) -> None:
    line = game_line(
        example(
            moves=[Move(c, x, y) for c, x, y in moves],
            black_rating=rating,
            time_control_seconds=time_control,
            started_at=started,
            finished_at=started + duration,
        )
    )
    assert line.endswith(")\n")
    assert line.count("\n") == 1
    assert "\r" not in line
    assert line.startswith("(;FF[4]GM[4]CA[UTF-8]AP[GomokuParty:1.0]SZ[15]")
    assert line.count(";") == 1 + len(moves)
    assert line.isascii()


def _timestamp_reference(instant: datetime) -> str:
    """The plain formatting the fast path stands for."""
    t = instant.astimezone(UTC).replace(microsecond=0)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


@given(
    st.datetimes(
        min_value=datetime(2, 1, 1),
        max_value=datetime(9998, 12, 31),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(0)), timezone(timedelta(hours=-9, minutes=-30))]
        ),
    )
)
def test_timestamp_fast_path_equals_the_plain_formatting(instant: datetime) -> None:
    assert format_timestamp(instant) == _timestamp_reference(instant)


@given(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
def test_a_one_day_game_has_one_date(day: date) -> None:
    assert format_dates(day, day) == f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
