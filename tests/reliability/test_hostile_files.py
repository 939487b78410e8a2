"""Hostile files, generated with hypothesis, through the parser, the SGF checker and the archive
verifier: truncated, bit-flipped, non-gzip and wrong-header archives, SGF text cut or flipped
anywhere, and games whose XST/XET are reversed or far in the future. Every one must end with a
result (a report, or for the parser an ``SgfParseError``), never another exception, and fast.
A sample of them also goes through the command line: a documented exit code, no traceback."""

from __future__ import annotations

import contextlib
import gzip
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gomoku_archive.profile.stream import ArchiveStream
from gomoku_archive.sgf import SgfParseError, check_sgf, parse
from gomoku_archive.verify.archive import ArchiveVerifier
from gomoku_archive.verify.report import VerifyReport
from tests.reliability.hostile_support import run_cli
from tests.support import bundled_archive_path

ARCHIVE = bundled_archive_path().read_bytes()
TEXT = gzip.decompress(ARCHIVE)
LINES = TEXT.splitlines(keepends=True)
EXAMPLES = 60
SECONDS_PER_FILE = 2.0
"""CPU seconds (this thread's): a bound against runaway work that a loaded machine, which
stretches wall time (2.02 s once in CI), does not trip."""
seen: dict[str, list[float]] = {}


def timed(kind: str, run: Callable[[], object]) -> None:
    started = time.thread_time()
    run()
    elapsed = time.thread_time() - started
    seen.setdefault(kind, []).append(elapsed)
    assert elapsed < SECONDS_PER_FILE, f"{kind}: {elapsed:.2f} s"


def verify(data: bytes, chunk: int = 65536) -> VerifyReport:
    verifier = ArchiveVerifier()
    for start in range(0, len(data), chunk):
        verifier.feed(data[start : start + chunk])
    return verifier.finish()


def gz(text: bytes) -> bytes:
    stream = ArchiveStream()
    return stream.write(text) + stream.finish()


def flip(data: bytes, positions: list[int]) -> bytes:
    out = bytearray(data)
    for position in positions:
        out[position % (len(out) * 8) // 8] ^= 1 << (position % 8)
    return bytes(out)


hostile_archives = st.one_of(
    st.integers(0, len(ARCHIVE) - 1).map(lambda n: ("truncated", ARCHIVE[:n])),
    st.lists(st.integers(0, len(ARCHIVE) * 8 - 1), min_size=1, max_size=8).map(
        lambda bits: ("bit-flipped", flip(ARCHIVE, bits))
    ),
    st.binary(min_size=2, max_size=10).map(lambda head: ("wrong-header", head + ARCHIVE[10:])),
    st.binary(min_size=6, max_size=6).map(
        lambda fields: ("wrong-header-fields", ARCHIVE[:4] + fields + ARCHIVE[10:])
    ),
    st.binary(max_size=4096).map(lambda junk: ("not-gzip", junk)),
    st.sampled_from([TEXT[:5000], b"(;FF[4])\n", b"\x1f\x8b"]).map(lambda t: ("not-gzip", t)),
    st.binary(min_size=1, max_size=64).map(lambda junk: ("trailing-junk", ARCHIVE + junk)),
)


FTEXT = 0x01


def differs_only_in_noted_fields(data: bytes) -> bool:
    """``data`` is ``ARCHIVE`` but for what verify reports as a note, not a problem: the gzip
    header's FTEXT flag, XFL and OS bytes (docs/downloaders.md, "gzip header")."""
    return (
        len(data) == len(ARCHIVE)
        and data[:3] == ARCHIVE[:3]
        and data[3] & ~FTEXT == ARCHIVE[3] & ~FTEXT
        and data[4:8] == ARCHIVE[4:8]
        and data[10:] == ARCHIVE[10:]
    )


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=hostile_archives, chunk=st.sampled_from([1 << 16, 7, 1000]))
def test_verify_answers_every_hostile_archive(case: tuple[str, bytes], chunk: int) -> None:
    kind, data = case
    report: list[VerifyReport] = []
    timed(f"verify {kind}", lambda: report.append(verify(data, chunk)))
    assert not report[0].ok or differs_only_in_noted_fields(data)
    assert report[0].problems or report[0].ok


