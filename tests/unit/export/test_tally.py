"""The export's per-row step: what a row adds, the order check, and ranges that add up to the
whole month, also after their tallies travelled as JSON."""

from __future__ import annotations

import itertools
import json
import uuid
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.errors import ExportFailed
from gomoku_archive.export.tally import OUT_OF_ORDER, Tally
from gomoku_archive.profile.classify import Candidate
from gomoku_archive.profile.writer import game_line
from tests.unit.profile.test_classify import T0, candidate


def game(n: int, **overrides: object) -> Candidate:
    return candidate(
        id=uuid.UUID(int=n), finished_at=T0 + timedelta(minutes=2, seconds=n), **overrides
    )


ROWS = [game(1), game(2, status="ABORTED"), game(3), game(4, moves=[]), game(5)]


def test_a_row_gives_its_line_or_is_counted_out() -> None:
    tally = Tally("2026-08")
    lines = [tally.take(row) for row in ROWS]
    assert [line is not None for line in lines] == [True, False, True, False, True]
    assert lines[0] is not None and lines[0].startswith("(;FF[4]GM[4]")
    assert (tally.candidates, tally.games, tally.excluded) == (5, 3, 2)
    assert tally.exclusions == {"aborted": 1, "empty": 1}
    assert tally.results == {"FIVE": 3}
    assert tally.first_key is not None and tally.last_key is not None
    assert tally.first_key < tally.last_key


def test_the_line_is_the_profile_writer_s() -> None:
    from gomoku_archive.profile.classify import classify
    from gomoku_archive.profile.writer import GameRecord

    record = classify(game(1))
    assert isinstance(record, GameRecord)
    assert Tally("2026-08").take(game(1)) == game_line(record)


def test_a_game_that_does_not_come_later_stops_the_export() -> None:
    tally = Tally("2026-08")
    tally.take(game(2))
    with pytest.raises(ExportFailed, match=f"^2026-08: {OUT_OF_ORDER}$"):
        tally.take(game(1))
    same = Tally("2026-08")
    same.take(game(2))
    with pytest.raises(ExportFailed):
        same.take(game(2))


@given(st.lists(st.integers(0, len(ROWS)), max_size=4))
def test_ranges_extended_in_order_equal_one_pass(cuts: list[int]) -> None:
    whole = Tally("2026-08")
    for row in ROWS:
        whole.take(row)
    edges = [0, *sorted(cuts), len(ROWS)]
    joined = Tally("2026-08")
    for start, end in itertools.pairwise(edges):
        part = Tally("2026-08")
        for row in ROWS[start:end]:
            part.take(row)
        # As a range's tally reaches the assembly: through JSON.
        joined.extend(Tally.from_json("2026-08", json.loads(json.dumps(part.to_json()))))
    assert (joined.candidates, joined.exclusions, joined.results) == (
        whole.candidates,
        whole.exclusions,
        whole.results,
    )
    assert (joined.first_key, joined.last_key) == (whole.first_key, whole.last_key)
    assert joined.stats.result() == whole.stats.result()


def test_a_slice_that_overlaps_the_previous_one_stops_the_export() -> None:
    first, second = Tally("2026-08"), Tally("2026-08")
    first.take(game(3))
    second.take(game(2))
    with pytest.raises(ExportFailed, match=OUT_OF_ORDER):
        first.extend(second)


def test_a_tally_survives_json() -> None:
    tally = Tally("2026-08")
    for row in [*ROWS, game(6, time_control_seconds=None), game(7, black_rating=None)]:
        tally.take(row)
    again = Tally.from_json("2026-08", json.loads(json.dumps(tally.to_json())))
    assert (again.candidates, again.exclusions, again.results) == (
        tally.candidates,
        tally.exclusions,
        tally.results,
    )
    assert (again.first_key, again.last_key) == (tally.first_key, tally.last_key)
    assert again.stats.result() == tally.stats.result()
    assert again.stats.to_json() == tally.stats.to_json()


def test_ranges_out_of_order_stop_the_assembly() -> None:
    early, late = Tally("2026-08"), Tally("2026-08")
    early.take(game(1))
    late.take(game(2))
    with pytest.raises(ExportFailed, match=OUT_OF_ORDER):
        late.extend(Tally.from_json("2026-08", early.to_json()))


def test_the_stored_order_keys_keep_their_form() -> None:
    """A range's tally is stored as JSON (archive_ranges.tally) and read by the assembly, maybe
    of another version: the keys stay the finish second's UTC isoformat and the UUID."""
    tally = Tally("2026-08")
    tally.take(game(1))
    tally.take(game(2))
    stored = tally.to_json()
    assert stored["firstKey"] == [
        (T0 + timedelta(minutes=2, seconds=1)).isoformat(),
        str(uuid.UUID(int=1)),
    ]
    assert stored["lastKey"][0] == "2026-08-10T12:02:02+00:00"
    again = Tally.from_json("2026-08", stored)
    assert again.first_key == ("2026-08-10T12:02:01", str(uuid.UUID(int=1)))
