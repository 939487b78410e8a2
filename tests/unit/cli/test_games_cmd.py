"""``gomoku-archive games``: records, filters, formats and bad lines; and ``verify`` and ``sgf
check`` reading plain SGF as well as gzip, told from the bytes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.cli import games_cmd
from gomoku_archive.cli.games_cmd import MAX_LINE_BYTES, MAX_PROBLEMS, write_games
from gomoku_archive.cli.main import main
from gomoku_archive.profile.writer import game_line
from gomoku_archive.verify.games_rows import GameFilter, game_filter, parse_instant
from tests.budget import examples
from tests.docs_pages import code_blocks, section
from tests.unit.verify.test_verify import GAMES, GOOD, LINES, gz, verify

PLAIN = "".join(LINES).encode()


def run(path: Path, wanted: GameFilter | None = None, fmt: str = "jsonl") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    bad = write_games(str(path), wanted or GameFilter(), fmt, out, err)
    return bad, out.getvalue(), err.getvalue()


@pytest.fixture(params=["gzip", "plain", "gzip-named-sgf", "plain-named-gz"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    name, data = {
        "gzip": ("a.sgf.gz", GOOD),
        "plain": ("a.sgf", PLAIN),
        "gzip-named-sgf": ("a.sgf", GOOD),
        "plain-named-gz": ("a.sgf.gz", PLAIN),
    }[request.param]
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_every_game_as_json_lines(archive: Path) -> None:
    bad, out, err = run(archive)
    assert (bad, err) == (0, "")
    games = [json.loads(line) for line in out.splitlines()]
    assert [g["id"][-1] for g in games] == ["1", "2", "3"]
    first = games[0]
    assert first == {
        "id": "00000000-0000-4000-8000-000000000001",
        "month": "2026-08",
        "start": "2026-08-12T12:00:00Z",
        "end": "2026-08-12T12:02:00Z",
        "result": "black",
        "termination": "RESIGNATION",
        "blackRating": 1200,
        "whiteRating": 1210,
        "timeControl": 60,
        "moves": [[7, 7], [8, 7], [8, 8]],  # hh ih ii: column, then row from the top-left
    }
    assert games[1]["moves"][1] == [0, 14], "W[ao]: the bottom-left corner"
    assert games[2]["result"] == "draw"


def test_csv(archive: Path) -> None:
    _, out, _ = run(archive, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3
    assert rows[0]["moves"] == "[[7,7],[8,7],[8,8]]"
    assert rows[0]["blackRating"] == "1200"
    assert rows[2]["result"] == "draw"


def games_at(tmp_path: Path, *spans: tuple[datetime, datetime]) -> Path:
    """An archive of the good archive's first game played at each (start, finish)."""
    lines = [game_line(replace(GAMES[0], started_at=s, finished_at=f)) for s, f in spans]
    path = tmp_path / "years.sgf.gz"
    path.write_bytes(gz("".join(lines)))
    return path


EDGE_SPANS = [
    (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 1, 2, 0, 5, tzinfo=UTC)),
    (datetime(999, 5, 31, 23, tzinfo=UTC), datetime(999, 6, 1, 0, 1, tzinfo=UTC)),
    (datetime(9999, 12, 30, 23, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
]


def test_every_date_and_time_has_a_four_digit_year_in_json_and_csv(tmp_path: Path) -> None:
    """Year 999 printed its month as ``999-06`` (strftime's %Y); the game ending 9999-12-31 after
    midnight raised OverflowError (the day after it, made by format_dates)."""
    path = games_at(tmp_path, *EDGE_SPANS)
    bad, out, err = run(path)
    assert (bad, err) == (0, "")
    games = [json.loads(line) for line in out.splitlines()]
    expected = [
        ("0001-01", "0001-01-01T00:00:00Z", "0001-01-02T00:05:00Z"),
        ("0999-06", "0999-05-31T23:00:00Z", "0999-06-01T00:01:00Z"),
        ("9999-12", "9999-12-30T23:00:00Z", "9999-12-31T23:59:59Z"),
    ]
    assert [(g["month"], g["start"], g["end"]) for g in games] == expected
    _, out, _ = run(path, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["month"], r["start"], r["end"]) for r in rows] == expected
    _, out, _ = run(path, game_filter(since="0999-06-01", until="9999-12-31T23:59:59Z"))
    assert [json.loads(line)["month"] for line in out.splitlines()] == ["0999-06"]


