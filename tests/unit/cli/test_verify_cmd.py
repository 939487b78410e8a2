"""``gomoku-archive verify`` end to end through ``cli.main.main``: the bundled example
passes, and each way of breaking it gives its own problem, line number and exit code."""

from __future__ import annotations

import gzip
import json
import re
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from gomoku_archive.cli import main as cli
from gomoku_archive.demo.examples import example_archive
from gomoku_archive.profile.stream import ArchiveStream

EXAMPLE = example_archive()
TEXT = gzip.decompress(EXAMPLE.data).decode()
LINES = TEXT.splitlines(keepends=True)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write_example(folder: Path) -> Path:
    archive = folder / EXAMPLE.name
    archive.write_bytes(EXAMPLE.data)
    (folder / f"{EXAMPLE.name}.sha256").write_text(EXAMPLE.checksum_text)
    return archive


def gz(text: str) -> bytes:
    stream = ArchiveStream()
    return stream.write(text.encode()) + stream.finish()


def line_with(pattern: str) -> int:
    """The 1-based number of the first example line matching ``pattern``."""
    return next(i for i, line in enumerate(LINES, 1) if re.search(pattern, line))


def edited(number: int, change: Callable[[str], str]) -> bytes:
    lines = list(LINES)
    lines[number - 1] = change(lines[number - 1])
    assert lines[number - 1] != LINES[number - 1]
    return gz("".join(lines))


def swapped(a: int, b: int) -> bytes:
    lines = list(LINES)
    lines[a - 1], lines[b - 1] = lines[b - 1], lines[a - 1]
    return gz("".join(lines))


def gn(number: int) -> str:
    found = re.search(r"GN\[([^\]]*)\]", LINES[number - 1])
    assert found is not None
    return found.group(1)


def with_header(flags: int, extra: bytes = b"", mtime: int = 0) -> bytes:
    data = EXAMPLE.data
    return data[:3] + bytes([flags]) + struct.pack("<I", mtime) + data[8:10] + extra + data[10:]


FIVE_LINE = line_with(r"RE\[B\+\]")
LAST_MOVE = re.compile(r";([BW])\[(..)\]\)$")


def replay_first_point(line: str) -> str:
    """Play the last move on the first move's point: occupied."""
    first = re.search(r";B\[(..)\]", line)
    assert first is not None
    return LAST_MOVE.sub(lambda m: f";{m.group(1)}[{first.group(1)}])", line.rstrip("\n")) + "\n"


# Each case: the bytes of a broken archive, and the (line, check) problems it must give exactly.
CASES = [
    pytest.param(
        edited(57, lambda s: s.replace("PB[Black]", "")),
        [(57, "missing_property")],
        id="missing-property",
    ),
    pytest.param(swapped(10, 11), [(11, "order")], id="out-of-order"),
    pytest.param(
        edited(11, lambda s: s.replace(gn(11), gn(10))), [(11, "duplicate_gn")], id="duplicate-gn"
    ),
    pytest.param(edited(23, replay_first_point), [(23, "illegal_move")], id="illegal-move"),
    pytest.param(
        edited(FIVE_LINE, lambda s: s.replace("RE[B+]", "RE[W+]")),
        [(FIVE_LINE, "result_mismatch")],
        id="RE-disagrees-with-board",
    ),
    pytest.param(
        edited(5, lambda s: s[:-2] + "(;B[aa])(;B[ab]))\n"), [(5, "variation")], id="variation"
    ),
    pytest.param(
        edited(6, lambda s: s.replace("];W[", "]C[nice];W[", 1)),
        [(6, "comment")],
        id="comment",
    ),
    pytest.param(
        edited(7, lambda s: s.replace("];B[", "]AB[aa];B[", 1)), [(7, "setup")], id="setup-stones"
    ),
    pytest.param(edited(8, lambda s: s[:-2] + ";B[])\n"), [(8, "pass")], id="pass"),
    pytest.param("\ufeff" + TEXT, [(1, "bom")], id="bom"),
    pytest.param(with_header(0, mtime=1_786_000_000), [(None, "gzip_mtime")], id="mtime"),
    pytest.param(with_header(0x08, b"august.sgf\0"), [(None, "gzip_flags")], id="name-in-header"),
    pytest.param(EXAMPLE.data + b"\n", [(None, "trailing_data")], id="trailing-byte"),
]


@pytest.mark.parametrize(("data", "expected"), CASES)
def test_each_problem_is_named_with_its_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data: bytes | str,
    expected: list[tuple[int | None, str]],
) -> None:
    archive = tmp_path / "broken.sgf.gz"
    archive.write_bytes(gz(data) if isinstance(data, str) else data)
    code, out, err = run(["verify", str(archive), "--json"], capsys)
    report = json.loads(out)
    assert [(p["line"], p["check"]) for p in report["problems"]] == expected
    assert code == 1
    assert report["ok"] is False
    assert err == ""


