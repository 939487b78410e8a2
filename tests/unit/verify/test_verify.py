"""The verifier's pure core, fed bytes in memory: gzip framing, text layout, every per-game
check, archive order, names and checksums, and its bounds (problem cap, long lines)."""

from __future__ import annotations

import gzip
import hashlib
import struct
import uuid
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.gomoku.game import Color, Move, Result, Termination
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name, checksum_line
from gomoku_archive.profile.stream import ArchiveStream
from gomoku_archive.profile.vocabulary import LONGEST_GAME
from gomoku_archive.profile.writer import ROOT_PROPERTIES, GameRecord, game_line
from gomoku_archive.verify.archive import ArchiveVerifier, Check, ChecksumStatus, VerifyReport
from gomoku_archive.verify.line_check import VALUE_FORMATS, check_line_fast

B, W = Color.BLACK, Color.WHITE


def record(
    n: int, finished: datetime, moves: list[Move], result: Result, end: Termination
) -> GameRecord:
    return GameRecord(
        game_id=uuid.UUID(f"00000000-0000-4000-8000-{n:012d}"),
        started_at=finished.replace(minute=0, second=0),
        finished_at=finished,
        result=result,
        termination=end,
        moves=moves,
        time_control_seconds=60,
        black_rating=1200,
        white_rating=1210,
    )


BLACK_FIVE = [Move(c, x, y) for i in range(5) for c, x, y in ((B, i, 0), (W, i, 14))][:9]
# Line 1: the profile's example; line 2: black makes five on the top edge; line 3: agreed draw.
GAMES = [
    record(
        1,
        datetime(2026, 8, 12, 12, 2, tzinfo=UTC),
        [Move(B, 7, 7), Move(W, 8, 7), Move(B, 8, 8)],
        Result.BLACK_WIN,
        Termination.RESIGNATION,
    ),
    record(
        2, datetime(2026, 8, 12, 13, 0, tzinfo=UTC), BLACK_FIVE, Result.BLACK_WIN, Termination.FIVE
    ),
    record(
        3,
        datetime(2026, 8, 13, 9, 30, tzinfo=UTC),
        [Move(B, 7, 7), Move(W, 8, 8)],
        Result.DRAW,
        Termination.AGREEMENT,
    ),
]
LINES = [game_line(game) for game in GAMES]
TOO_LONG = (
    "XST is more than 31 days before XET: a game lasts at most 31 days (the exporter excludes a "
    "longer one as incomplete)"
)
"""verify's problem for a game longer than the exporter publishes (``writer.LONGEST_GAME``)."""


def gz(text: str | bytes) -> bytes:
    stream = ArchiveStream()
    return stream.write(text.encode() if isinstance(text, str) else text) + stream.finish()


GOOD = gz("".join(LINES))


def verify(data: bytes, *, chunk: int | None = None, **options: object) -> VerifyReport:
    verifier = ArchiveVerifier(**options)  # type: ignore[arg-type]
    step = chunk or max(1, len(data))
    for start in range(0, len(data), step):
        verifier.feed(data[start : start + step])
    return verifier.finish()


def found(report: VerifyReport) -> list[tuple[int, Check]]:
    return [(p.line, p.check) for p in report.problems]


def with_lines(*lines: str) -> bytes:
    return gz("".join(lines))


def edit(line: int, old: str, new: str) -> bytes:
    """The good archive with one replacement made in line ``line`` (1-based)."""
    lines = list(LINES)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return with_lines(*lines)


# --- the good archive -------------------------------------------------------------------------


def test_a_good_archive_passes() -> None:
    report = verify(GOOD)
    assert report.ok, report.problems
    assert report.games == 3
    assert report.terminations == {
        "FIVE": 1,
        "RESIGNATION": 1,
        "TIMEOUT": 0,
        "BOARD_FULL": 0,
        "AGREEMENT": 1,
    }
    assert report.sha256 == hashlib.sha256(GOOD).hexdigest()
    assert report.compressed_bytes == len(GOOD)
    assert report.uncompressed_bytes == len("".join(LINES).encode())
    assert report.checksum is ChecksumStatus.ABSENT
    assert report.notes == ("no checksum file: the SHA-256 was not compared with one",)


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_chunk_sizes_do_not_matter(chunk: int) -> None:
    bad = edit(2, "PB[Black]", "")
    assert verify(bad, chunk=chunk) == verify(bad)
    assert verify(GOOD, chunk=chunk).ok


