"""The SGF toolkit: parse, write and check Smart Game Format (FF[4]) collections.

Pure code: nothing here reads or writes files; callers pass bytes or text in and get data back.
"""

from gomoku_archive.sgf.checker import (
    MAX_LISTED_FINDINGS,
    CheckReport,
    Finding,
    RootInfo,
    check_chunks,
    check_sgf,
    resolve_root,
)
from gomoku_archive.sgf.findings import FINDING_CODES, FindingCode, Severity
from gomoku_archive.sgf.parser import SgfParseError, iter_game_trees, parse
from gomoku_archive.sgf.points import BoardSize, parse_point, parse_size, point_name
from gomoku_archive.sgf.tree import GameTree, Node, Property
from gomoku_archive.sgf.tree_writer import write_collection, write_game_tree

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
