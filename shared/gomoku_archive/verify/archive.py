"""The consumer's check of a downloaded archive against ``gomoku-party-sgf-1``.

``ArchiveVerifier`` is fed the compressed bytes in chunks of any size and produces a
``VerifyReport``; it does no I/O (the ``verify`` command reads the files). It checks:

* the companion checksum file (``<64 hex>  <file name>\\n``) and, when the file name follows
  ``gomoku-party-YYYY-MM-<16 hex>.sgf.gz``, that the 16 hex are the SHA-256's first 16 and that
  every game finished (XET) inside that month (a month no archive can have, such as 2026-13, is
  a problem of the file);
* the gzip framing: a gzip member with deflate and what the profile fixes in its header, MTIME
  0 and no file name (nor a comment, an extra field or a reserved flag, which no profile file
  needs); valid deflate, CRC-32 and ISIZE, exactly one member and nothing after it. Header bytes
  another gzip writes differently from this exporter (XFL, OS, FTEXT, a header CRC that checks
  out) are notes, not problems: a profile file may come from any gzip at any level;
* the text: UTF-8 without a byte-order mark, one game tree per LF-terminated line (no CR, no
  blank line, nothing around the tree);
* each game: the profile's root properties present, in order and well formed (see
  ``profile.writer.ROOT_PROPERTIES``), no variation, comment, setup stone or pass, one
  move per node, XST not after XET nor more than ``LONGEST_GAME`` before it (the exporter's
  rule), a legal replay whose ending agrees with RE and XER;
* the archive: games strictly increasing by (XET, GN), no GN twice.

Memory is bounded: the input is decompressed in blocks, a line longer than ``MAX_LINE_BYTES``
is reported and skipped rather than held, and only the first ``max_listed`` problems are kept
(all are counted). Duplicate detection is the one structure that grows with the archive: 16
bytes and a line number per game (about 20 MB for a million games), compared at the end.

Time is bounded too, for gzip bombs: a run of blank lines is counted in one step, and after
``MAX_PROBLEMS`` problems the text is no longer read (the gzip framing still is, at zlib's
speed), so a gigabyte of bad short lines costs seconds, not a Python step per line.
"""

from __future__ import annotations

import hashlib
import heapq
import re
import struct
import uuid
import zlib
from array import array
from collections.abc import Iterator
from datetime import datetime

from gomoku_archive.errors import InvalidMonth
from gomoku_archive.gomoku.game import Termination
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import ARCHIVE_NAME_PREFIX, ARCHIVE_SUFFIX, NAME_HASH_LENGTH
from gomoku_archive.profile.stream import GZIP_HEADER
from gomoku_archive.sgf import SgfParseError, parse
from gomoku_archive.verify.line_check import GameFacts, check_game, check_line_fast
from gomoku_archive.verify.report import Check, ChecksumStatus, Problem, VerifyReport

MAX_LINE_BYTES = 1024 * 1024
"""Longest accepted game line; a 225-move game is under 2 KiB."""
MAX_LISTED = 20
"""Problems kept for the report by default; the rest are only counted."""
MAX_PROBLEMS = 100_000
"""Problems after which the text is no longer checked; the archive is plainly broken by then."""
_BLANK_RUN = re.compile(rb"\n+")
_OUTPUT_BLOCK = 256 * 1024
_MAX_HEADER_BYTES = 64 * 1024
_BOM = b"\xef\xbb\xbf"
_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT, _FRESERVED = 0x01, 0x02, 0x04, 0x08, 0x10, 0xE0
_FLAG_PROBLEMS = (
    (_FEXTRA, "carries an extra field"),
    (_FNAME, "carries a file name"),
    (_FCOMMENT, "carries a comment"),
)
"""Header flags a profile file must not set: the profile rules out a file name, and the exporter
writes no other metadata. FTEXT and FHCRC are legitimate choices of another gzip (notes)."""


_ARCHIVE_NAME = re.compile(
    re.escape(ARCHIVE_NAME_PREFIX)
    + rf"([0-9]{{4}}-[0-9]{{2}})-([0-9a-f]{{{NAME_HASH_LENGTH}}})"
    + re.escape(ARCHIVE_SUFFIX)
)
_CHECKSUM_LINE = re.compile(r"([0-9a-f]{64})  ([^\r\n]+)\n")


# --- the archive ------------------------------------------------------------------------------


