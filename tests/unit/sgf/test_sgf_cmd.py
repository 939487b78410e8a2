"""`gomoku-archive sgf check`: compiler-style lines, JSON, exit codes; files are only read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gomoku_archive.cli.main as cli
from gomoku_archive.sgf import MAX_LISTED_FINDINGS

VALID = b"(;FF[4]GM[4]CA[UTF-8]SZ[15]RE[B+R];B[hh];W[ih];B[ii])\n"
WARNING_ONLY = b"(;FF[4]GM[4]CA[UTF-8]RE[B+R];B[hh];W[ih];B[ii])\n"
TWO_ERRORS = b"(;FF[4]GM[1]CA[UTF-8]SZ[9:9])\n(;FF[4]GM[1]SZ[19];SZ[9])\n"
BROKEN = b"(;SZ[9:9])\n(;B[aa]\n(;W[bb"


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_a_clean_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = write(tmp_path, "ok.sgf", VALID)
    assert cli.main(["sgf", "check", name]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{name}: parse ok: 1 game",
        f"{name}: 0 errors, 0 warnings",
    ]


def test_warnings_only_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = write(tmp_path, "warn.sgf", WARNING_ONLY)
    assert cli.main(["sgf", "check", name]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{name}: parse ok: 1 game",
        f"{name}:1:2: warning SZ005 [game 1, node 0] Gomoku record without SZ: FF[4] gives GM[4]"
        " no default, 15x15 assumed",
        f"{name}: 0 errors, 1 warning",
    ]


def test_errors_exit_2_with_one_line_per_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = write(tmp_path, "sizes.sgf", TWO_ERRORS)
    assert cli.main(["sgf", "check", name]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{name}: parse ok: 2 games",
        f"{name}:1:22: error SZ002 [game 1, node 0] SZ[9:9] is a square written in composed "
        "form; FF[4] requires SZ[9]",
        f"{name}:2:20: error SZ001 [game 2, node 1] SZ[9] outside the root node: SZ belongs to "
        "the root and cannot resize the board later",
        f"{name}: 2 errors, 0 warnings",
    ]


def test_a_parse_error_is_an_error_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = write(tmp_path, "broken.sgf", BROKEN)
    assert cli.main(["sgf", "check", name]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{name}:3:4: parse error: property value of W is never closed: '[' without a matching "
        "']' (after 1 complete game)",
        f"{name}:1:3: error SZ002 [game 1, node 0] SZ[9:9] is a square written in composed "
        "form; FF[4] requires SZ[9]",
        f"{name}: 2 errors, 0 warnings",
    ]


def test_a_missing_file_is_one_line_on_stderr_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = write(tmp_path, "ok.sgf", VALID)
    missing = str(tmp_path / "missing.sgf")
    assert cli.main(["sgf", "check", ok, missing]) == 3
    captured = capsys.readouterr()
    assert captured.err == (
        f"gomoku-archive: error: cannot read {missing}: No such file or directory\n"
    )
    assert captured.out.splitlines()[-1] == "total: 2 files, 0 errors, 0 warnings"


def test_a_directory_is_unreadable_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sgf", "check", str(tmp_path)]) == 3
    assert capsys.readouterr().err.startswith(f"gomoku-archive: error: cannot read {tmp_path}: ")


def test_several_files_exit_with_the_worst_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [
        write(tmp_path, "a.sgf", VALID),
        write(tmp_path, "b.sgf", WARNING_ONLY),
        write(tmp_path, "c.sgf", TWO_ERRORS),
    ]
    assert cli.main(["sgf", "check", *files]) == 2
    assert capsys.readouterr().out.splitlines()[-1] == "total: 3 files, 2 errors, 1 warning"


def test_json_is_one_document_for_all_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path, "broken.sgf", BROKEN)
    warn = write(tmp_path, "warn.sgf", WARNING_ONLY)
    missing = str(tmp_path / "missing.sgf")
    assert cli.main(["sgf", "check", "--json", broken, warn, missing]) == 3
    document = json.loads(capsys.readouterr().out)
    assert document == [
        {
            "file": broken,
            "read_error": None,
            "parse": {
                "ok": False,
                "error": {
                    "line": 3,
                    "column": 4,
                    "message": "property value of W is never closed: '[' without a matching ']'",
                },
            },
            "games": 1,
            "findings": [
                {
                    "code": "SZ002",
                    "severity": "error",
                    "line": 1,
                    "column": 3,
                    "node": "1:0",
                    "message": "SZ[9:9] is a square written in composed form; FF[4] requires SZ[9]",
                },
            ],
            "unlisted": 0,
            "counts": {"errors": 2, "warnings": 0},
        },
        {
            "file": warn,
            "read_error": None,
            "parse": {"ok": True, "error": None},
            "games": 1,
            "findings": [
                {
                    "code": "SZ005",
                    "severity": "warning",
                    "line": 1,
                    "column": 2,
                    "node": "1:0",
                    "message": "Gomoku record without SZ: FF[4] gives GM[4] no default, 15x15 "
                    "assumed",
                },
            ],
            "unlisted": 0,
            "counts": {"errors": 0, "warnings": 1},
        },
        {
            "file": missing,
            "read_error": "No such file or directory",
            "parse": None,
            "games": 0,
            "findings": [],
            "unlisted": 0,
            "counts": {"errors": 0, "warnings": 0},
        },
    ]


def test_the_checked_file_is_left_as_it_was(tmp_path: Path) -> None:
    name = write(tmp_path, "sizes.sgf", TWO_ERRORS)
    before = Path(name).stat()
    cli.main(["sgf", "check", name])
    after = Path(name).stat()
    assert Path(name).read_bytes() == TWO_ERRORS
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)


@pytest.mark.slow  # files of several reads: seconds
def test_files_bigger_than_one_read_are_checked_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games = 40_000  # about 2 MB, more than one 1 MiB read
    name = write(tmp_path, "big.sgf", VALID * games + b"(;SZ[9:9])\n")
    assert cli.main(["sgf", "check", name]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{name}: parse ok: {games + 1} games"
    assert out[1].startswith(f"{name}:{games + 1}:3: error SZ002 [game {games + 1}, node 0]")


def test_check_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["sgf", "check"])
    assert exited.value.code == 2
    assert "FILE" in capsys.readouterr().err


def test_findings_past_the_listing_limit_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Black plays twice in a row on one point, 12,001 times: two findings a move.
    path = tmp_path / "many.sgf"
    path.write_bytes(b"(;GM[4]SZ[15];B[aa]" + b";B[aa]" * 12_001 + b")")
    assert cli.main(["sgf", "check", str(path)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + MAX_LISTED_FINDINGS + 2
    assert lines[-2] == f"{path}: ... and 14,002 more findings (the first 10,000 are listed)"
    assert lines[-1] == f"{path}: 24002 errors, 0 warnings"
    assert cli.main(["sgf", "check", "--json", str(path)]) == 2
    [document] = json.loads(capsys.readouterr().out)
    assert document["unlisted"] == 14_002
    assert document["counts"] == {"errors": 24_002, "warnings": 0}
