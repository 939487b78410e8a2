"""The export's one-pass reader (``profile.row_pass``) gives exactly what the reference path
gives (``classify``, ``parse_moves``, ``replay``, ``game_parts``) on every row it takes, on real
play, on every kind of ending and on hostile rows; the rows real play is made of take it; and a
tally fed by batches (``Tally.take_rows``) counts exactly as one fed row by row (``take``)."""

from __future__ import annotations

import enum
import json
import random
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from gomoku_archive.demo.examples import example_records
from gomoku_archive.demo.player import fill_board_without_five, play_game
from gomoku_archive.errors import ExportFailed
from gomoku_archive.export.tally import Tally
from gomoku_archive.gomoku.game import BOARD_SIZE, Reason, Result, Termination
from gomoku_archive.profile.classify import Candidate, classify
from gomoku_archive.profile.row_pass import LINE, TIME_CONTROL, PassedGame, pass_row
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import GameRecord, format_timestamp, game_parts, order_key
from tests.budget import examples
from tests.unit.gomoku.test_parse_moves import jsonb_text

T0 = datetime(2026, 8, 10, 12, 0, 7, 250_000, tzinfo=UTC)


def reference(row: tuple[object, ...]) -> Reason | PassedGame | ValueError:
    """What the reference path makes of ``row``, in ``pass_row``'s terms (or the error it
    raises: the writer refuses a rating or time control of a subclass of int)."""
    outcome = classify(Candidate(*row))
    if isinstance(outcome, Reason):
        return outcome
    try:
        parts = game_parts(outcome)
    except ValueError as exc:
        return exc
    finished, game_id = order_key(outcome)
    return (  # in PassedGame's order, the order its names (row_pass.LINE, ...) read
        "".join(parts),
        parts[1:-1],
        outcome.result,
        outcome.termination.value,
        outcome.time_control_seconds,
        outcome.black_rating,
        outcome.white_rating,
        format_timestamp(finished)[:-1],
        game_id,
    )


def check(row: tuple[object, ...]) -> PassedGame | None:
    """``pass_row(row)`` agrees with the reference: the same game, or None."""
    passed = pass_row(row)
    if passed is not None:
        expected = reference(row)
        assert passed == expected
        assert [type(x) for x in passed] == [type(x) for x in expected]  # type: ignore[union-attr]
    return passed


