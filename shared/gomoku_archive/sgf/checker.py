"""The semantic validator behind ``gomoku-archive sgf check``.

The structural result (did the bytes parse, how many game trees) and the semantic findings are
reported separately: a record can parse and still describe an impossible board. Each game of a
collection is checked against its own root (its own GM, SZ and CA); nothing carries over from
the previous game. The record is only read.

A finding names the game and node as ``node_path`` = ``"G:N"``: G is the game's 1-based place
in the collection, N the node's number in FF[4]'s suggested numbering (§1: from 0 at the root,
in the order the nodes are written in the file, variations included). When the input stops
parsing, the games that were complete before the error are still checked.

Games are checked as the parser streams them (``stream_game_trees``), node by node, so memory
does not grow with a game: one board for the main-line replay, a flag per open variation, and
at most ``MAX_LISTED_FINDINGS`` findings per file (the rest are counted). An 8 MB single-game
file used to need about 1.5 GB as a tree.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from gomoku_archive.sgf.findings import FINDING_CODES, Severity, shown
from gomoku_archive.sgf.gomoku_rules import MainLineReplay
from gomoku_archive.sgf.parser import SgfParseError, TreeCharset, stream_game_trees
from gomoku_archive.sgf.pointcheck import Problem, check_points
from gomoku_archive.sgf.points import (
    MAX_LETTER_SIZE,
    BoardSize,
    SizeError,
    is_pass,
    parse_size,
    point_name,
    whole_number,
)
from gomoku_archive.sgf.properties import (
    MOVE_ONLY,
    PROPERTIES,
    RESULT,
    PropClass,
    PropSpec,
    ValueType,
    value_count_problem,
    value_shape_problem,
)
from gomoku_archive.sgf.tree import Node, Property

GO, GOMOKU = 1, 4
MAX_LISTED_FINDINGS = 10_000
"""Findings kept per file, the first in file order; the others are only counted."""
GOMOKU_DEFAULT_SIZE = BoardSize(15, 15)
GO_DEFAULT_SIZE = BoardSize(19, 19)


@dataclass(frozen=True)
class Finding:
    """One diagnostic: a stable ``code`` (see findings.py), where, and what."""

    code: str
    severity: Severity
    line: int
    column: int
    node_path: str
    message: str


@dataclass(frozen=True)
class CheckReport:
    """The structural result (``parse_error`` is None when the whole input parsed; ``games``
    counts the game trees read) and the semantic findings, in file order."""

    parse_error: SgfParseError | None
    games: int
    findings: tuple[Finding, ...]
    """The first ``MAX_LISTED_FINDINGS`` findings in file order."""
    counts: tuple[int, int] | None = None
    """(errors, warnings) among all findings, listed or not; None: those of ``findings``."""

    @property
    def errors(self) -> int:
        """Error findings, plus one for a parse error."""
        found = self.counts[0] if self.counts else self._listed("error")
        return found + (self.parse_error is not None)

    @property
    def warnings(self) -> int:
        return self.counts[1] if self.counts else self._listed("warning")

    @property
    def unlisted(self) -> int:
        """Findings counted but not kept in ``findings``."""
        if self.counts is None:
            return 0
        return sum(self.counts) - len(self.findings)

    def _listed(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)


@dataclass(frozen=True, slots=True)
class RootInfo:
    """What a game's root says about the board."""

    game: int | None
    """GM (1, Go, when absent); None when GM is not a number."""
    size: BoardSize | None
    """The board; None when unknown (a game with no default size, or an unusable SZ)."""


def check_sgf(data: bytes) -> CheckReport:
    """Check every game of an SGF collection; never raises for any input."""
    return check_chunks([data])


def check_chunks(chunks: Iterable[bytes], *, max_listed: int = MAX_LISTED_FINDINGS) -> CheckReport:
    """``check_sgf`` over a collection arriving in chunks (a file read a block at a time): memory
    stays bounded whatever the size of the collection or of one game."""
    kept = _Findings(max_listed)
    games = 0
    parse_error: SgfParseError | None = None

    def start_game(charset: TreeCharset) -> _GameChecker:
        return _GameChecker(games + 1, charset, _Findings(max_listed))

    try:
        for listener in stream_game_trees(chunks, start_game):
            assert isinstance(listener, _GameChecker)
            games += 1
            kept.merge(listener.finish())
    except SgfParseError as error:
        parse_error = error  # the game being read is not checked: its findings are dropped
    listed = kept.listed()
    counts = kept.counts()
    # counts only when some findings were left out, so a report with all of them listed is
    # equal to one built from its findings alone.
    return CheckReport(parse_error, games, listed, counts if sum(counts) > len(listed) else None)