def test_an_empty_archive_is_valid() -> None:
    report = verify(gz(b""))
    assert report.ok
    assert report.games == 0


def test_with_its_name_and_checksum_file() -> None:
    digest = hashlib.sha256(GOOD).hexdigest()
    name = archive_file_name(Month(2026, 8), digest)
    report = verify(GOOD, file_name=name, checksum_file=checksum_line(name, digest).encode())
    assert report.ok
    assert report.checksum is ChecksumStatus.VERIFIED
    assert report.notes == ()
    assert report.as_json()["checksum"] == "verified"


# --- names and checksums ----------------------------------------------------------------------

DIGEST = hashlib.sha256(GOOD).hexdigest()
NAME = archive_file_name(Month(2026, 8), DIGEST)


@pytest.mark.parametrize(
    ("checksum", "check", "status"),
    [
        (f"{'0' * 64}  {NAME}\n", Check.CHECKSUM_MISMATCH, ChecksumStatus.MISMATCH),
        (f"{DIGEST}  other.sgf.gz\n", Check.CHECKSUM_NAME, ChecksumStatus.VERIFIED),
        (f"{DIGEST} {NAME}\n", Check.CHECKSUM_FILE, ChecksumStatus.MALFORMED),
        (f"{DIGEST}  {NAME}", Check.CHECKSUM_FILE, ChecksumStatus.MALFORMED),
        (f"{DIGEST.upper()}  {NAME}\n", Check.CHECKSUM_FILE, ChecksumStatus.MALFORMED),
        (f"{DIGEST}  {NAME}\r\n", Check.CHECKSUM_FILE, ChecksumStatus.MALFORMED),
    ],
)
def test_checksum_file_problems(checksum: str, check: Check, status: ChecksumStatus) -> None:
    report = verify(GOOD, file_name=NAME, checksum_file=checksum.encode())
    assert found(report) == [(0, check)]
    assert report.checksum is status


def test_a_checksum_file_that_is_not_text() -> None:
    report = verify(GOOD, file_name=NAME, checksum_file=b"\xff" * 70)
    assert found(report) == [(0, Check.CHECKSUM_FILE)]


def test_wrong_hash_prefix_in_the_name() -> None:
    report = verify(
        GOOD, file_name=archive_file_name(Month(2026, 8), "0123456789abcdef" + "0" * 48)
    )
    assert found(report) == [(0, Check.FILE_NAME_HASH)]


def test_games_outside_the_month_of_the_name() -> None:
    report = verify(GOOD, file_name=archive_file_name(Month(2026, 9), DIGEST))
    assert found(report) == [
        (1, Check.OUTSIDE_MONTH),
        (2, Check.OUTSIDE_MONTH),
        (3, Check.OUTSIDE_MONTH),
    ]


@pytest.mark.parametrize("month", ["2026-13", "2026-00", "0000-08", "9999-08"])
def test_an_impossible_month_in_a_well_formed_name_is_a_problem_of_the_file(month: str) -> None:
    """A name of the right shape whose month cannot exist (or is beyond the archive's last,
    9998-12) is one problem of the file, its hash prefix still checked; it used to raise
    AttributeError from the verifier's constructor."""
    report = verify(GOOD, file_name=f"gomoku-party-{month}-{DIGEST[:16]}.sgf.gz")
    assert found(report) == [(0, Check.FILE_NAME_MONTH)]
    assert report.problems[0].message == (
        f"{month} in the name is no month of the archive (0001-01 to 9998-12)"
    )
    assert report.games == 3
    wrong_hash = verify(GOOD, file_name=f"gomoku-party-{month}-{'0' * 16}.sgf.gz")
    assert found(wrong_hash) == [(0, Check.FILE_NAME_MONTH), (0, Check.FILE_NAME_HASH)]