def test_crlf_is_reported_on_every_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "crlf.sgf.gz"
    archive.write_bytes(gz(TEXT.replace("\n", "\r\n")))
    code, out, _ = run(["verify", str(archive)], capsys)
    assert code == 1
    assert "PROBLEMS: 200" in out
    assert "line 1      cr" in out
    assert "... and 180 more" in out


def test_the_bundled_example_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["verify", str(write_example(tmp_path))], capsys)
    assert code == 0
    assert err == ""
    assert out.splitlines() == [
        EXAMPLE.name,
        f"  sha256   {EXAMPLE.sha256}  (checksum file: verified)",
        f"  size     {len(EXAMPLE.data):,} bytes, {len(TEXT.encode()):,} uncompressed",
        "  games    200",
        "  results  FIVE 118, RESIGNATION 47, TIMEOUT 21, BOARD_FULL 2, AGREEMENT 12",
        "OK: every check of gomoku-party-sgf-1 holds",
    ]


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["verify", str(write_example(tmp_path)), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["ok"] is True
    assert report["games"] == 200
    assert report["sha256"] == EXAMPLE.sha256
    assert report["checksum"] == "verified"


def test_tampered_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = write_example(tmp_path)
    data = bytearray(EXAMPLE.data)
    data[len(data) // 2] ^= 0x01
    archive.write_bytes(bytes(data))
    code, out, _ = run(["verify", str(archive), "--json"], capsys)
    checks = {p["check"] for p in json.loads(out)["problems"]}
    assert code == 1
    assert {"checksum_mismatch", "file_name_hash"} <= checks
    assert checks & {"gzip_data", "gzip_crc"}  # the flipped bit also breaks the data itself


def test_wrong_hash_prefix_in_the_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "gomoku-party-2026-08-0123456789abcdef.sgf.gz"
    archive.write_bytes(EXAMPLE.data)
    code, out, _ = run(["verify", str(archive), "--json"], capsys)
    report = json.loads(out)
    assert [(p["line"], p["check"]) for p in report["problems"]] == [(None, "file_name_hash")]
    assert code == 1


def test_an_impossible_month_in_a_name_is_that_file_s_problem_and_the_folder_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gomoku-party-2026-13-...`` is well formed but no month: a problem of that file. It
    raised AttributeError, which ended the run before every later file of the folder."""
    write_example(tmp_path)
    impossible = tmp_path / EXAMPLE.name.replace("2026-08", "2026-13")
    impossible.write_bytes(EXAMPLE.data)
    (tmp_path / "later.sgf.gz").write_bytes(EXAMPLE.data)
    code, out, err = run(["verify", str(tmp_path), "--json"], capsys)
    assert (code, err) == (1, "")
    reports = {Path(r["path"]).name: r for r in json.loads(out)}
    assert sorted(reports) == sorted([EXAMPLE.name, impossible.name, "later.sgf.gz"])
    assert [(p["line"], p["check"]) for p in reports[impossible.name]["problems"]] == [
        (None, "file_name_month")
    ]
    assert reports[impossible.name]["games"] == 200
    assert reports[EXAMPLE.name]["ok"] and reports["later.sgf.gz"]["ok"]
    code, out, _ = run(["verify", str(tmp_path)], capsys)
    assert code == 1
    assert out.splitlines()[-1] == "3 files: 2 OK, 1 with problems"


def test_a_missing_checksum_file_is_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / EXAMPLE.name
    archive.write_bytes(EXAMPLE.data)
    code, out, _ = run(["verify", str(archive)], capsys)
    assert code == 0
    assert "(checksum file: absent)" in out
    assert "  note     no checksum file: the SHA-256 was not compared with one" in out


def test_an_explicit_checksum_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / EXAMPLE.name
    archive.write_bytes(EXAMPLE.data)
    elsewhere = tmp_path / "SHA256SUMS"
    elsewhere.write_text(EXAMPLE.checksum_text.replace(EXAMPLE.sha256[:8], "00000000"))
    code, out, _ = run(["verify", str(archive), "--sha256", str(elsewhere)], capsys)
    assert code == 1
    assert "checksum_mismatch" in out


@pytest.mark.parametrize("which", ["archive", "checksum"])
def test_unreadable_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    archive = write_example(tmp_path)
    args = ["verify", str(tmp_path / "nope.sgf.gz")]
    if which == "checksum":
        args = ["verify", str(archive), "--sha256", str(tmp_path / "nope.sha256")]
    code, out, err = run(args, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("gomoku-archive: error: ")
    assert err.count("\n") == 1


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["verify"])
    assert exit_info.value.code == 2
    assert "ARCHIVE.sgf.gz" in capsys.readouterr().err