def inflate_blocks(
    inflater: zlib._Decompress, data: bytes | memoryview, limit: int = _OUTPUT_BLOCK
) -> Iterator[bytes]:
    """What ``data`` inflates to, in blocks of at most ``limit`` bytes (a small input can
    inflate to gigabytes), until the input is used up or the deflate stream ends
    (``inflater.eof``; what follows it is in ``inflater.unused_data``)."""
    block = inflater.decompress(data, limit)
    while True:
        if block:
            yield block
        if inflater.eof:
            return
        if inflater.unconsumed_tail:
            block = inflater.decompress(inflater.unconsumed_tail, limit)
        elif len(block) == limit:  # the limit was hit: more output may wait
            block = inflater.decompress(b"", limit)
        else:
            return


class ArchiveVerifier:
    """Checks an archive fed to it as compressed bytes, in chunks of any size."""

    def __init__(
        self,
        *,
        file_name: str | None = None,
        checksum_file: bytes | None = None,
        max_listed: int = MAX_LISTED,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_problems: int = MAX_PROBLEMS,
        plain: bool = False,
    ) -> None:
        """``file_name`` is the archive's base name (enables the name checks);
        ``checksum_file`` the content of its ``.sha256`` file, None when there is none;
        ``plain`` for uncompressed SGF text (the caller looked for gzip's magic bytes): every
        check but the gzip framing's."""
        self._plain = plain
        self._file_name = file_name
        self._checksum_file = checksum_file
        self._max_listed = max_listed
        self._max_line = max_line_bytes
        self._max_problems = max_problems
        self._notes: list[str] = []
        # problems: a max-heap (by line, then arrival) of the first ones, and a count; before
        # the name is read, since a name can be a problem of its own
        self._kept: list[tuple[int, int, Problem]] = []
        self._count = 0
        self._name_hash: str | None = None
        self._month: Month | None = None
        self._read_file_name()
        self._month_bounds: tuple[datetime, datetime] | None = (
            None if self._month is None else (self._month.start, self._month.end)
        )
        # framing
        self._sha = hashlib.sha256()
        self._compressed = 0
        self._header = bytearray()
        self._stage = "header"  # header -> body -> trailer -> after, or dead
        self._inflater = zlib.decompressobj(-15)
        self._trailer = bytearray()
        self._crc = 0
        self._size = 0
        self._after = 0
        # text
        self._line = bytearray()
        self._line_no = 1
        self._skipping = False
        self._text_stopped = False
        # games
        self._games = 0
        self._terminations = dict.fromkeys((t.value for t in Termination), 0)
        self._previous: tuple[datetime, str, int] | None = None
        self._gn_buckets: dict[int, tuple[bytearray, array[int]]] = {}

    # -- input --

    def feed(self, chunk: bytes) -> None:
        """Take the next compressed bytes (or text bytes, when ``plain``)."""
        self._sha.update(chunk)
        self._compressed += len(chunk)
        if self._plain:
            self._size += len(chunk)
            self._take_text(chunk)
            return
        data = memoryview(chunk)
        if self._stage == "header":
            data = self._take_header(data)
        if self._stage == "body" and data:
            data = self._inflate(data)
        if self._stage == "trailer" and data:
            need = 8 - len(self._trailer)
            self._trailer += data[:need]
            data = data[need:]
            if len(self._trailer) == 8:
                self._check_trailer()
                self._stage = "after"
        if self._stage == "after" and data:
            if self._after == 0:
                if bytes(data[:2]) == b"\x1f\x8b":
                    self._problem(0, Check.GZIP_MEMBERS, "a second gzip member follows the first")
                else:
                    self._problem(0, Check.TRAILING_DATA, "bytes follow the gzip member")
            self._after += len(data)

    def finish(self) -> VerifyReport:
        """Check what can only be checked at the end and return the report."""
        if self._plain:
            self._notes.append("plain SGF text, not gzip: the gzip framing was not checked")
            if self._file_name is not None and self._file_name.endswith(".gz"):
                self._problem(
                    0, Check.GZIP_HEADER, "not a gzip file: its text was checked as plain SGF"
                )
            self._end_text()
        else:
            self._finish_framing()
        self._check_duplicates()
        sha256 = self._sha.hexdigest()
        checksum = self._check_checksum(sha256)
        if self._name_hash is not None and self._name_hash != sha256[:NAME_HASH_LENGTH]:
            self._problem(
                0,
                Check.FILE_NAME_HASH,
                f"the name says {self._name_hash}, the SHA-256 starts {sha256[:NAME_HASH_LENGTH]}",
            )
        return VerifyReport(
            file_name=self._file_name,
            sha256=sha256,
            compressed_bytes=self._compressed,
            uncompressed_bytes=self._size,
            games=self._games,
            terminations=dict(self._terminations),
            checksum=checksum,
            problems=tuple(problem for _, _, problem in sorted(self._kept, reverse=True)),
            problem_count=self._count,
            notes=tuple(self._notes),
        )

    def _finish_framing(self) -> None:
        if self._stage == "body":
            self._inflate(memoryview(b""))  # output zlib may still hold back
        if self._stage == "header":
            self._problem(0, Check.GZIP_HEADER, "not a gzip file (no complete header)")
        elif self._stage == "body":
            self._problem(0, Check.GZIP_TRUNCATED, "the compressed data ends early")
        elif self._stage == "trailer":
            self._problem(0, Check.GZIP_TRUNCATED, "the gzip trailer is incomplete")
        if self._stage in ("trailer", "after"):
            self._end_text()

    # -- problems --

    def _problem(self, line: int, check: Check, message: str) -> None:
        self._count += 1
        kept = self._kept
        if len(kept) >= self._max_listed and (not kept or -kept[0][0] <= line):
            return  # it would be dropped at once: no line after the last one kept can stay
        heapq.heappush(self._kept, (-line, -self._count, Problem(line, check, message)))
        if len(self._kept) > self._max_listed:
            heapq.heappop(self._kept)  # the latest line seen: keep the first ones

    # -- names and checksums --

    def _read_file_name(self) -> None:
        if self._file_name is None:
            return
        match = _ARCHIVE_NAME.fullmatch(self._file_name)
        if match is None:
            self._notes.append(
                "the file name does not follow gomoku-party-YYYY-MM-<16 hex>.sgf.gz: "
                "its hash prefix and month were not checked"
            )
            return
        self._name_hash = match.group(2)
        try:
            self._month = Month.parse(match.group(1))
        except InvalidMonth:
            # Well formed but impossible (2026-13, 0000-01, or 9999-xx, whose end the archive's
            # months cannot reach): a problem of this file; its games' month is not checked.
            self._problem(
                0,
                Check.FILE_NAME_MONTH,
                f"{match.group(1)} in the name is no month of the archive (0001-01 to 9998-12)",
            )

    def _check_checksum(self, sha256: str) -> ChecksumStatus:
        if self._checksum_file is None:
            self._notes.append("no checksum file: the SHA-256 was not compared with one")
            return ChecksumStatus.ABSENT
        try:
            match = _CHECKSUM_LINE.fullmatch(self._checksum_file.decode("utf-8"))
        except UnicodeDecodeError:
            match = None
        if match is None:
            self._problem(
                0, Check.CHECKSUM_FILE, "the checksum file is not '<64 hex>  <file name>\\n'"
            )
            return ChecksumStatus.MALFORMED
        if self._file_name is not None and match.group(2) != self._file_name:
            self._problem(0, Check.CHECKSUM_NAME, f"the checksum file names {match.group(2)!r}")
        if match.group(1) != sha256:
            self._problem(0, Check.CHECKSUM_MISMATCH, "the SHA-256 differs from the checksum file")
            return ChecksumStatus.MISMATCH
        return ChecksumStatus.VERIFIED

    # -- gzip framing --

    def _take_header(self, data: memoryview) -> memoryview:
        """Gather and check the gzip header; returns the bytes after it."""
        self._header += data
        header = self._header
        if len(header) < 10:
            return data[len(data) :]
        if header[:3] != b"\x1f\x8b\x08" or header[3] & _FRESERVED:
            self._problem(0, Check.GZIP_HEADER, "not a gzip member with deflate (1f 8b 08)")
            self._stage = "dead"
            return data[len(data) :]
        end = self._header_end(header)
        if end is None:
            if len(header) > _MAX_HEADER_BYTES:
                self._problem(0, Check.GZIP_HEADER, "the gzip header does not end")
                self._stage = "dead"
            return data[len(data) :]
        self._check_fixed_header_fields(header, end)
        rest = bytes(header[end:])
        self._header = bytearray()
        self._stage = "body"
        return memoryview(rest)

    def _check_fixed_header_fields(self, header: bytearray, end: int) -> None:
        """What the profile fixes in the header (``header[:end]``): MTIME 0 and no file name,
        and no comment or extra field, each field that differs one problem. What another gzip
        may write differently from ``GZIP_HEADER`` without breaking the profile (XFL, which
        records the compression level; OS; FTEXT; a header CRC) is a note."""
        flags = header[3]
        if header[4:8] != b"\0\0\0\0":
            mtime = struct.unpack("<I", header[4:8])[0]
            self._problem(0, Check.GZIP_MTIME, f"the gzip MTIME is {mtime}, not 0")
        for flag, what in _FLAG_PROBLEMS:
            if flags & flag:
                self._problem(0, Check.GZIP_FLAGS, f"the gzip header {what}")
        not_ours = "not written by this exporter"
        xfl, os_byte = header[8], header[9]
        if xfl != GZIP_HEADER[8]:
            self._notes.append(f"the gzip header's XFL byte is {xfl} ({not_ours}, which writes 0)")
        if os_byte != GZIP_HEADER[9]:
            self._notes.append(
                f"the gzip header's OS byte is {os_byte} ({not_ours}, which writes 255, unknown)"
            )
        if flags & _FTEXT:
            self._notes.append(f"the gzip header sets FTEXT ({not_ours})")
        if flags & _FHCRC:
            stored = int.from_bytes(header[end - 2 : end], "little")
            if stored != zlib.crc32(header[: end - 2]) & 0xFFFF:
                self._problem(0, Check.GZIP_HEADER, "the gzip header's CRC does not match it")
            else:
                self._notes.append(f"the gzip header carries a header CRC ({not_ours})")

    @staticmethod
    def _header_end(header: bytearray) -> int | None:
        """Length of the complete header (optional fields included), None if more is needed."""
        flags, at = header[3], 10
        if flags & _FEXTRA:
            if len(header) < at + 2:
                return None
            at += 2 + int.from_bytes(header[at : at + 2], "little")
        for flag in (_FNAME, _FCOMMENT):
            if flags & flag:
                zero = header.find(b"\0", at)
                if zero < 0:
                    return None
                at = zero + 1
        if flags & _FHCRC:
            at += 2
        return at if len(header) >= at else None

    def _inflate(self, data: memoryview) -> memoryview:
        """Decompress in bounded blocks; returns what follows the deflate stream, if it ended."""
        inflater = self._inflater
        try:
            for block in inflate_blocks(inflater, data):
                self._crc = zlib.crc32(block, self._crc)
                self._size += len(block)
                self._take_text(block)
        except zlib.error as exc:
            self._problem(0, Check.GZIP_DATA, f"the compressed data is corrupt ({exc})")
            self._stage = "dead"
            return data[len(data) :]
        if inflater.eof:
            self._stage = "trailer"
            return memoryview(inflater.unused_data)
        return data[len(data) :]

    def _check_trailer(self) -> None:
        crc, size = struct.unpack("<II", self._trailer)
        if crc != self._crc:
            self._problem(0, Check.GZIP_CRC, "the CRC-32 in the trailer does not match the data")
        if size != self._size & 0xFFFFFFFF:
            self._problem(0, Check.GZIP_SIZE, "the size in the trailer does not match the data")

    # -- lines --

    def _take_text(self, block: bytes) -> None:
        if self._text_stopped:
            return
        start = 0
        while True:
            if self._count >= self._max_problems:
                self._stop_text()
                return
            if not self._line and not self._skipping and block.startswith(b"\n", start):
                start = self._blank_lines(block, start)
                continue
            newline = block.find(b"\n", start)
            end = len(block) if newline < 0 else newline
            if not self._skipping:
                if len(self._line) + end - start > self._max_line:
                    self._problem(
                        self._line_no,
                        Check.LINE_TOO_LONG,
                        f"the line is longer than {self._max_line} bytes",
                    )
                    self._line.clear()
                    self._skipping = True
                elif newline >= 0:
                    if self._line:
                        self._line += block[start:end]
                        line = bytes(self._line)
                        self._line.clear()
                    else:
                        line = block[start:end]
                    self._check_line(line)
                else:
                    self._line += block[start:]
            if newline < 0:
                return
            self._skipping = False
            self._line_no += 1
            start = newline + 1

    def _blank_lines(self, block: bytes, start: int) -> int:
        """Report the run of blank lines at ``start`` in one step; returns where it ends.

        Each blank line is still a problem of its own (counted, and listed if among the first),
        but the run costs one regex match instead of a Python step per line: 1 GiB of newlines
        took over half an hour the other way."""
        run = _BLANK_RUN.match(block, start)
        end = run.end() if run else start
        count = min(end - start, self._max_problems - self._count)
        listed = min(count, self._max_listed)
        for line in range(self._line_no, self._line_no + listed):
            self._problem(line, Check.BLANK_LINE, "blank line")
        self._count += count - listed
        self._line_no += count
        return start + count

    def _stop_text(self) -> None:
        self._text_stopped = True
        self._line.clear()
        self._problem(
            0,
            Check.TOO_MANY_PROBLEMS,
            f"stopped after {self._count:,} problems: the text from line {self._line_no:,} on "
            "was not checked (its gzip framing was)",
        )

    def _end_text(self) -> None:
        if self._text_stopped:
            return
        if self._line:
            self._problem(self._line_no, Check.NO_FINAL_LF, "the last line does not end with LF")
            self._check_line(bytes(self._line))
            self._line.clear()

    def _check_line(self, line: bytes) -> None:
        number = self._line_no
        if number == 1 and line.startswith(_BOM):
            self._problem(number, Check.BOM, "the text starts with a byte-order mark")
            line = line[len(_BOM) :]
        if b"\r" in line:
            self._problem(number, Check.CR, "the line contains a carriage return (CR)")
            line = line.replace(b"\r", b"")
        if not line:
            self._problem(number, Check.BLANK_LINE, "blank line")
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._problem(number, Check.NOT_UTF8, f"not UTF-8 at byte {exc.start + 1}")
            return
        if not (text.startswith("(") and text.endswith(")")):
            self._problem(number, Check.NOT_ONE_GAME, "the line is not exactly one game tree")
            return
        facts = check_line_fast(text)  # the profile's exact shape, without the general parser
        if facts is None:
            try:
                trees = parse(text)
            except SgfParseError as exc:
                self._problem(number, Check.SGF_SYNTAX, f"column {exc.column}: {exc.message}")
                return
            if len(trees) != 1:
                self._problem(number, Check.NOT_ONE_GAME, f"the line holds {len(trees)} game trees")
                return
            facts = check_game(trees[0])
        self._check_facts(number, facts)

    def _check_facts(self, number: int, facts: GameFacts) -> None:
        self._games += 1
        for check, message in facts.problems:
            self._problem(number, check, message)
        if facts.termination in self._terminations:
            self._terminations[facts.termination] += 1
        bounds, finished = self._month_bounds, facts.finished
        if bounds is not None and finished is not None and not bounds[0] <= finished < bounds[1]:
            self._problem(number, Check.OUTSIDE_MONTH, f"XET is outside {self._month}")
        if facts.gn is None:
            return
        # uuid.UUID(gn).bytes, for the lowercase 8-4-4-4-12 form check_game lets through
        key = bytes.fromhex(facts.gn.replace("-", ""))
        records, lines = self._gn_buckets.setdefault(key[0], (bytearray(), array("L")))
        records += key
        lines.append(number)
        if finished is None:
            return
        # Each game is compared with the previous one, so one misplaced game is one problem. The
        # instants are compared, not XET's text; GN is lowercase ASCII hex, so its text orders.
        if self._previous is not None:
            before, gn, line = self._previous
            if (finished, facts.gn) < (before, gn):
                self._problem(number, Check.ORDER, f"(XET, GN) is not after that of line {line}")
        self._previous = (finished, facts.gn, number)

    def _check_duplicates(self) -> None:
        """Compare GNs one bucket (first byte) at a time so only a bucket's set is in memory."""
        for records, lines in self._gn_buckets.values():
            first_line: dict[bytes, int] = {}
            for index, number in enumerate(lines):
                key = bytes(records[index * 16 : index * 16 + 16])
                if key in first_line:
                    self._problem(
                        number,
                        Check.DUPLICATE_GN,
                        f"GN[{uuid.UUID(bytes=key)}] already appears on line {first_line[key]}",
                    )
                else:
                    first_line[key] = number