def test_other_names_skip_the_name_checks_with_a_note() -> None:
    report = verify(GOOD, file_name="august.sgf.gz")
    assert report.ok
    assert any("does not follow" in note for note in report.notes)


# --- gzip framing -----------------------------------------------------------------------------


def set_header(data: bytes, flags: int, extra: bytes = b"", mtime: int = 0) -> bytes:
    return data[:3] + bytes([flags]) + struct.pack("<I", mtime) + data[8:10] + extra + data[10:]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(set_header(GOOD, 0, mtime=1_786_000_000), [Check.GZIP_MTIME], id="mtime"),
        pytest.param(set_header(GOOD, 0x08, b"games.sgf\0"), [Check.GZIP_FLAGS], id="file-name"),
        pytest.param(set_header(GOOD, 0x10, b"hello\0"), [Check.GZIP_FLAGS], id="comment"),
        pytest.param(set_header(GOOD, 0x04, b"\x02\x00ab"), [Check.GZIP_FLAGS], id="extra"),
        pytest.param(b"", [Check.GZIP_HEADER], id="empty-file"),
        pytest.param(b"(;FF[4])\n", [Check.GZIP_HEADER], id="not-gzip"),
        pytest.param(GOOD[:2] + b"\x07" + GOOD[3:], [Check.GZIP_HEADER], id="not-deflate"),
        pytest.param(set_header(GOOD, 0x20), [Check.GZIP_HEADER], id="reserved-flag"),
        pytest.param(GOOD[:-5], [Check.GZIP_TRUNCATED], id="truncated-trailer"),
        pytest.param(GOOD[:40], [Check.GZIP_TRUNCATED], id="truncated-data"),
        pytest.param(GOOD + GOOD, [Check.GZIP_MEMBERS], id="two-members"),
        pytest.param(GOOD + b"\0\0\0", [Check.TRAILING_DATA], id="trailing-zeros"),
        pytest.param(GOOD[:-8] + b"\0\0\0\0" + GOOD[-4:], [Check.GZIP_CRC], id="crc"),
        pytest.param(GOOD[:-4] + b"\1\0\0\0", [Check.GZIP_SIZE], id="isize"),
        pytest.param(GOOD[:10] + b"\xff" * 30 + GOOD[40:], [Check.GZIP_DATA], id="corrupt"),
        pytest.param(set_header(GOOD, 0x02, b"\0\0"), [Check.GZIP_HEADER], id="bad-header-crc"),
    ],
)
def test_gzip_framing(data: bytes, expected: list[Check]) -> None:
    report = verify(data)
    assert [check for _, check in found(report)] == expected
    assert all(line == 0 for line, _ in found(report))


def with_header_crc(data: bytes) -> bytes:
    header = set_header(data, 0x02)[:10]
    crc = (zlib.crc32(header) & 0xFFFF).to_bytes(2, "little")
    return header + crc + data[10:]


# The profile fixes MTIME (0) and the absence of a file name, nothing else in the header: another
# gzip's XFL (its level), OS, FTEXT or a header CRC that checks out make a valid profile file,
# which verify passes with a note saying this exporter did not write it.
@pytest.mark.parametrize(
    ("data", "note"),
    [
        pytest.param(GOOD[:9] + b"\x03" + GOOD[10:], "OS byte is 3", id="os-unix"),
        pytest.param(GOOD[:9] + b"\x00" + GOOD[10:], "OS byte is 0", id="os-fat"),
        pytest.param(GOOD[:8] + b"\x02" + GOOD[9:], "XFL byte is 2", id="xfl-best"),
        pytest.param(GOOD[:8] + b"\x04" + GOOD[9:], "XFL byte is 4", id="xfl-fastest"),
        pytest.param(set_header(GOOD, 0x01), "sets FTEXT", id="ftext"),
        pytest.param(with_header_crc(GOOD), "carries a header CRC", id="header-crc"),
    ],
)
def test_another_gzips_header_bytes_are_notes(data: bytes, note: str) -> None:
    report = verify(data)
    assert report.ok, report.problems
    assert [n for n in report.notes if "gzip" in n] == [next(n for n in report.notes if note in n)]
    assert "not written by this exporter" in report.notes[0]


