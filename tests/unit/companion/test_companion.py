"""The Parquet companion's rows and file: a game's row is what ``games`` reads from the same line
(every published field, typed), whatever the game; lines that are not the profile's are refused;
the file's bytes depend on the rows and their row groups alone (not on how they were batched), are
pyarrow's own one-pass file, carry the fixed options and nothing of the moment, and are pinned by a
golden digest."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.companion import footer
from gomoku_archive.companion.line_rows import WINNER_OF_RESULT, WINNERS, NotALine, text_columns
from gomoku_archive.companion.schema import COLUMN_NAMES, COLUMNS, ROW_GROUPS, SCHEMA_ID
from gomoku_archive.demo.examples import example_records
from gomoku_archive.demo.player import play_game
from gomoku_archive.export.companion import columns
from gomoku_archive.export.companion.columns import SCHEMA, record_batch
from gomoku_archive.export.companion.file_writer import (
    CREATED_BY,
    FILE_METADATA,
    GroupRows,
    writer_options,
)
from gomoku_archive.export.ranges import RANGE_CANDIDATES
from gomoku_archive.gomoku.game import BOARD_SIZE, Color, Move, Result, Termination
from gomoku_archive.gomoku.replay import replay
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import GameRecord, game_line, order_key
from gomoku_archive.verify import games_rows
from gomoku_archive.verify.line_check import check_line
from tests.budget import examples

# sha256 of the companion of demo.examples.example_records() (the bundled example archive's 200
# games, in archive order, one row group): computed once with pyarrow 26.0.1 (since the groups are
# the ranges', the moves dictionary-encoded and zstd at level 1; 791c2cf5... before, the same
# rows). A change to the schema, the options, the row definition or the writer's version shows
# up here.
GOLDEN_SHA256 = "25d92b8d6f660964207f346bc9db35eef7371d2734cc765bd32b20d8d88c8c62"


def example_lines() -> list[str]:
    return [game_line(r) for r in sorted(example_records(), key=order_key)]


def rows_of(lines: list[str]) -> list[dict[str, Any]]:
    return record_batch(text_columns(lines)).to_pylist()


def games_view(row: dict[str, Any]) -> dict[str, Any]:
    """A companion row in ``games``' fields and words (``verify.games_rows.record``)."""
    return {
        "id": row["id"],
        "month": row["month"],
        "start": row["start"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": row["finish"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        "result": row["winner"],
        "termination": row["termination"],
        "blackRating": row["black_rating"],
        "whiteRating": row["white_rating"],
        "timeControl": row["time_control"],
        "moves": row["moves"],
    }


def test_every_example_row_is_what_games_reads_from_its_line() -> None:
    lines = example_lines()
    for line, row in zip(lines, rows_of(lines), strict=True):
        facts = check_line(line.rstrip("\n"))
        assert games_view(row) == games_rows.record(facts)
        assert row["result"] in WINNER_OF_RESULT and f"RE[{row['result']}]" in line
        assert row["plies"] == len(row["moves"]) == len(row["sgf_moves"])
        assert "".join(f";{'BW'[i % 2]}[{p}]" for i, p in enumerate(row["sgf_moves"])) in line
        assert row["start"].tzinfo is not None and row["start"].utcoffset() == timedelta(0)


def test_the_winner_words_are_games_words() -> None:
    assert WINNERS == games_rows.WINNERS


@st.composite
def games(draw: st.DrawFn) -> GameRecord:
    """Real play, ended any way the replay accepts, at any time of years 1000 to 9998 (the
    ``games`` of this code writes years below 1000 with fewer digits), with any ratings."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    played = play_game(rng, black_skill=rng.random(), white_skill=rng.random())
    points = played.points[: draw(st.integers(1, len(played.points)))]
    moves = [
        Move(Color.BLACK if i % 2 == 0 else Color.WHITE, p % BOARD_SIZE, p // BOARD_SIZE)
        for i, p in enumerate(points)
    ]
    endings = [
        (t, r)
        for t in Termination
        for r in Result
        if replay(moves, r, t).valid  # the only pairs a published game can have
    ]
    termination, result = draw(st.sampled_from(endings))
    finished = draw(
        st.datetimes(datetime(1000, 2, 1), datetime(9998, 12, 1), timezones=st.just(UTC))
    )
    return GameRecord(
        game_id=uuid.UUID(int=draw(st.integers(0, 2**128 - 1))),
        started_at=finished - draw(st.timedeltas(timedelta(0), LONGEST_GAME)),
        finished_at=finished,
        result=result,
        termination=termination,
        moves=moves,
        time_control_seconds=draw(st.integers(1, 2**31 - 1) | st.none()),
        black_rating=draw(st.integers(-(2**31), 2**31 - 1) | st.none()),
        white_rating=draw(st.integers(-(2**31), 2**31 - 1) | st.none()),
    )


@settings(max_examples=examples(300))
@given(st.lists(games(), min_size=1, max_size=4))
def test_any_game_s_row_is_what_games_reads_from_its_line(played: list[GameRecord]) -> None:
    lines = [game_line(g) for g in played]
    for line, row in zip(lines, rows_of(lines), strict=True):
        assert games_view(row) == games_rows.record(check_line(line.rstrip("\n")))
        assert row["month"] == row["finish"].strftime("%Y-%m")


def test_years_one_and_9999_are_read() -> None:
    record = example_records()[0]
    early = replace(
        record,
        started_at=datetime(1, 1, 1, tzinfo=UTC),
        finished_at=datetime(1, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    late = replace(
        record,
        # One date: the writer of this code cannot list dates up to 9999-12-31 (issue 34).
        started_at=datetime(9999, 12, 31, tzinfo=UTC),
        finished_at=datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    )
    first, last = rows_of([game_line(early), game_line(late)])
    assert (first["month"], first["finish"]) == ("0001-01", datetime(1, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert (last["month"], last["finish"].year) == ("9999-12", 9999)


LINE = game_line(example_records()[0])


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (LINE.replace(";B[", ";W[", 1), "white moves first"),
        (LINE.replace("RE[", "RE[X", 1), "an RE the profile does not have"),
        (LINE.replace("XER[", "XER[SURRENDER", 1), "an XER the profile does not have"),
        (LINE[:-2] + ";B[zz])\n", "a point off the board"),
        (LINE[:-2] + ";B[h])\n", "a node cut short"),
        (LINE[:-2] + "C[comment])\n", "a comment"),
        (LINE.replace("(;FF[4]", "(;FF[3]", 1), "another root"),
        (LINE.replace("BR[", "BR[ ", 1), "a rating that is not digits"),
        (LINE + LINE, "two games on one line"),
        ("", "an empty line"),
    ],
)
def test_a_line_that_is_not_the_profile_s_is_refused(line: str, why: str) -> None:
    with pytest.raises(NotALine):
        text_columns([line])


def test_a_rating_beyond_int32_fails_loudly() -> None:
    """The game server's ratings are PostgreSQL integers; another width is not cut silently."""
    line = game_line(replace(example_records()[0], black_rating=10**12))
    with pytest.raises(pa.ArrowInvalid):
        record_batch(text_columns([line]))


# --- the file -----------------------------------------------------------------------------------


def build(lines: list[str], groups: list[int] | None = None, *, batch: int = 2000) -> bytes:
    """The companion of ``lines`` as a month's build writes it: a row group of ``groups[i]``
    rows per range (one group of every line by default), each gathered in batches of ``batch``
    lines and encoded on its own as a range does, the groups joined."""
    parts = []
    start = 0
    for size in groups or [len(lines)]:
        rows = GroupRows()
        for first in range(start, start + size, batch):
            rows.add(lines[first : min(first + batch, start + size)])
        parts.append(rows.encode())
        start += size
    assert start == len(lines)
    return b"".join(footer.join(parts))


def written_in_one_pass(lines: list[str], groups: list[int] | None = None) -> bytes:
    """The same rows through pyarrow's own writer in one pass, a row group per write: the
    reference."""
    table = pa.Table.from_batches([record_batch(text_columns(lines))])
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, SCHEMA, **writer_options()) as writer:
        writer.add_key_value_metadata(FILE_METADATA)
        start = 0
        for size in groups or [len(lines)]:
            writer.write_table(table.slice(start, size), row_group_size=size)
            start += size
    return sink.getvalue()


