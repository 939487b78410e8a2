"""What ``gomoku-archive verify`` reports: the checks by name, each problem found, and the
summary of one archive."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from gomoku_archive.profile.vocabulary import PROFILE_ID


class Check(StrEnum):
    """What a problem is about: the stable identifiers of the ``--json`` output."""

    CHECKSUM_FILE = "checksum_file"
    CHECKSUM_NAME = "checksum_name"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    FILE_NAME_HASH = "file_name_hash"
    FILE_NAME_MONTH = "file_name_month"
    OUTSIDE_MONTH = "outside_month"
    GZIP_HEADER = "gzip_header"
    GZIP_MTIME = "gzip_mtime"
    GZIP_FLAGS = "gzip_flags"
    GZIP_DATA = "gzip_data"
    GZIP_TRUNCATED = "gzip_truncated"
    GZIP_CRC = "gzip_crc"
    GZIP_SIZE = "gzip_size"
    GZIP_MEMBERS = "gzip_members"
    TRAILING_DATA = "trailing_data"
    BOM = "bom"
    NOT_UTF8 = "not_utf8"
    CR = "cr"
    BLANK_LINE = "blank_line"
    NO_FINAL_LF = "no_final_lf"
    LINE_TOO_LONG = "line_too_long"
    SGF_SYNTAX = "sgf_syntax"
    NOT_ONE_GAME = "not_one_game"
    VARIATION = "variation"
    COMMENT = "comment"
    SETUP = "setup"
    PASS_MOVE = "pass"  # noqa: S105 - a Go/Gomoku pass, not a password
    MOVE_NODE = "move_node"
    MISSING_PROPERTY = "missing_property"
    UNEXPECTED_PROPERTY = "unexpected_property"
    REPEATED_PROPERTY = "repeated_property"
    PROPERTY_ORDER = "property_order"
    PROPERTY_VALUE = "property_value"
    ILLEGAL_MOVE = "illegal_move"
    RESULT_MISMATCH = "result_mismatch"
    ORDER = "order"
    DUPLICATE_GN = "duplicate_gn"
    TOO_MANY_PROBLEMS = "too_many_problems"


class ChecksumStatus(StrEnum):
    VERIFIED = "verified"
    ABSENT = "absent"
    MISMATCH = "mismatch"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One way the archive departs from the profile."""

    line: int
    """1-based line of the decompressed text; 0 for the file as a whole."""
    check: Check
    message: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Everything the verifier found; ``ok`` only when there is no problem at all."""

    file_name: str | None
    sha256: str
    compressed_bytes: int
    uncompressed_bytes: int
    games: int
    terminations: Mapping[str, int]
    """Games per XER value, every termination listed (zeros included)."""
    checksum: ChecksumStatus
    problems: tuple[Problem, ...]
    """The first problems by line (file-level ones, line 0, first), at most ``max_listed``."""
    problem_count: int
    notes: tuple[str, ...] = ()
    """Things worth knowing that are not problems (no checksum file, an unusual name)."""

    @property
    def ok(self) -> bool:
        return self.problem_count == 0

    def as_json(self) -> dict[str, object]:
        """The report as the ``--json`` document (camelCase keys, like the manifest)."""
        return {
            "file": self.file_name,
            "profile": PROFILE_ID,
            "ok": self.ok,
            "sha256": self.sha256,
            "bytes": self.compressed_bytes,
            "uncompressedBytes": self.uncompressed_bytes,
            "games": self.games,
            "results": dict(self.terminations),
            "checksum": self.checksum.value,
            "problemCount": self.problem_count,
            "problems": [
                {"line": p.line or None, "check": p.check.value, "message": p.message}
                for p in self.problems
            ],
            "notes": list(self.notes),
        }