@pytest.mark.parametrize("level", range(1, 10))
@pytest.mark.parametrize("os_byte", [0, 3, 255])
def test_a_file_from_another_gzip_at_any_level_is_a_valid_profile_file(
    level: int, os_byte: int
) -> None:
    text = gzip.decompress(GOOD)
    other = bytearray(gzip.compress(text, compresslevel=level, mtime=0))
    other[9] = os_byte  # what gzip on another system writes
    report = verify(bytes(other))
    assert report.ok, report.problems
    assert report.games == len(LINES)


def test_header_fields_split_across_chunks_are_read() -> None:
    fields = set_header(GOOD, 0x08 | 0x10 | 0x04 | 0x02, b"\x02\x00ab" + b"name\0" + b"note\0")
    crc = (zlib.crc32(fields[: 10 + 4 + 5 + 5]) & 0xFFFF).to_bytes(2, "little")
    data = fields[: 10 + 4 + 5 + 5] + crc + fields[10 + 4 + 5 + 5 :]
    assert verify(data, chunk=1) == verify(data)
    assert found(verify(data)) == [(0, Check.GZIP_FLAGS)] * 3
    assert verify(data).notes[0].startswith("the gzip header carries a header CRC")


# --- text layout ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(b"\xef\xbb\xbf" + "".join(LINES).encode(), [(1, Check.BOM)], id="bom"),
        pytest.param(
            "".join(LINES).replace("\n", "\r\n").encode(),
            [(1, Check.CR), (2, Check.CR), (3, Check.CR)],
            id="crlf",
        ),
        pytest.param((LINES[0] + "\n" + LINES[1]).encode(), [(2, Check.BLANK_LINE)], id="blank"),
        pytest.param(("".join(LINES) + "\n").encode(), [(4, Check.BLANK_LINE)], id="blank-end"),
        pytest.param(("".join(LINES))[:-1].encode(), [(3, Check.NO_FINAL_LF)], id="no-final-lf"),
        pytest.param(
            (LINES[0] + LINES[1].replace("PB[Black]", "PB[Bl\udcffck]")).encode(
                "utf-8", "surrogateescape"
            ),
            [(2, Check.NOT_UTF8)],
            id="latin-1-byte",
        ),
        pytest.param((" " + LINES[0]).encode(), [(1, Check.NOT_ONE_GAME)], id="text-before"),
        pytest.param(
            (LINES[0][:-1] + LINES[1]).encode(), [(1, Check.NOT_ONE_GAME)], id="two-trees"
        ),
        pytest.param(b"(;FF[4)\n", [(1, Check.SGF_SYNTAX)], id="unclosed-value"),
    ],
)
def test_text_layout(text: bytes, expected: list[tuple[int, Check]]) -> None:
    assert found(verify(gz(text))) == expected


def test_long_lines_are_reported_and_skipped_not_held() -> None:
    huge = "(;" + "C[" + "x" * 5000 + "]" + ")\n"
    report = verify(gz(LINES[0] + huge + LINES[1]), max_line_bytes=1000, chunk=300)
    assert found(report) == [(2, Check.LINE_TOO_LONG)]
    assert report.games == 2


def test_problems_are_capped_but_counted() -> None:
    report = verify(gz("\n" * 50 + "".join(LINES)), max_listed=20)
    assert report.problem_count == 50
    assert [line for line, _ in found(report)] == list(range(1, 21))
    assert not report.ok


def test_file_level_problems_are_listed_first_even_when_the_cap_is_full() -> None:
    report = verify(gz("\n" * 30) + b"junk", max_listed=5)
    assert found(report)[0] == (0, Check.TRAILING_DATA)
    assert [line for line, _ in found(report)[1:]] == [1, 2, 3, 4]
    assert report.problem_count == 31


def test_blank_lines_are_counted_one_by_one_whatever_the_chunks() -> None:
    text = LINES[0] + "\n" * 1000 + LINES[1] + "\n\n" + LINES[2]
    for chunk in (None, 1, 7, 300):
        report = verify(gz(text), chunk=chunk, max_listed=3)
        assert report.problem_count == 1002
        assert found(report) == [(line, Check.BLANK_LINE) for line in (2, 3, 4)]
        assert report.games == 3


