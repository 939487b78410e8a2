"""README's `sgf check` table lists every finding code with its severity: docs cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

from gomoku_archive.sgf import FINDING_CODES

README = Path(__file__).resolve().parents[3] / "README.md"
ROW = re.compile(r"^\| `(?P<code>[A-Z]{2}[0-9]{3})` \| (?P<severity>error|warning) \| .+ \|$")


def readme_rows() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- sgf-findings:start -->")
    end = text.index("<!-- sgf-findings:end -->")
    section = text[start:end].splitlines()
    return {m["code"]: m["severity"] for line in section if (m := ROW.match(line))}


def test_every_code_is_in_the_readme_table_with_its_severity() -> None:
    rows = readme_rows()
    assert {code: entry.severity for code, entry in FINDING_CODES.items()} == rows


def test_the_readme_documents_the_exit_codes() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[
        text.index("<!-- sgf-findings:start -->") : text.index("<!-- sgf-findings:end -->")
    ]
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