@pytest.mark.parametrize("groups", [None, [64, 64, 64, 8], [30, 1, 169], [1] * 5 + [195]])
def test_the_groups_joined_are_pyarrow_s_own_file(groups: list[int] | None) -> None:
    lines = example_lines()
    assert build(lines, groups) == written_in_one_pass(lines, groups)
    assert pq.ParquetFile(io.BytesIO(build(lines, groups))).metadata.num_row_groups == len(
        groups or [200]
    )


def test_the_bytes_do_not_depend_on_the_batches() -> None:
    lines = example_lines()
    for groups in (None, [64, 64, 64, 8]):
        whole = build(lines, groups)
        assert {build(lines, groups, batch=b) for b in (1, 7, 63, 64, 65)} == {whole}


@pytest.mark.parametrize("slice_rows", [1, 7, 64, 10**9])
def test_the_bytes_do_not_depend_on_the_writer_s_slices(
    slice_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer is given a group in slices (its memory is a slice's): any slices, one file."""
    lines = example_lines()
    monkeypatch.setattr(columns, "SLICE_ROWS", slice_rows)
    assert hashlib.sha256(build(lines)).hexdigest() == GOLDEN_SHA256
    assert build(lines, [64, 64, 64, 8]) == written_in_one_pass(lines, [64, 64, 64, 8])


def test_the_row_groups_text_gives_k() -> None:
    """The docs' and the profile page's sentence names the exporter's K."""
    assert f"{RANGE_CANDIDATES:,} games" in ROW_GROUPS


def test_the_file_s_options_and_footer() -> None:
    data = build(example_lines())
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.created_by == CREATED_BY == f"parquet-cpp-arrow version {pa.__version__}"
    assert meta.num_rows == 200 and meta.num_row_groups == 1
    assert meta.metadata is not None
    assert meta.metadata[b"gomoku-party.schema"] == SCHEMA_ID.encode()
    assert set(meta.metadata) == {b"gomoku-party.schema", b"pandas"}, "no time, host or schema"
    group = meta.row_group(0)
    assert [c.path_in_schema.split(".")[0] for c in map(group.column, range(13))] == list(
        COLUMN_NAMES
    )
    for column in COLUMNS:
        chunk = group.column(COLUMN_NAMES.index(column.name))
        assert chunk.compression == "ZSTD", column.name
        assert ("RLE_DICTIONARY" in chunk.encodings) == column.dictionary, column.name
        assert (chunk.statistics is not None and chunk.statistics.has_min_max) == (
            column.statistics
        ), column.name
    finish = group.column(COLUMN_NAMES.index("finish")).statistics
    assert finish.min == datetime(2026, 8, 1, 0, 3, tzinfo=UTC)
    assert finish.max == datetime(2026, 8, 31, 23, 59, 59, tzinfo=UTC)
    sorting = [(s.column_index, s.descending) for s in group.sorting_columns]
    assert sorting == [(COLUMN_NAMES.index("finish"), False), (COLUMN_NAMES.index("id"), False)]
    assert pq.read_table(io.BytesIO(data)).schema.remove_metadata() == SCHEMA


def test_the_golden_digest_of_the_example_companion() -> None:
    assert hashlib.sha256(build(example_lines())).hexdigest() == GOLDEN_SHA256


@pytest.mark.slow  # two Python processes
def test_the_same_bytes_in_other_processes() -> None:
    """Fresh interpreters with other hash seeds write the same file."""
    code = (
        "import hashlib\n"
        "from tests.unit.companion.test_companion import build, example_lines\n"
        "print(hashlib.sha256(build(example_lines(), batch=9)).hexdigest())\n"
    )
    digests = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=120,
        )
        digests.add(done.stdout.strip())
    assert digests == {GOLDEN_SHA256}


def test_pandas_metadata_names_the_nullable_integers_only() -> None:
    data = build(example_lines())
    meta = pq.ParquetFile(io.BytesIO(data)).metadata.metadata
    assert meta is not None
    pandas = json.loads(meta[b"pandas"])
    assert [c["name"] for c in pandas["columns"]] == [
        "black_rating",
        "white_rating",
        "time_control",
    ]
    assert {c["numpy_type"] for c in pandas["columns"]} == {"Int32"}