def moves_of(points: list[int]) -> list[dict[str, object]]:
    return [
        {"color": "BW"[ply & 1], "x": p % BOARD_SIZE, "y": p // BOARD_SIZE}
        for ply, p in enumerate(points)
    ]


def row(**overrides: object) -> tuple[object, ...]:
    """A candidate's columns as the source gives them (moves as jsonb's text)."""
    values: dict[str, Any] = {
        "id": uuid.UUID(int=0x1234),
        "status": "FINISHED",
        "board_size": 15,
        "started_at": T0 - timedelta(minutes=3, microseconds=3),
        "finished_at": T0,
        "result": "BLACK_WIN",
        "termination": "RESIGNATION",
        "moves": jsonb_text(moves_of([112, 113, 127, 98, 142, 157])),
        "time_control_seconds": 180,
        "black_rating": 1500,
        "white_rating": -7,
    }
    values.update(overrides)
    return tuple(values.values())


# --- real play ---------------------------------------------------------------------------------


def test_the_example_archive_s_games_all_take_the_pass() -> None:
    for record in example_records():
        columns = row(
            id=record.game_id,
            started_at=record.started_at.astimezone(UTC),
            finished_at=record.finished_at.astimezone(UTC),
            result=record.result.value,
            termination=record.termination.value,
            moves=jsonb_text([{"color": m.color.value, "x": m.x, "y": m.y} for m in record.moves]),
            time_control_seconds=record.time_control_seconds,
            black_rating=record.black_rating,
            white_rating=record.white_rating,
        )
        assert check(columns) is not None, record


@settings(max_examples=examples(200), deadline=None)
@given(seed=st.integers(0, 2**32), skills=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_every_ending_of_real_play_takes_the_pass(seed: int, skills: tuple[float, float]) -> None:
    rng = random.Random(seed)
    played = play_game(rng, black_skill=skills[0], white_skill=skills[1])
    points, n = played.points, len(played.points)
    if played.winner is None:  # a full board without a five
        assert (
            check(row(moves=jsonb_text(moves_of(points)), termination="BOARD_FULL", result="DRAW"))
            is not None
        )
        return
    winner = "BLACK_WIN" if n % 2 else "WHITE_WIN"
    loser = "WHITE_WIN" if n % 2 else "BLACK_WIN"
    cut = rng.randint(1, n - 1)
    endings = [
        (points, "FIVE", winner, True),
        (points[:cut], "RESIGNATION", winner, True),
        (points[:cut], "TIMEOUT", loser, True),
        (points[:cut], "AGREEMENT", "DRAW", True),
        # Games the reference excludes: the pass leaves them to it.
        (points, "FIVE", loser, False),  # the five's maker lost
        (points, "RESIGNATION", winner, False),  # a five on the board
        (points, "AGREEMENT", "DRAW", False),
        (points[:cut], "FIVE", winner, False),  # no five
        (points[:cut], "BOARD_FULL", "DRAW", False),
    ]
    free = [p for p in range(BOARD_SIZE * BOARD_SIZE) if p not in points]
    if len(free) >= 2:  # moves after the five: one, or two so that the winner moves last
        endings.append(([*points, free[0]], "FIVE", loser, False))
        endings.append(([*points, *rng.sample(free, 2)], "FIVE", winner, False))
    for moves, termination, result, published in endings:
        columns = row(moves=jsonb_text(moves_of(moves)), termination=termination, result=result)
        passed = check(columns)
        assert (passed is not None) is published, (termination, result, len(moves))
        if not published:
            assert isinstance(reference(columns), Reason)


def test_a_full_board_draw_takes_the_pass() -> None:
    points = fill_board_without_five(random.Random(3))
    columns = row(moves=jsonb_text(moves_of(points)), termination="BOARD_FULL", result="DRAW")
    assert check(columns) is not None
    assert (
        check(row(moves=jsonb_text(moves_of(points[:-1])), termination="BOARD_FULL", result="DRAW"))
        is None
    )


# --- hostile rows ------------------------------------------------------------------------------


class Rating(enum.IntEnum):
    HIGH = 2000


ODD_NUMBERS = st.sampled_from([0, -1, 1, 2**70, True, False, 7.0, "60", None, Rating.HIGH])
ZONES = st.sampled_from([UTC, timezone(timedelta(0)), timezone(timedelta(hours=-5))])
TIMES = st.one_of(
    st.timedeltas(min_value=-timedelta(days=33), max_value=timedelta(days=2)).map(lambda d: T0 + d),
    st.datetimes(timezones=ZONES),
    st.sampled_from([None, "2026-08-10", datetime(2026, 8, 10), T0 - LONGEST_GAME]),
)


def edit(text: str, position: int, kind: int, piece: str) -> str:
    at = position % (len(text) + 1)
    if kind == 0:
        return text[:at] + piece + text[at:]
    if kind == 1:
        return text[:at] + text[at + 1 :]
    return text[:at] + piece + text[at + len(piece) :]


PIECES = st.sampled_from(
    [*'[]{}", :xy0123456789BW', "٧", "07", "1.0", "-1", "15", ', {"x": 7, "y": 7, "color": "B"}']
)


@st.composite
def moves_texts(draw: st.DrawFn) -> object:
    """The moves column, spoilt: any points and colours, other JSON spellings, edited text, or
    no text at all."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    played = play_game(rng, black_skill=rng.random(), white_skill=rng.random()).points
    items = moves_of(played[: draw(st.integers(0, len(played)))])
    if len(items) >= 3 and draw(st.booleans()):
        # A point played again: by the same colour, or by the other one.
        later = draw(st.integers(2, len(items) - 1))
        earlier = later - draw(st.sampled_from([1, 2]))
        items[later] = {**items[later], "x": items[earlier]["x"], "y": items[earlier]["y"]}
        return jsonb_text(items)
    if draw(st.booleans()):
        items = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "color": st.sampled_from(["B", "W", "b", ""]),
                        "x": st.integers(-1, 15),
                        "y": st.integers(-1, 15),
                    }
                ),
                max_size=12,
            )
        )
    spelling = draw(st.integers(0, 4))
    if spelling == 0:
        text = jsonb_text(items)
    elif spelling == 1:
        text = json.dumps(items)
    elif spelling == 2:
        text = json.dumps(items, separators=(",", ":"))
    elif spelling == 3:
        return draw(st.sampled_from([None, 7, b"[]", ["B"]]))
    else:
        text = jsonb_text([*items, {"color": "B", "x": 7, "y": 7, "z": 1}])
    edits = draw(st.lists(st.tuples(st.integers(0, 4096), st.integers(0, 2), PIECES), max_size=3))
    for position, kind, piece in edits:
        text = edit(text, position, kind, piece)
    return text


SPOILT: dict[str, st.SearchStrategy[object]] = {
    "id": st.sampled_from([uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), "not-a-uuid"]),
    "status": st.sampled_from(["ABORTED", "IN_PROGRESS", "finished", None, 15]),
    "board_size": st.sampled_from([15.0, 19, None, "15", True]),
    "started_at": TIMES,
    "finished_at": TIMES,
    "result": st.sampled_from([*Result, "black_win", None, 3, ["DRAW"]]),
    "termination": st.sampled_from([*Termination, "RESIGN", None, ("FIVE",)]),
    "moves": moves_texts(),
    "time_control_seconds": ODD_NUMBERS,
    "black_rating": ODD_NUMBERS,
    "white_rating": ODD_NUMBERS,
}


ANY_FINISH = st.datetimes(min_value=datetime(1, 3, 1), timezones=st.just(UTC))


@st.composite
def rows(draw: st.DrawFn, finishes: st.SearchStrategy[datetime] = ANY_FINISH) -> tuple[object, ...]:
    """Real play as the source gives it, with up to three columns spoilt."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    played = play_game(rng, black_skill=rng.random(), white_skill=rng.random())
    points = played.points[: draw(st.integers(1, len(played.points)))]
    n = len(points)
    if n == len(played.points) and played.winner is not None:
        ending = ("FIVE", "BLACK_WIN" if n % 2 else "WHITE_WIN")
    else:
        ending = draw(
            st.sampled_from(
                [("RESIGNATION", "BLACK_WIN"), ("TIMEOUT", "WHITE_WIN"), ("AGREEMENT", "DRAW")]
            )
        )
    finished = draw(finishes)
    earliest = finished - min(LONGEST_GAME, finished - datetime(1, 1, 1, tzinfo=UTC))
    columns: dict[str, object] = {
        "id": uuid.UUID(int=draw(st.integers(0, 2**128 - 1))),
        "started_at": finished - draw(st.timedeltas(timedelta(0), finished - earliest)),
        "finished_at": finished,
        "termination": ending[0],
        "result": ending[1],
        "moves": jsonb_text(moves_of(points)),
        "time_control_seconds": draw(st.integers(-5, 10**6) | st.none()),
        "black_rating": draw(st.integers(-3000, 4000) | st.none()),
        "white_rating": draw(st.integers(-3000, 4000) | st.none()),
    }
    for name in draw(st.lists(st.sampled_from(sorted(SPOILT)), max_size=3, unique=True)):
        columns[name] = draw(SPOILT[name])
    return row(**columns)


@settings(max_examples=examples(1500), deadline=None)
@given(rows())
def test_any_row_takes_the_pass_only_to_the_reference_s_game(columns: tuple[object, ...]) -> None:
    event("the pass took it" if check(columns) is not None else "left to the reference")


CALENDAR_ENDS = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(1, 2, 15)),
    st.datetimes(min_value=datetime(999, 1, 1), max_value=datetime(1000, 1, 1)),
    st.datetimes(min_value=datetime(9999, 11, 20)),
    st.datetimes(min_value=datetime(9999, 12, 31)),
    st.datetimes(),
).map(lambda naive: naive.replace(tzinfo=UTC))
"""Finishes in years 1 to 9999, most at the calendar's ends, where a day more or less does not
exist (a multi-day game ending 9999-12-31 raised OverflowError in the pass and the writer)."""