class _Findings:
    """The first ``limit`` findings in file order (a max-heap on position), and a count of
    all by severity."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._heap: list[tuple[tuple[int, ...], Finding]] = []
        self._errors = 0
        self._warnings = 0

    def add(self, key: tuple[int, ...], finding: Finding) -> None:
        if finding.severity == "error":
            self._errors += 1
        else:
            self._warnings += 1
        self._push(key, finding)

    def _push(self, key: tuple[int, ...], finding: Finding) -> None:
        negated = tuple(-part for part in key)
        heap = self._heap
        if len(heap) < self._limit:
            heapq.heappush(heap, (negated, finding))
        elif heap and negated > heap[0][0]:
            heapq.heapreplace(heap, (negated, finding))

    def merge(self, other: _Findings) -> None:
        self._errors += other._errors
        self._warnings += other._warnings
        for negated, finding in other._heap:
            self._push(tuple(-part for part in negated), finding)

    def listed(self) -> tuple[Finding, ...]:
        return tuple(finding for _, finding in sorted(self._heap, reverse=True))

    def counts(self) -> tuple[int, int]:
        return self._errors, self._warnings


def resolve_root(root: Node, problem: Problem | None = None) -> RootInfo:
    """Read the game and board size from a root node: GM defaults to 1 (Go); SZ defaults to
    19x19 for Go; Gomoku without SZ is assumed 15x15 (FF[4] gives it no default, so the checker
    warns). ``problem`` hears about anything wrong with GM or SZ."""
    report = problem or _ignore
    game: int | None = GO
    gm = root.get("GM")
    if gm is not None:
        spec = PROPERTIES["GM"]
        if value_count_problem(spec, gm.values) or value_shape_problem(spec, gm.values[0]):
            game = None  # the value checks report it
        else:
            game = whole_number(gm.values[0])
    sz = root.get("SZ")
    if sz is None:
        if game == GOMOKU:
            report(
                "SZ005",
                root,
                "Gomoku record without SZ: FF[4] gives GM[4] no default, 15x15 assumed",
            )
            return RootInfo(game, GOMOKU_DEFAULT_SIZE)
        return RootInfo(game, GO_DEFAULT_SIZE if game == GO else None)
    if len(sz.values) != 1:
        report("SZ003", sz, f"SZ takes one value, not {len(sz.values)}")
        return RootInfo(game, None)
    try:
        size = parse_size(sz.values[0])
    except SizeError as error:
        if not error.square_composed:
            report("SZ003", sz, str(error))
            return RootInfo(game, None)
        report("SZ002", sz, str(error))
        side = whole_number(sz.values[0].split(":")[0])
        size = BoardSize(side, side)
    if game in (GO, GOMOKU):
        bad = [
            f"{axis} {count}"
            for axis, count in (("columns", size.columns), ("rows", size.rows))
            if count > MAX_LETTER_SIZE
        ]
        if bad:
            report("SZ004", sz, f"SZ[{shown(sz.values[0])}]: {' and '.join(bad)} outside 1..52")
            return RootInfo(game, None)
    return RootInfo(game, size)


def _ignore(code: str, where: Property | Node, message: str) -> None:
    pass


# Findings are ordered by position; at one position, in the order the checks were written to
# run: the root's board and charset, then the node checks, then ID001, then the replay.
_ROOT_PHASE, _NODE_PHASE, _ID_PHASE, _REPLAY_PHASE = 0, 1, 2, 3


class _GameChecker:
    """Checks one top-level game tree as the parser streams it (a ``TreeListener``)."""

    def __init__(self, number: int, charset: TreeCharset, findings: _Findings) -> None:
        self._number = number
        self._charset = charset
        self._findings = findings
        self._sequence = 0
        self._node_number = 0
        self._paths: list[bool] = []
        """Per open game tree: whether its path so far holds a game-info node."""
        self._variation_closed = False
        self._old_identifier: tuple[Property, int] | None = None
        self._old_identifiers = 0
        self._fallback_node: int | None = None
        self._info = RootInfo(None, None)
        self._quiet_moves: frozenset[str] | None = None
        self._replay: MainLineReplay | None = None
        self._phase = _ROOT_PHASE
        """Which checks are running, the tie-break between findings at one position."""

    # -- the parser's events --

    def open_tree(self) -> None:
        # A variation starts from the state after its parent's last node.
        self._paths.append(self._paths[-1] if self._paths else False)

    def close_tree(self) -> None:
        self._paths.pop()
        # The main line is the first variation at every branch, so its nodes are exactly
        # those read before the first ")".
        self._variation_closed = True

    def node(self, node: Node) -> None:
        number = self._node_number
        if number == 0:
            self._start(node)
        props = node.properties
        quiet = self._quiet_moves
        # The usual ";B[hh]": a non-root node of one move whose value is fine on this board
        # has nothing else to check.
        if not (
            number
            and len(props) == 1
            and props[0].ident in _MOVES
            and len(props[0].values) == 1
            and (quiet is None or props[0].values[0] in quiet)
        ):
            self._paths[-1] = self._check_node(node, self._paths[-1])
        if self._replay is not None and not self._variation_closed:
            self._phase = _REPLAY_PHASE
            self._replay.node(node, number)
            self._phase = _NODE_PHASE
        if self._fallback_node is None and self._charset.fallback_count:
            self._fallback_node = number
        self._node_number = number + 1

    def moves(self, run: str, line: int, column: int) -> bool:
        """``node`` for each plain move node of ``run`` (see ``TreeListener.moves``), taken
        only when none of them gets a finding: every value is one of the board's points (so
        the node checks pass, as in ``node``'s fast path) and the replay takes them all."""
        number = self._node_number
        values = _RUN_VALUES.findall(run)
        quiet = self._quiet_moves
        if not number or (quiet is not None and not quiet.issuperset(values)):
            return False
        replay = self._replay
        if (
            replay is not None
            and not self._variation_closed
            and not replay.moves(run[1::6], values, number)
        ):
            return False
        if self._fallback_node is None and self._charset.fallback_count:
            self._fallback_node = number
        self._node_number = number + len(values)
        return True

    def finish(self) -> _Findings:
        """The game's findings, once its last ")" was read."""
        if self._old_identifier is not None:
            first, node_number = self._old_identifier
            self._phase = _ID_PHASE
            self._add(
                "ID001",
                first,
                node_number,
                f"{_plural(self._old_identifiers, 'identifier')} with lowercase letters "
                f"(FF[3] style); the first, {shown(first.ident)}, is read as {shown(first.name)}",
            )
        self._check_fallbacks()
        if self._replay is not None:
            self._phase = _REPLAY_PHASE
            self._replay.finish()
        return self._findings

    # -- the root --

    def _start(self, root: Node) -> None:
        self._phase = _ROOT_PHASE
        self._info = resolve_root(root, self._problem)
        self._quiet_moves = _quiet_moves(self._info)
        ca = root.get("CA")
        if ca is not None and not self._charset.known:
            self._problem(
                "CA001",
                ca,
                f"CA[{shown(ca.values[0])}] is not a charset this checker can "
                "use (unknown, or not ASCII-compatible): text read as latin-1",
            )
        if self._info.game == GOMOKU and self._info.size is not None:
            self._replay = MainLineReplay(self._info.size, self._gomoku_problem)
        self._phase = _NODE_PHASE

    def _check_fallbacks(self) -> None:
        if self._charset.declared is not None and self._charset.fallbacks:
            first = self._charset.fallbacks[0]
            count = self._charset.fallback_count
            self._phase = _ROOT_PHASE
            self._add(
                "CA002",
                first,
                self._fallback_node or 0,
                f"{_plural(count, 'property', 'properties')} not valid "
                f"{shown(self._charset.declared)}, the first {shown(first.ident)}: read as latin-1",
            )

    def _check_node(self, node: Node, game_info_above: bool) -> bool:
        """Check one node; True when this node or one above it is a game-info node."""
        is_root = self._node_number == 0
        seen: dict[str, Property] = {}
        first_of: dict[PropClass, Property] = {}
        known: list[tuple[Property, PropSpec]] = []
        for prop in node.properties:
            ident = prop.ident
            name = ident if ident.isupper() else prop.name
            if name != ident:
                self._old_identifiers += 1
                self._old_identifier = self._old_identifier or (prop, self._node_number)
            if name in seen:
                earlier = seen[name]
                self._problem(
                    "ND004",
                    prop,
                    f"{shown(name)} appears twice in one node (first at "
                    f"line {earlier.line}, column {earlier.column})",
                )
                continue
            seen[name] = prop
            spec = PROPERTIES.get(name)
            if spec is None:
                continue
            known.append((prop, spec))
            first_of.setdefault(spec.kind, prop)
            if spec.kind is PropClass.ROOT and not is_root:
                if name == "SZ":
                    self._problem(
                        "SZ001",
                        prop,
                        f"SZ[{shown(prop.values[0])}] outside the root node: "
                        "SZ belongs to the root and cannot resize the board later",
                    )
                else:
                    self._problem(
                        "ND003", prop, f"{name} is a root property, found outside the root node"
                    )
            self._check_values(prop, spec)
        if PropClass.SETUP in first_of and PropClass.MOVE in first_of:
            setup, move = first_of[PropClass.SETUP], first_of[PropClass.MOVE]
            self._problem(
                "ND001",
                move,
                f"setup property {setup.name} and move property {move.name} in one node",
            )
        if "B" in seen and "W" in seen:
            self._problem("ND002", seen["W"], "B and W in one node: one move per node")
        has_move = "B" in seen or "W" in seen
        if not has_move:
            for name in sorted(MOVE_ONLY & seen.keys()):
                self._problem("ND007", seen[name], f"{name} in a node without a B or W move")
        elif is_root:
            self._problem(
                "ND006",
                seen.get("B") or seen["W"],
                "move in the root node: FF[4] "
                "calls this bad style; put the first move in the next node",
            )
        game_info = first_of.get(PropClass.GAME_INFO)
        if game_info is not None and game_info_above:
            self._problem(
                "ND005",
                game_info,
                f"{game_info.name} makes a second game-info node "
                "on this path: FF[4] allows one game-info node per path",
            )
        if self._info.game in (GO, GOMOKU):
            check_points(known, self._info.size, self._info.game == GOMOKU, self._problem)
        return game_info_above or game_info is not None

    def _check_values(self, prop: Property, spec: PropSpec) -> None:
        if spec.value is ValueType.SIZE:
            return  # resolve_root
        count = value_count_problem(spec, prop.values)
        if count is not None:
            self._problem("VL002", prop, count)
        for value in prop.values[:1] if count else prop.values:
            shape = value_shape_problem(spec, value)
            if shape is not None:
                self._problem("VL001", prop, shape)
        if spec.name == "RE" and not RESULT.fullmatch(prop.values[0]):
            self._problem(
                "VL003",
                prop,
                f"RE[{shown(prop.values[0])}] is not an FF[4] result: 0, "
                "Draw, B+ or W+ with a score or R/Resign/T/Time/F/Forfeit, Void or ?",
            )

    def _problem(self, code: str, where: Property | Node, message: str) -> None:
        self._add(code, where, self._node_number, message)

    def _gomoku_problem(self, code: str, where: Property, node_number: int, message: str) -> None:
        self._add(code, where, node_number, message)

    def _add(self, code: str, where: Property | Node, node_number: int, message: str) -> None:
        self._sequence += 1
        key = (self._number, where.line, where.column, self._phase, self._sequence)
        finding = Finding(
            code,
            FINDING_CODES[code].severity,
            where.line,
            where.column,
            f"{self._number}:{node_number}",
            message,
        )
        self._findings.add(key, finding)


_MOVES = frozenset({"B", "W"})
_RUN_VALUES = re.compile(r"\[(..)\]")


def _quiet_moves(info: RootInfo) -> frozenset[str] | None:
    """The move values that need no finding in this game (None: any value), for the checker's
    fast path."""
    if info.game not in (GO, GOMOKU):
        return None  # other games' moves are not checked
    if info.size is None:
        return frozenset()
    return _board_moves(info.game == GO, info.size.columns, info.size.rows)


@lru_cache(maxsize=32)
def _board_moves(go: bool, columns: int, rows: int) -> frozenset[str]:
    size = BoardSize(columns, rows)
    moves = {point_name((column, row)) for column in range(columns) for row in range(rows)}
    if go:
        moves.update(value for value in ("", "tt") if is_pass(value, size))
    return frozenset(moves)


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"
