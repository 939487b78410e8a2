"""``verify`` and ``games`` over many files and directories, as a researcher reads a folder of
months: a result per file and one exit status; ``games`` prints one stream (one CSV header)
with each game's month. A bad argument shows the command's own usage, and every command's
help fits an 80-column terminal."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gomoku_archive.cli.main import build_parser, main
from gomoku_archive.demo.examples import example_archive
from tests.unit.verify.test_verify import GOOD

EXAMPLE = example_archive()


def folder_of_months(folder: Path) -> tuple[Path, Path]:
    """The bundled example (August, with its checksum file) and a small September-less file."""
    example = folder / EXAMPLE.name
    example.write_bytes(EXAMPLE.data)
    (folder / f"{EXAMPLE.name}.sha256").write_text(EXAMPLE.checksum_text)
    other = folder / "b.sgf.gz"
    other.write_bytes(GOOD)
    (folder / "superseded").mkdir()
    (folder / "superseded" / "old.sgf.gz").write_bytes(b"not read: a sub-directory")
    return example, other


def test_verify_takes_files_and_directories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example, _ = folder_of_months(tmp_path)
    assert main(["verify", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("OK: every check of gomoku-party-sgf-1 holds") == 2
    assert out.rstrip().endswith("2 files: 2 OK")
    assert "old.sgf.gz" not in out

    broken = tmp_path / "c.sgf.gz"
    broken.write_bytes(GOOD[:-3])
    missing = tmp_path / "missing.sgf.gz"
    code = main(["verify", str(example), str(broken), str(missing), "--json"])
    captured = capsys.readouterr()
    assert code == 2  # the worst of OK, problems and unreadable
    reports = json.loads(captured.out)
    assert [r["path"] for r in reports] == [str(example), str(broken), str(missing)]
    assert reports[0]["ok"] is True and reports[1]["ok"] is False
    assert "cannot read" in reports[2]["error"]
    assert f"cannot read {missing}" in captured.err

    assert main(["verify", str(example), str(broken)]) == 1


def test_one_file_keeps_its_single_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example, _ = folder_of_months(tmp_path)
    assert main(["verify", str(example), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert main(["verify", str(tmp_path / "missing.sgf.gz")]) == 2


def test_the_checksum_option_is_for_one_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example, other = folder_of_months(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["verify", str(example), str(other), "--sha256", str(example) + ".sha256"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: gomoku-archive verify")
    assert "--sha256 names the checksum file of one archive" in err


def test_an_empty_directory_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["games", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"gomoku-archive: error: {tmp_path} holds no .sgf.gz or .sgf file\n"
    )


def test_games_streams_every_file_with_its_month(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example, other = folder_of_months(tmp_path)
    assert main(["games", str(example), str(other), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 200 + 3  # one header, then the games of both files
    assert {row["month"] for row in rows} == {"2026-08"}
    assert all(row["end"].startswith(row["month"]) for row in rows)

    assert main(["games", str(tmp_path)]) == 0
    games = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(games) == 203 and games[0]["month"] == "2026-08"


def test_games_goes_on_past_an_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example, _ = folder_of_months(tmp_path)
    code = main(["games", str(tmp_path / "missing.sgf.gz"), str(example)])
    captured = capsys.readouterr()
    assert code == 2
    assert len(captured.out.splitlines()) == 200
    assert "cannot read" in captured.err


@pytest.mark.parametrize("command", [["verify"], ["games"], ["sgf", "check"]])
def test_a_bad_argument_shows_the_commands_usage(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "a.sgf.gz", "b.sgf.gz", "--no-such-option"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"usage: gomoku-archive {' '.join(command)} ")
    assert err[-1] == (
        f"gomoku-archive {' '.join(command)}: error: unrecognized arguments: --no-such-option"
    )


def commands() -> list[list[str]]:
    found: list[list[str]] = []

    def walk(parser: object, path: list[str]) -> None:
        import argparse

        assert isinstance(parser, argparse.ArgumentParser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*path, name])
                    walk(sub, [*path, name])

    walk(build_parser(), [])
    return found


@pytest.mark.slow  # a process per command: its help is argparse's, at a real terminal width
def test_every_commands_help_fits_80_columns() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    for command in commands():
        shown = subprocess.run(
            [sys.executable, "-m", "gomoku_archive.cli.main", *command, "--help"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
        long = [line for line in shown.splitlines() if len(line) > 80]
        assert long == [], (command, long)