def test_after_too_many_problems_the_text_is_not_read_but_the_framing_is() -> None:
    bad_crc = gz("x\n" * 30 + "\n" * 30 + "".join(LINES))
    bad_crc = bad_crc[:-8] + b"\0\0\0\0" + bad_crc[-4:]
    report = verify(bad_crc, max_problems=10, max_listed=5)
    assert found(report) == [
        (0, Check.TOO_MANY_PROBLEMS),
        (0, Check.GZIP_CRC),
        (1, Check.NOT_ONE_GAME),
        (2, Check.NOT_ONE_GAME),
        (3, Check.NOT_ONE_GAME),
    ]
    assert report.problems[0].message == (
        "stopped after 10 problems: the text from line 11 on was not checked (its gzip framing was)"
    )
    assert report.problem_count == 12
    assert report.games == 0
    blank = verify(gz("\n" * 50 + "".join(LINES)), max_problems=10, max_listed=2)
    assert found(blank) == [(0, Check.TOO_MANY_PROBLEMS), (1, Check.BLANK_LINE)]
    assert blank.problem_count == 11
    assert "from line 11 on" in blank.problems[0].message


# --- one game ---------------------------------------------------------------------------------

GAME_CASES = [
    pytest.param(1, "PB[Black]", "", Check.MISSING_PROPERTY, id="missing-PB"),
    pytest.param(1, "XER[RESIGNATION]", "", Check.MISSING_PROPERTY, id="missing-XER"),
    pytest.param(1, "PB[Black]PW[White]", "PW[White]PB[Black]", Check.PROPERTY_ORDER, id="order"),
    pytest.param(1, "PB[Black]", "PB[Black]PB[Black]", Check.REPEATED_PROPERTY, id="repeated"),
    pytest.param(1, "XRT[rated]", "XRT[rated]XYZ[1]", Check.UNEXPECTED_PROPERTY, id="unknown"),
    pytest.param(1, "XRT[rated]", "XRT[rated]B[aa]", Check.UNEXPECTED_PROPERTY, id="root-move"),
    pytest.param(1, "FF[4]", "FF[3]", Check.PROPERTY_VALUE, id="FF3"),
    pytest.param(1, "PB[Black]", "PB[Alice]", Check.PROPERTY_VALUE, id="player-name"),
    pytest.param(1, "PB[Black]", "PB[Black][Blue]", Check.PROPERTY_VALUE, id="PB-two-values"),
    pytest.param(
        1,
        "GN[00000000-0000-4000-8000-0000",
        "GN[00000000-0000-4000-8000-000A",
        Check.PROPERTY_VALUE,
        id="GN-upper",
    ),
    pytest.param(1, "BR[1200 Elo]", "BR[1200.5 Elo]", Check.PROPERTY_VALUE, id="BR-decimal"),
    pytest.param(1, "WR[1210 Elo]", "WR[01210 Elo]", Check.PROPERTY_VALUE, id="WR-leading-zero"),
    pytest.param(1, "XTC[60]", "XTC[0]", Check.PROPERTY_VALUE, id="XTC-zero"),
    pytest.param(1, "RE[B+R]", "RE[B+Resign]", Check.PROPERTY_VALUE, id="RE-long"),
    pytest.param(1, "XER[RESIGNATION]", "XER[resignation]", Check.PROPERTY_VALUE, id="XER-case"),
    pytest.param(
        1,
        "XST[2026-08-12T12:00:00Z]",
        "XST[2026-08-12 12:00:00]",
        Check.PROPERTY_VALUE,
        id="XST-format",
    ),
    pytest.param(
        1,
        "XST[2026-08-12T12:00:00Z]",
        "XST[2026-02-30T12:00:00Z]",
        Check.PROPERTY_VALUE,
        id="XST-no-date",
    ),
    pytest.param(
        1,
        "XST[2026-08-12T12:00:00Z]",
        "XST[2026-08-12T12:02:01Z]",
        Check.PROPERTY_VALUE,
        id="XST-after-XET",
    ),
    pytest.param(
        1,
        "XST[2026-08-12T12:00:00Z]",
        "XST[2026-08-13T12:00:00Z]",
        Check.PROPERTY_VALUE,
        id="XST-a-day-after-XET",
    ),
    pytest.param(
        3,
        "XET[2026-08-13T09:30:00Z]",
        "XET[9026-08-13T09:30:00Z]",
        Check.PROPERTY_VALUE,
        id="XET-far-future",
    ),
    pytest.param(1, "DT[2026-08-12]", "DT[2026-08-11]", Check.PROPERTY_VALUE, id="DT-wrong"),
    pytest.param(1, "DT[2026-08-12]", "DT[12 Aug 2026]", Check.PROPERTY_VALUE, id="DT-format"),
    pytest.param(1, ")\n", "(;W[aa])(;W[bb]))\n", Check.VARIATION, id="variation"),
    pytest.param(1, ";W[ih]", ";W[ih]C[good move]", Check.COMMENT, id="comment"),
    pytest.param(1, "XRT[rated]", "XRT[rated]C[hello]", Check.COMMENT, id="root-comment"),
    pytest.param(1, "XER[RESIGNATION]", "XER[RESIGNATION]AB[aa]", Check.SETUP, id="setup-root"),
    pytest.param(1, ";W[ih]", ";W[ih]AE[hh]", Check.SETUP, id="setup-move"),
    pytest.param(1, ";W[ih]", ";W[ih]AddWhite[aa]", Check.SETUP, id="setup-ff3-name"),
    pytest.param(1, ";B[ii])", ";B[ii];W[])", Check.PASS_MOVE, id="pass-empty"),
    pytest.param(1, ";B[ii])", ";B[ii];W[tt])", Check.PASS_MOVE, id="pass-tt"),
    pytest.param(1, ";W[ih]", ";W[ih]B[aa]", Check.MOVE_NODE, id="two-moves"),
    pytest.param(1, ";W[ih]", ";W[ih][aa]", Check.MOVE_NODE, id="two-values"),
    pytest.param(1, ";W[ih]", ";W[IH]", Check.MOVE_NODE, id="uppercase-point"),
    pytest.param(1, ";W[ih]", ";W[ih]TR[aa]", Check.UNEXPECTED_PROPERTY, id="markup"),
    pytest.param(1, ";W[ih]", ";W[ih]Black[aa]", Check.UNEXPECTED_PROPERTY, id="ff3-ident"),
    pytest.param(1, ";B[ii])", ";B[hh])", Check.ILLEGAL_MOVE, id="occupied"),
    pytest.param(1, ";B[ii])", ";W[ii])", Check.ILLEGAL_MOVE, id="turn-order"),
    pytest.param(1, ";B[ii])", ";B[pp])", Check.ILLEGAL_MOVE, id="off-board"),
    pytest.param(1, ";B[hh];W[ih];B[ii])", ")", Check.ILLEGAL_MOVE, id="no-moves"),
    pytest.param(2, ";B[ea])", ";B[ea];W[hh])", Check.ILLEGAL_MOVE, id="after-five"),
    pytest.param(2, "RE[B+]", "RE[W+]", Check.RESULT_MISMATCH, id="wrong-winner"),
    pytest.param(2, "RE[B+]", "RE[B+R]", Check.RESULT_MISMATCH, id="RE-XER-pair"),
    pytest.param(2, "XER[FIVE]", "XER[RESIGNATION]", Check.RESULT_MISMATCH, id="resign-five"),
    pytest.param(1, "XER[RESIGNATION]", "XER[FIVE]", Check.RESULT_MISMATCH, id="five-no-five"),
    pytest.param(3, "XER[AGREEMENT]", "XER[BOARD_FULL]", Check.RESULT_MISMATCH, id="not-full"),
]


