"""The `sgf check` findings table of docs/downloaders.md lists every finding code with its
severity, and the page documents the exit codes: docs cannot drift."""

from __future__ import annotations

import re

from gomoku_archive.sgf import FINDING_CODES
from tests.docs_pages import between_markers

PAGE = "downloaders.md"
ROW = re.compile(r"^\| `(?P<code>[A-Z]{2}[0-9]{3})` \| (?P<severity>error|warning) \| .+ \|$")


def documented_rows() -> dict[str, str]:
    section = between_markers(PAGE, "sgf-findings").splitlines()
    return {m["code"]: m["severity"] for line in section if (m := ROW.match(line))}


def test_every_code_is_in_the_docs_table_with_its_severity() -> None:
    rows = documented_rows()
    assert {code: entry.severity for code, entry in FINDING_CODES.items()} == rows


def test_the_docs_document_the_exit_codes() -> None:
    section = between_markers(PAGE, "sgf-findings")
    for status in (
        "`0` nothing found",
        "`1` warnings only",
        "`2` errors",
        "`3` a\nfile could not be read",
    ):
        assert status in section


def test_codes_follow_the_family_scheme() -> None:
    families = {"SZ", "PT", "ND", "VL", "ID", "CA", "GK"}
    for code, entry in FINDING_CODES.items():
        assert entry.code == code
        assert code[:2] in families and code[2:].isdigit() and len(code) == 5