@settings(max_examples=examples(1500), deadline=None)
@given(rows(CALENDAR_ENDS))
def test_a_row_of_any_year_never_raises_and_takes_the_pass_only_to_the_reference_s_game(
    columns: tuple[object, ...],
) -> None:
    at_an_end = getattr(columns[4], "year", None) in (1, 999, 9999)
    event("finished in year 1, 999 or 9999" if at_an_end else "finished in another year")
    event("the pass took it" if check(columns) is not None else "left to the reference")


@pytest.mark.parametrize(
    ("started", "finished"),
    [
        (datetime(9999, 12, 30, 23, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
        (datetime(9999, 11, 30, 23, 59, 59, tzinfo=UTC), datetime(9999, 12, 31, 23, tzinfo=UTC)),
        (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 1, 2, tzinfo=UTC)),
        (datetime(999, 12, 31, 23, tzinfo=UTC), datetime(1000, 1, 1, 1, tzinfo=UTC)),
    ],
)
def test_multi_day_games_at_the_calendar_s_ends_take_the_pass(
    started: datetime, finished: datetime
) -> None:
    passed = check(row(started_at=started, finished_at=finished))
    assert passed is not None
    assert f"XET[{finished.year:04d}-" in LINE(passed)


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"started_at": T0.astimezone(timezone(timedelta(hours=2)))}, "a zone other than UTC"),
        ({"finished_at": datetime(2026, 8, 10, 12)}, "a naive time"),
        ({"moves": '[{"x": 7, "y": 7, "color": "B"}]'.replace(", ", ",")}, "not jsonb's text"),
        ({"moves": '[{"x": 7, "y": 7, "color": "W"}]'}, "white first"),
        ({"moves": '[{"x": 7, "y": 7, "color": "B"}, {"x": 7, "y": 7, "color": "W"}]'}, "occupied"),
        (
            {
                "moves": '[{"x": 7, "y": 7, "color": "B"}, {"x": 8, "y": 7, "color": "W"}, '
                '{"x": 7, "y": 7, "color": "B"}]'
            },
            "occupied by the same colour",
        ),
        ({"started_at": T0 - LONGEST_GAME - timedelta(microseconds=1)}, "too long before"),
        ({"started_at": T0 + timedelta(microseconds=1)}, "after the finish"),
        ({"time_control_seconds": 60.0}, "a float"),
        ({"black_rating": True}, "a bool"),
        ({"result": "DRAW"}, "a pair no replay accepts"),
        ({"status": "ABORTED"}, "aborted"),
    ],
)
def test_rows_the_pass_leaves_to_the_reference(overrides: dict[str, object], why: str) -> None:
    assert pass_row(row(**overrides)) is None, why