@pytest.mark.parametrize(
    ("wanted", "ids"),
    [
        (game_filter(results=["black"]), "12"),
        (game_filter(results=["white"]), ""),
        (game_filter(results=["draw", "white"]), "3"),
        (game_filter(terminations=["FIVE"]), "2"),
        (game_filter(terminations=["FIVE", "AGREEMENT"]), "23"),
        (game_filter(min_moves=3), "12"),
        (game_filter(min_moves=4), "2"),
        (game_filter(since="2026-08-12T12:30:00Z"), "23"),
        (game_filter(until="2026-08-13"), "12"),
        (game_filter(since="2026-08-12T13:00:00Z", until="2026-08-12T13:00:01Z"), "2"),
        (game_filter(results=["black"], min_moves=4), "2"),
    ],
)
def test_filters(tmp_path: Path, wanted: GameFilter, ids: str) -> None:
    path = tmp_path / "a.sgf.gz"
    path.write_bytes(GOOD)
    _, out, _ = run(path, wanted)
    assert "".join(json.loads(line)["id"][-1] for line in out.splitlines()) == ids


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-09-01", datetime(2026, 9, 1, tzinfo=UTC)),
        ("2026-09-01T12:00:00Z", datetime(2026, 9, 1, 12, tzinfo=UTC)),
        ("2026-09-01T12:00:00", datetime(2026, 9, 1, 12, tzinfo=UTC)),
        ("2026-09-01T14:00:00+02:00", datetime(2026, 9, 1, 12, tzinfo=UTC)),
    ],
)
def test_parse_instant(text: str, expected: datetime) -> None:
    assert parse_instant(text) == expected


