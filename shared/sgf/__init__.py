"""The SGF toolkit: parse, write and check Smart Game Format (FF[4]) collections.

Pure code: nothing here reads or writes files; callers pass bytes or text in and get data back.
"""

from shared.sgf.checker import (
    MAX_LISTED_FINDINGS,
    CheckReport,
    Finding,
    RootInfo,
    check_chunks,
    check_sgf,
    resolve_root,
)
from shared.sgf.findings import FINDING_CODES, FindingCode, Severity
from shared.sgf.parser import SgfParseError, iter_game_trees, parse
from shared.sgf.points import BoardSize, parse_point, parse_size, point_name
from shared.sgf.tree import GameTree, Node, Property
from shared.sgf.writer import write_collection, write_game_tree

__all__ = [
    "FINDING_CODES",
    "MAX_LISTED_FINDINGS",
    "BoardSize",
    "CheckReport",
    "Finding",
    "FindingCode",
    "GameTree",
    "Node",
    "Property",
    "RootInfo",
    "Severity",
    "SgfParseError",
    "check_chunks",
    "check_sgf",
    "iter_game_trees",
    "parse",
    "parse_point",
    "parse_size",
    "point_name",
    "resolve_root",
    "write_collection",
    "write_game_tree",
]
