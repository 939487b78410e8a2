"""The broken rows of the demo data: a catalogue of realistic defects, one or more for every
exclusion reason, each made from a valid five game and labelled with the reason the export must
give it. A recipe breaks exactly one rule, or two whose order the export defines (status before
moves, parsing before replay), so the expected reason does not depend on how a replay engine
walks the moves."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any, Protocol, TypeAlias

from gomoku_archive.demo.player import fill_board_without_five
from gomoku_archive.demo.rows import SourceGame
from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color, Reason, Result, Termination


class RowSource(Protocol):
    """What a recipe needs from the month being generated."""

    rng: random.Random

    def five_game(self) -> SourceGame: ...


def moves_json(points: list[int]) -> list[dict[str, object]]:
    """Moves as the source table's JSON: black first, alternating."""
    colours = (Color.BLACK.value, Color.WHITE.value)
    return [
        {"color": colours[i & 1], "x": p % BOARD_SIZE, "y": p // BOARD_SIZE}
        for i, p in enumerate(points)
    ]


Recipe: TypeAlias = "Callable[[RowSource], SourceGame]"
_Moves = list[dict[str, object]]
_SWAPPED = {Color.BLACK.value: Color.WHITE.value, Color.WHITE.value: Color.BLACK.value}
_SPELT_OUT = {Color.BLACK.value: "BLACK", Color.WHITE.value: "WHITE"}


def _moves(game: SourceGame) -> _Moves:
    """A copy of a valid row's moves that a recipe may break."""
    assert isinstance(game.moves, list)
    return [dict(move) for move in game.moves]


def _int(value: object) -> int:
    return int(str(value))


# ``columns`` are Any because broken rows hold ill-typed values on purpose.
def _broken(edit: Callable[[_Moves], object] | None = None, **columns: Any) -> Recipe:
    """A five game whose moves go through ``edit`` and whose ``columns`` are replaced."""

    def recipe(rows: RowSource) -> SourceGame:
        game = rows.five_game()
        moves = game.moves if edit is None else edit(_moves(game))
        return replace(game, moves=moves, **columns)

    return recipe


def _interior(edit: Callable[[_Moves, int], object]) -> Recipe:
    """A five game whose moves ``edit`` changes in place at an index from the middle of the
    game (at least 2, and never the last move)."""

    def recipe(rows: RowSource) -> SourceGame:
        game = rows.five_game()
        moves = _moves(game)
        edit(moves, rows.rng.randrange(max(2, len(moves) // 3), len(moves) - 1))
        return replace(game, moves=moves)

    return recipe


def _stopped(status: str, kept: int, **columns: Any) -> Recipe:
    """A game that stopped after ``kept`` moves, some seconds after it started."""

    def recipe(rows: RowSource) -> SourceGame:
        game = rows.five_game()
        assert game.finished_at is not None
        soon = game.started_at + timedelta(seconds=rows.rng.uniform(4, 40))
        moves = _moves(game)[:kept]
        finished_at = min(game.finished_at, soon)
        return replace(game, status=status, moves=moves, finished_at=finished_at, **columns)

    return recipe


def _played_on(extra: int, **columns: Any) -> Recipe:
    """A five game continued by ``extra`` legal alternating moves close to the five."""

    def recipe(rows: RowSource) -> SourceGame:
        game = rows.five_game()  # shorter than 200 moves, so the board has room
        moves = _moves(game)
        x0, y0 = _int(moves[-1]["x"]), _int(moves[-1]["y"])
        taken = {(_int(m["x"]), _int(m["y"])) for m in moves}
        free = [(x, y) for y in range(BOARD_SIZE) for x in range(BOARD_SIZE) if (x, y) not in taken]
        free.sort(key=lambda p: max(abs(p[0] - x0), abs(p[1] - y0)))
        for x, y in rows.rng.sample(free[:12], extra):
            moves.append({"color": _SWAPPED[str(moves[-1]["color"])], "x": x, "y": y})
        return replace(game, moves=moves, **columns)

    return recipe


def _filled(kept: int, result: Result) -> Recipe:
    """The first ``kept`` moves of a five-free full board, recorded as BOARD_FULL."""

    def recipe(rows: RowSource) -> SourceGame:
        moves = moves_json(fill_board_without_five(rows.rng)[:kept])
        termination = Termination.BOARD_FULL.value
        return replace(rows.five_game(), moves=moves, result=result.value, termination=termination)

    return recipe


def _finished_before_started(rows: RowSource) -> SourceGame:
    game = rows.five_game()  # a server clock stepped back during the game
    assert game.finished_at is not None
    return replace(game, started_at=game.finished_at + timedelta(seconds=rows.rng.randint(1, 600)))


def _five_credited_to_the_loser(rows: RowSource) -> SourceGame:
    game = rows.five_game()
    loser = Result.WHITE_WIN if game.result == Result.BLACK_WIN else Result.BLACK_WIN
    return replace(game, result=loser.value)


def _sgf_text(moves: _Moves) -> str:
    return "".join(
        f";{m['color']}[{chr(97 + _int(m['x']))}{chr(97 + _int(m['y']))}]" for m in moves
    )


DEFECTS: tuple[tuple[Reason, Recipe], ...] = (
    # Aborted is decided first: it outranks the NULL result and the empty move list.
    (Reason.ABORTED, _stopped("ABORTED", 2, result=None, termination=None)),
    (Reason.ABORTED, _stopped("ABORTED", 0, result=None, termination=None)),
    # Some server versions recorded a result and a termination when aborting.
    (Reason.ABORTED, _stopped("ABORTED", 1, result="WHITE_WIN", termination="TIMEOUT")),
    (Reason.INCOMPLETE, _broken(result=None)),
    (Reason.INCOMPLETE, _broken(termination=None)),
    (Reason.INCOMPLETE, _broken(result="BLACK_WINS")),
    (Reason.INCOMPLETE, _broken(termination="DISCONNECT")),
    (Reason.INCOMPLETE, _broken(board_size=19)),
    (Reason.INCOMPLETE, _finished_before_started),
    (Reason.INCOMPLETE, _stopped("IN_PROGRESS", 5, result=None, termination=None)),
    (Reason.INCOMPLETE, _broken(lambda moves: [], result=None, termination=None)),
    # Black never moved: lost on time, or resigned.
    (Reason.EMPTY, _stopped("FINISHED", 0, result="WHITE_WIN", termination="TIMEOUT")),
    (Reason.EMPTY, _stopped("FINISHED", 0, result="WHITE_WIN", termination="RESIGNATION")),
    (Reason.MALFORMED, _broken(_sgf_text)),
    (Reason.MALFORMED, _broken(lambda moves: {"moves": moves})),
    (Reason.MALFORMED, _broken(lambda moves: [[m["x"], m["y"]] for m in moves])),
    (Reason.MALFORMED, _interior(lambda moves, i: moves[i].pop("y"))),
    (Reason.MALFORMED, _interior(lambda moves, i: moves[i].update(x=str(moves[i]["x"])))),
    (Reason.MALFORMED, _interior(lambda moves, i: moves[i].update(x=_int(moves[i]["x"]) + 0.5))),
    (Reason.MALFORMED, _interior(lambda moves, i: moves[i].update(x=True))),
    (
        Reason.MALFORMED,
        _broken(lambda ms: [{**m, "color": _SPELT_OUT[str(m["color"])]} for m in ms]),
    ),
    (Reason.MALFORMED, _broken(lambda moves: [None if i == 4 else m for i, m in enumerate(moves)])),
    # Parsing comes before replay: a lost second move does not outrank a text coordinate.
    (Reason.MALFORMED, _broken(lambda ms: [ms[0], *ms[2:-1], {**ms[-1], "x": str(ms[-1]["x"])}])),
    (
        Reason.TURN_ORDER,
        _broken(lambda ms: [{**m, "color": _SWAPPED[str(m["color"])]} for m in ms]),
    ),
    (Reason.TURN_ORDER, _interior(lambda moves, i: moves.pop(i))),  # a move lost
    (Reason.TURN_ORDER, _interior(lambda moves, i: moves[i].update(color=moves[i - 1]["color"]))),
    (Reason.OUT_OF_BOUNDS, _interior(lambda moves, i: moves[i].update(x=BOARD_SIZE))),
    (Reason.OUT_OF_BOUNDS, _interior(lambda moves, i: moves[i].update(y=-1))),
    (Reason.OUT_OF_BOUNDS, _broken(lambda moves: [*moves[:-1], {**moves[-1], "y": BOARD_SIZE}])),
    # Onto the mover's own earlier stone, and onto the stone just played (a double submit).
    (Reason.OCCUPIED, _interior(lambda ms, i: ms[i].update(x=ms[i - 2]["x"], y=ms[i - 2]["y"]))),
    (Reason.OCCUPIED, _interior(lambda ms, i: ms[i].update(x=ms[i - 1]["x"], y=ms[i - 1]["y"]))),
    (Reason.MOVES_AFTER_FIVE, _played_on(1)),
    (Reason.MOVES_AFTER_FIVE, _played_on(3)),
    (Reason.MOVES_AFTER_FIVE, _played_on(2, termination="RESIGNATION")),
    (Reason.RESULT_MISMATCH, _five_credited_to_the_loser),
    (Reason.RESULT_MISMATCH, _broken(result="DRAW")),
    (Reason.RESULT_MISMATCH, _broken(lambda moves: moves[:-1])),  # FIVE without its five
    (Reason.RESULT_MISMATCH, _broken(termination="RESIGNATION")),  # with a five on the board
    (Reason.RESULT_MISMATCH, _broken(termination="TIMEOUT")),
    (Reason.RESULT_MISMATCH, _broken(lambda ms: ms[:-2], result="DRAW", termination="RESIGNATION")),
    (Reason.RESULT_MISMATCH, _broken(lambda ms: ms[:-3], result="DRAW", termination="TIMEOUT")),
    (Reason.RESULT_MISMATCH, _filled(40, Result.DRAW)),
    (Reason.RESULT_MISMATCH, _filled(POINTS, Result.BLACK_WIN)),
    (
        Reason.RESULT_MISMATCH,
        _broken(lambda ms: ms[: len(ms) // 2 + 1], result="BLACK_WIN", termination="AGREEMENT"),
    ),
)