def test_bad_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    occupied = LINES[1].replace(";W[ao]", ";W[aa]", 1)  # white plays on black's first stone
    assert occupied != LINES[1]
    lines = [LINES[0], "\n", "(;FF[4]GM[4]\n", occupied, LINES[2]]
    data = "".join(lines).encode() + b"(;\xff)\n"
    path = tmp_path / "bad.sgf.gz"
    path.write_bytes(gz(data))
    bad, out, err = run(path)
    assert [json.loads(line)["id"][-1] for line in out.splitlines()] == ["1", "3"]
    assert bad == 4
    assert f"{path}:2: blank_line" in err
    assert f"{path}:3: not_one_game" in err
    assert f"{path}:4: illegal_move: occupied" in err
    assert f"{path}:6: not_utf8" in err


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.sgf.gz"
    path.write_bytes(GOOD)
    assert main(["games", str(path), "--result", "draw", "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("id,month,start,end,result")
    assert len(out) == 2
    assert main(["games", str(path), "--since", "yesterday"]) == 2
    assert "is not a date or time" in capsys.readouterr().err
    assert main(["games", str(tmp_path / "missing.sgf.gz")]) == 2
    (tmp_path / "t.sgf.gz").write_bytes(GOOD[:40])
    assert main(["games", str(tmp_path / "t.sgf.gz")]) == 2
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "b.sgf").write_bytes(PLAIN + b"\n")
    assert main(["games", str(tmp_path / "b.sgf")]) == 1


def test_verify_reads_plain_sgf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = verify(PLAIN, plain=True, file_name="games.sgf")
    assert plain.ok, plain.problems
    assert plain.games == 3
    assert any("gzip framing was not checked" in n for n in plain.notes)
    misnamed = verify(PLAIN, plain=True, file_name="games.sgf.gz")
    assert [p.check.value for p in misnamed.problems] == ["gzip_header"]
    for name, data in (("a.sgf", PLAIN), ("b.sgf", GOOD)):
        (tmp_path / name).write_bytes(data)
        assert main(["verify", str(tmp_path / name), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["games"] == 3


def test_sgf_check_reads_gzip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.sgf.gz").write_bytes(GOOD)
    (tmp_path / "b.sgf").write_bytes(PLAIN)
    assert main(["sgf", "check", str(tmp_path / "a.sgf.gz"), str(tmp_path / "b.sgf")]) == 0
    out = capsys.readouterr().out
    assert out.count("parse ok: 3 games") == 2


def documented_examples() -> list[str]:
    """The reading examples of docs/downloaders.md, in order."""
    return code_blocks(section("downloaders.md", "Reading the files"), "python")


@pytest.mark.slow  # runs each example as a script
@pytest.mark.parametrize("index", [0, 1], ids=["standard-library", "sgfmill"])
def test_the_documented_examples_read_an_archive(index: int, tmp_path: Path) -> None:
    """The docs' reading examples run as printed and agree with `games` (sgfmill's rows
    turned around)."""
    path = tmp_path / "a.sgf.gz"
    path.write_bytes(GOOD)
    script = tmp_path / "example.py"
    script.write_text(documented_examples()[index])
    printed = subprocess.run(
        [sys.executable, str(script), str(path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    _, out, _ = run(path)
    games = [json.loads(line) for line in out.splitlines()]
    assert len(printed) == len(games) == 3
    for line, game in zip(printed, games, strict=True):
        first = ", ".join(
            f"('{c}', {x}, {y})" for c, (x, y) in zip("BWB", game["moves"][:3], strict=False)
        )
        if index == 1:
            first = first.lower()
        assert line.startswith(game["id"])
        assert line.endswith(f"[{first}]")


class _ClosedPipe(io.StringIO):
    """Standard output whose reader went away (``gomoku-archive games FILE | head``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_is_no_unreadable_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.sgf.gz"
    path.write_bytes(GOOD)
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["games", str(path)]) == 0
    assert "cannot read" not in capsys.readouterr().err


# --- bounded output, and one gzip member -----------------------------------------------------


def test_problems_are_capped_like_verify_and_counted(tmp_path: Path) -> None:
    """A gzip of blank lines used to write one stderr line per line (683 MB in 120 s from a
    1 MB file): now the first 20, and how many more there were."""
    path = tmp_path / "bomb.sgf.gz"
    path.write_bytes(gz(LINES[0].encode() + b"\n" * 30_000 + b"x\n" * 1000 + LINES[1].encode()))
    bad, out, err = run(path)
    assert [json.loads(line)["id"][-1] for line in out.splitlines()] == ["1", "2"]
    assert bad == 31_000
    shown = err.splitlines()
    assert shown[:20] == [f"{path}:{n}: blank_line: blank line" for n in range(2, 22)]
    assert shown[20:] == [
        "gomoku-archive: 31,000 lines with problems were skipped (30,980 of them not shown)"
    ]


@pytest.mark.parametrize("bad_line", [b"\n", b"x\n", b"(;FF[4])\n"])
def test_a_file_of_bad_lines_is_left_after_a_bounded_number(
    tmp_path: Path, bad_line: bytes
) -> None:
    """A 1 MB gzip of 64 Mi bad lines kept ``games`` busy for minutes; now it stops after
    MAX_PROBLEMS lines, as ``verify`` stops reading the text, and says so."""
    path = tmp_path / "bomb.sgf.gz"
    path.write_bytes(gz(LINES[0].encode() + bad_line * (MAX_PROBLEMS + 5_000) + LINES[1].encode()))
    bad, out, err = run(path)
    assert [json.loads(line)["id"][-1] for line in out.splitlines()] == ["1"]
    assert MAX_PROBLEMS <= bad <= MAX_PROBLEMS + 5_000
    assert err.splitlines()[-1] == (
        f"{path}: stopped after {bad:,} lines with problems: the rest of the file was not read "
        "(is it a gomoku-party-sgf-1 archive?)"
    )


def test_line_numbers_survive_long_lines_and_runs(tmp_path: Path) -> None:
    long_line = b"(" + b"x" * (MAX_LINE_BYTES + 10) + b")\n"
    crlf = LINES[0].replace("\n", "\r\n").encode()
    data = b"\n\n" + long_line + crlf + long_line + LINES[2].encode()
    path = tmp_path / "odd.sgf.gz"
    path.write_bytes(gz(data))
    bad, out, err = run(path)
    assert [json.loads(line)["id"][-1] for line in out.splitlines()] == ["3"]
    assert [line.split(": ")[0:2] for line in err.splitlines()[:-1]] == [
        [f"{path}:1", "blank_line"],
        [f"{path}:2", "blank_line"],
        [f"{path}:3", "line_too_long"],
        [f"{path}:4", "cr"],
        [f"{path}:5", "line_too_long"],
    ]
    assert bad == 5


@pytest.mark.parametrize(
    ("after", "check"),
    [(GOOD, "gzip_members"), (b"\0\0\0\0", "trailing_data"), (b"junk", "trailing_data")],
)
def test_only_the_first_gzip_member_is_read_and_what_follows_is_flagged(
    tmp_path: Path, after: bytes, check: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gzip.open`` read two concatenated archives as one: every game printed twice, silently.
    ``verify`` calls a second member a problem; ``games`` now does too, and reads the first."""
    path = tmp_path / "two.sgf.gz"
    path.write_bytes(GOOD + after)
    bad, out, err = run(path)
    assert [json.loads(line)["id"][-1] for line in out.splitlines()] == ["1", "2", "3"]
    assert bad == 1
    assert err.startswith(f"{path}: {check}: ")
    assert main(["games", str(path)]) == 1
    assert main(["verify", str(path)]) == 1
    assert check in capsys.readouterr().out


@settings(max_examples=examples(500), deadline=None)
@given(
    text=st.lists(st.sampled_from([b"\n", b"ab", b"abcdefgh", b"\r", b"(;)"]), max_size=40),
    size=st.integers(1, 20),
)
def test_lines_are_the_lines_whatever_the_blocks(text: list[bytes], size: int) -> None:
    """``_lines`` (blank runs at once, long lines skipped, blocks of any size) gives what
    splitting the whole text gives."""
    data = b"".join(text)
    limit = 6
    expected: list[tuple[int, bytes | None]] = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if number > data.count(b"\n") and not line:
            break  # the text ended with its LF
        raw = line + b"\n" if number <= data.count(b"\n") else line
        expected.append((number, None if len(line) > limit else raw))
    blocks = [data[i : i + size] for i in range(0, len(data), size)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(games_cmd, "MAX_LINE_BYTES", limit)
        got = [
            (number + i, raw)
            for number, raw, count in games_cmd._lines(blocks)
            for i in range(count)
        ]
    assert got == expected