def test_the_longest_game_and_a_start_in_the_finish_s_second_take_the_pass() -> None:
    for started in (T0 - LONGEST_GAME, T0, T0.replace(microsecond=0)):
        assert check(row(started_at=started)) is not None


def test_a_time_control_below_one_is_absent_as_in_the_reference() -> None:
    for value in (0, -60):
        passed = check(row(time_control_seconds=value))
        assert passed is not None and TIME_CONTROL(passed) is None and "XTC[" not in LINE(passed)


def test_a_game_across_midnight_lists_both_dates() -> None:
    columns = row(started_at=T0 - timedelta(hours=13), finished_at=T0)
    passed = check(columns)
    assert passed is not None and "DT[2026-08-09,10]" in LINE(passed)


# --- a tally by batches ------------------------------------------------------------------------


def tally_state(tally: Tally) -> object:
    return (
        tally.candidates,
        dict(tally.exclusions),
        dict(tally.results),
        tally.stats.to_json(),
        tally.first_key,
        tally.last_key,
        tally.to_json(),
    )


def month_rows(seed: int, n: int) -> list[tuple[object, ...]]:
    """Rows in archive order: real play, every ending, some broken and some the pass leaves."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        played = play_game(rng, black_skill=rng.random(), white_skill=rng.random())
        points = played.points
        finished = T0 + timedelta(seconds=k // 2, microseconds=rng.randrange(10**6))
        kind = rng.randrange(10)
        columns: dict[str, object] = {
            "id": uuid.UUID(int=rng.getrandbits(128)),
            "finished_at": finished,
            "started_at": finished - timedelta(seconds=rng.randrange(10, 4000)),
            "moves": jsonb_text(moves_of(points)),
            "termination": "FIVE" if played.winner else "BOARD_FULL",
            "result": "DRAW"
            if played.winner is None
            else "BLACK_WIN"
            if len(points) % 2
            else "WHITE_WIN",
            "time_control_seconds": rng.choice([60, 180, None, 0]),
            "black_rating": rng.choice([1500, 1510, None]),
            "white_rating": rng.choice([1400, None]),
        }
        if kind == 0:
            columns["status"] = "ABORTED"
        elif kind == 1:
            columns["moves"] = json.dumps(moves_of(points))  # other spelling: the reference
        elif kind == 2:
            columns["termination"] = "RESIGNATION"  # a five on the board: excluded
        elif kind == 3:
            columns["started_at"] = finished.astimezone(timezone(timedelta(hours=3)))
        rows.append(row(**columns))
    # The same second: ordered by the UUID's text.
    rows.sort(key=lambda r: (format_timestamp(r[4])[:-1], str(r[0])))  # type: ignore[arg-type]
    return rows


@pytest.mark.parametrize("seed", [1, 2])
def test_batches_count_as_row_by_row(seed: int) -> None:
    rows = month_rows(seed, 120)
    one_by_one = Tally("2026-08")
    lines = [one_by_one.take(Candidate(*r)) for r in rows]
    batched = Tally("2026-08")
    taken: list[str] = []
    for start in range(0, len(rows), 37):
        taken += batched.take_rows(rows[start : start + 37])
    assert taken == [line for line in lines if line is not None]
    assert tally_state(batched) == tally_state(one_by_one)
    assert one_by_one.excluded > 0 and one_by_one.games > 0
    assert sum(pass_row(r) is not None for r in rows) > len(rows) // 2


def published(columns: tuple[object, ...]) -> bool:
    return isinstance(classify(Candidate(*columns)), GameRecord)


def reference_published(columns: tuple[object, ...]) -> bool:
    """The row publishes through the reference path: the pass leaves it."""
    return pass_row(columns) is None and published(columns)


@pytest.mark.parametrize("path", ["pass", "reference"])
@pytest.mark.parametrize("batch", [1, 7, 100])
def test_a_batch_out_of_order_stops_and_counts_as_row_by_row_does(path: str, batch: int) -> None:
    """A published game that comes after a later one stops both paths with the same counts:
    every row before it, and not it; whether the pass or the reference path takes it."""
    rows = month_rows(3, 40)
    takes = check if path == "pass" else reference_published
    early = next(k for k in range(10, len(rows)) if takes(rows[k]))
    later = next(k for k in range(early + 1, len(rows)) if published(rows[k]))
    # rows[early] moved to just after rows[later], a game it should precede.
    shuffled = [*rows[:early], *rows[early + 1 : later + 1], rows[early], *rows[later + 1 :]]

    def by_rows(tally: Tally) -> None:
        for r in shuffled:
            tally.take(Candidate(*r))

    def by_batches(tally: Tally) -> None:
        for start in range(0, len(shuffled), batch):
            tally.take_rows(shuffled[start : start + batch])

    states = []
    for take in (by_rows, by_batches):
        tally = Tally("2026-08")
        with pytest.raises(ExportFailed, match="out of archive order"):
            take(tally)
        states.append(tally_state(tally))
    before = Tally("2026-08")
    before.take_rows(shuffled[:later])
    assert states[0] == states[1] == tally_state(before)
    assert before.candidates == later and before.games > 0


def test_reference_records_are_what_the_pass_describes() -> None:
    columns = row()
    record = classify(Candidate(*columns))
    assert isinstance(record, GameRecord)
    passed = pass_row(columns)
    assert passed is not None and LINE(passed) == "".join(game_parts(record))