@pytest.mark.parametrize(("line", "old", "new", "check"), GAME_CASES)
def test_game_problems(line: int, old: str, new: str, check: Check) -> None:
    report = verify(edit(line, old, new))
    assert found(report) == [(line, check)], report.problems
    assert report.games == 3


def test_problem_messages_say_what_is_wrong() -> None:
    occupied = verify(edit(1, ";B[ii])", ";B[hh])")).problems[0].message
    assert occupied == "occupied: move 3 plays on occupied hh"
    pair = verify(edit(2, "RE[B+]", "RE[B+R]")).problems[0].message
    assert pair == "RE[B+R] cannot go with XER[FIVE]"
    dt = verify(edit(1, "DT[2026-08-12]", "DT[2026-08-11]")).problems[0].message
    assert dt == "DT[2026-08-11] should be DT[2026-08-12]"
    reversed_times = verify(edit(1, "XST[2026-08-12T12:00:00Z]", "XST[2026-08-13T12:00:00Z]"))
    assert [p.message for p in reversed_times.problems] == ["XST is after XET"]
    far = verify(edit(3, "XET[2026-08-13T09:30:00Z]", "XET[9026-08-13T09:30:00Z]"))
    assert [p.message for p in far.problems] == [TOO_LONG]
    os_byte = verify(GOOD[:9] + b"\x03" + GOOD[10:]).notes[0]
    assert os_byte == (
        "the gzip header's OS byte is 3 (not written by this exporter, which writes 255, unknown)"
    )