def instant(year: int, rest: str) -> str:
    return f"{year:04d}-{rest}"


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    line=st.integers(0, len(LINES) - 1),
    start_year=st.integers(1, 9999),
    end_year=st.integers(1, 9999),
    swap=st.booleans(),
)
def test_verify_answers_reversed_and_far_future_times(
    line: int, start_year: int, end_year: int, swap: bool
) -> None:
    text = LINES[line].decode()
    xst = re.search(r"XST\[(\d{4})-([^\]]*)\]", text)
    xet = re.search(r"XET\[(\d{4})-([^\]]*)\]", text)
    assert xst and xet
    new_start, new_end = instant(start_year, xst[2]), instant(end_year, xet[2])
    if swap:
        new_start, new_end = new_end, new_start
    text = text.replace(xst[0], f"XST[{new_start}]").replace(xet[0], f"XET[{new_end}]")
    report: list[VerifyReport] = []
    timed("verify times", lambda: report.append(verify(gz(text.encode()))))
    if new_start > new_end:
        assert any(p.message == "XST is after XET" for p in report[0].problems)


hostile_sgf = st.one_of(
    st.integers(0, len(TEXT)).map(lambda n: ("sgf truncated", TEXT[:n])),
    st.lists(st.integers(0, len(TEXT) * 8 - 1), min_size=1, max_size=16).map(
        lambda bits: ("sgf bit-flipped", flip(TEXT, bits))
    ),
    st.binary(max_size=2000).map(lambda junk: ("sgf random bytes", junk)),
    st.text(alphabet="()[];\\:BWABCGMSZ\n\r é", max_size=300).map(
        lambda t: ("sgf token soup", t.encode())
    ),
)


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=hostile_sgf)
def test_the_parser_and_checker_answer_every_hostile_sgf(case: tuple[str, bytes]) -> None:
    kind, data = case

    def parse_only() -> None:
        with contextlib.suppress(SgfParseError):  # the one exception the parser may raise
            parse(data)

    timed(f"parse {kind.removeprefix('sgf ')}", parse_only)
    timed(f"check {kind.removeprefix('sgf ')}", lambda: check_sgf(data))


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    samples = {
        "truncated.sgf.gz": ARCHIVE[: len(ARCHIVE) // 2],
        "bit-flipped.sgf.gz": flip(ARCHIVE, [8 * 5000 + 3, 8 * 9000]),
        # (another OS byte is a valid profile file, a note; a set MTIME is a problem)
        "mtime.sgf.gz": ARCHIVE[:4] + b"\x01\x00\x00\x00" + ARCHIVE[8:],
        "not-gzip.sgf.gz": TEXT[:3000],
        "empty.sgf.gz": b"",
        "reversed.sgf.gz": gz(re.sub(rb"XST\[2026", b"XST[2027", LINES[0])),
        "far-future.sgf.gz": gz(LINES[-1].replace(b"XET[2026-", b"XET[9026-")),
    }
    for name, data in samples.items():
        (folder / name).write_bytes(data)
        (folder / (name + ".sgf")).write_bytes(TEXT[: len(data)] if data else b"")
    return folder


@pytest.mark.slow
def test_the_command_line_answers_hostile_files_clearly(hostile_folder: Path) -> None:
    outcomes = []
    for path in sorted(hostile_folder.iterdir()):
        command = ("sgf", "check") if path.suffix == ".sgf" else ("verify",)
        outcome = run_cli(*command, str(path), timeout=30)
        outcomes.append(outcome)
        assert outcome.clear, (path.name, outcome.stderr)
        assert outcome.returncode != 0 or command[0] == "sgf", path.name
        assert outcome.stdout.strip() or outcome.stderr.strip(), path.name
    print(
        f"command line: {len(outcomes)} hostile files through verify and sgf check, "
        f"exit codes {sorted({o.returncode for o in outcomes})}, 0 tracebacks, "
        f"max {max(o.seconds for o in outcomes):.1f} s"
    )


def test_zz_report() -> None:
    total = sum(len(times) for times in seen.values())
    worst = max((max(times) for times in seen.values()), default=0.0)
    kinds = ", ".join(f"{kind} {len(times)}" for kind, times in sorted(seen.items()))
    print(f"{total} hostile inputs ({kinds}): 0 tracebacks, max {worst:.2f} s of CPU")
