"""The codes of ``sgf check`` findings, like a compiler's diagnostics: two letters for the family
and three digits. A code never changes meaning once released; new checks get new numbers.

Families: SZ board size, PT points, ND node structure, VL property values, ID identifiers,
CA charsets, GK Gomoku (GM[4]) main-line replay. docs/downloaders.md lists the same table (a
unit test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]

_SHOWN = 40


def shown(value: str) -> str:
    """A value as quoted in a message: long ones are cut, so one huge comment or identifier
    cannot make a finding line megabytes long."""
    return value if len(value) <= _SHOWN else value[: _SHOWN - 3] + "..."


@dataclass(frozen=True, slots=True)
class FindingCode:
    code: str
    severity: Severity
    meaning: str


FINDING_CODES: dict[str, FindingCode] = {
    entry.code: entry
    for entry in (
        FindingCode(
            "SZ001", "error", "SZ in a node other than the root (ignored: the root's size stays)"
        ),
        FindingCode(
            "SZ002", "error", "square board written in composed form, SZ[9:9] instead of SZ[9]"
        ),
        FindingCode("SZ003", "error", "SZ value is not a number or 'columns:rows', or is below 1"),
        FindingCode("SZ004", "error", "Go or Gomoku board side outside 1..52 (each axis checked)"),
        FindingCode("SZ005", "warning", "Gomoku record (GM[4]) without SZ: 15x15 assumed"),
        FindingCode("PT001", "error", "point outside the board of its game"),
        FindingCode("PT002", "error", "value is not a point (two letters a-z, A-Z) or a move"),
        FindingCode("PT003", "error", "pass value ([] or [tt]) in a setup property"),
        FindingCode(
            "PT004",
            "error",
            "bad rectangle in a point list: 1x1, or corners not upper-left:lower-right",
        ),
        FindingCode(
            "PT005", "error", "point listed twice in one node's AB/AW/AE or in one point list"
        ),
        FindingCode("ND001", "error", "setup and move properties mixed in one node"),
        FindingCode("ND002", "error", "B and W in one node"),
        FindingCode(
            "ND003", "error", "root property (FF, GM, CA, AP, ST) in a node other than the root"
        ),
        FindingCode("ND004", "error", "property repeated within one node"),
        FindingCode("ND005", "error", "second game-info node on one path"),
        FindingCode("ND006", "warning", "move in the root node (bad style in FF[4])"),
        FindingCode("ND007", "error", "KO, BM, DO, IT or TE in a node without a B or W move"),
        FindingCode("VL001", "error", "value does not fit its FF[4] type or range"),
        FindingCode("VL002", "error", "wrong number of values for the property"),
        FindingCode("VL003", "error", "RE not in FF[4]'s result format"),
        FindingCode("ID001", "warning", "FF[3]-style identifier with lowercase letters"),
        FindingCode(
            "CA001", "warning", "unknown or unusable charset in CA: values read as latin-1"
        ),
        FindingCode(
            "CA002", "warning", "values not valid in the declared charset: read as latin-1"
        ),
        FindingCode("GK001", "error", "Gomoku: one colour moves twice in a row (or against PL)"),
        FindingCode("GK002", "error", "Gomoku: stone played on an occupied point"),
        FindingCode("GK003", "error", "Gomoku: pass move"),
        FindingCode("GK004", "error", "Gomoku: play continues after a five"),
        FindingCode("GK005", "error", "Gomoku: RE contradicts the final position"),
        FindingCode(
            "GK006",
            "warning",
            "Gomoku: White makes the first move (freestyle starts with Black; PL or setup "
            "stones can allow it)",
        ),
    )
}