def test_every_varying_root_property_has_a_format() -> None:
    varying = {p.ident for p in ROOT_PROPERTIES if p.fixed is None}
    assert varying == set(VALUE_FORMATS)
    for prop in ROOT_PROPERTIES:
        if prop.fixed is None:
            assert VALUE_FORMATS[prop.ident][0].fullmatch(prop.example), prop.ident


# --- the archive ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("longer", "problems"),
    [
        pytest.param(timedelta(0), [], id="31-days"),
        pytest.param(timedelta(seconds=1), [(3, Check.PROPERTY_VALUE)], id="31-days-1s"),
        pytest.param(timedelta(days=400), [(3, Check.PROPERTY_VALUE)], id="a-year"),
    ],
)
def test_a_game_longer_than_the_exporter_allows_is_a_problem(
    longer: timedelta, problems: list[tuple[int, Check]]
) -> None:
    """The exporter excludes a game whose start is more than LONGEST_GAME before its finish
    (``incomplete``); the profile says so of XET. Such a line, its DT right, is a problem of
    that game, found by the fast path's refusal and the full path alike."""
    last = GAMES[2]
    started = last.finished_at - LONGEST_GAME - longer
    line = game_line(replace(last, started_at=started))
    report = verify(with_lines(LINES[0], LINES[1], line))
    assert found(report) == problems
    assert [p.message for p in report.problems] == [TOO_LONG] * len(problems)
    assert (check_line_fast(line.rstrip("\n")) is None) is bool(problems)


def test_games_out_of_order() -> None:
    report = verify(with_lines(LINES[1], LINES[0], LINES[2]))
    assert found(report) == [(2, Check.ORDER)]
    assert "line 1" in report.problems[0].message


def test_same_second_games_are_ordered_by_gn() -> None:
    twin = LINES[0].replace("-000000000001]", "-000000000000]")
    assert found(verify(with_lines(twin, *LINES))) == []
    assert found(verify(with_lines(LINES[0], twin, *LINES[1:]))) == [(2, Check.ORDER)]


def test_duplicate_gn_in_the_same_second() -> None:
    report = verify(with_lines(LINES[0], *LINES))
    assert found(report) == [(2, Check.DUPLICATE_GN)]
    assert report.problems[0].message == (
        "GN[00000000-0000-4000-8000-000000000001] already appears on line 1"
    )


def test_duplicate_gn_far_apart() -> None:
    third = LINES[2].replace("-000000000003]", "-000000000001]")
    report = verify(with_lines(LINES[0], LINES[1], third))
    assert found(report) == [(3, Check.DUPLICATE_GN)]


def test_the_json_report() -> None:
    document = verify(edit(2, "RE[B+]", "RE[W+]")).as_json()
    assert document["ok"] is False
    assert document["problemCount"] == 1
    assert document["problems"] == [
        {
            "line": 2,
            "check": "result_mismatch",
            "message": "RE/XER and board: the five was made by the last mover, "
            "but the result is WHITE_WIN",
        }
    ]
    assert document["profile"] == "gomoku-party-sgf-1"
