"""``sgf check`` against an independent judge: the export's replay engine
(``gomoku.replay``), which decides every archived game. On Gomoku records of the profile's plain
shape (GM[4], SZ[15], RE, one move per node) they must agree on whether the moves keep the turn
order and whether the game is valid: the audit found sgf check silent on White opening a game,
which the replay calls turn_order."""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from gomoku_archive.gomoku.game import BOARD_LETTERS, Color, Move, Reason, Termination
from gomoku_archive.gomoku.replay import replay
from gomoku_archive.profile.writer import RE_BY_OUTCOME
from gomoku_archive.sgf import check_chunks
from tests.budget import examples

OUTCOMES = {
    re_value: (result, termination)
    for (termination, result), re_value in RE_BY_OUTCOME.items()
    if termination is not Termination.BOARD_FULL  # "Draw" is read as AGREEMENT: no full board
}
TURN_CODES = {"GK001", "GK006"}
AREA = list(range(4, 10))
"""A 6 x 6 corner of the centre: fives and repeated points are common."""


@st.composite
def games(draw: st.DrawFn) -> tuple[list[Move], str]:
    first = draw(st.sampled_from([Color.BLACK] * 3 + [Color.WHITE]))
    moves = []
    colour = first
    for _ in range(draw(st.integers(1, 30))):
        if draw(st.integers(0, 25)) == 0:
            colour = colour.other  # the same colour twice
        moves.append(Move(colour, draw(st.sampled_from(AREA)), draw(st.sampled_from(AREA))))
        colour = colour.other
    return moves, draw(st.sampled_from(sorted(OUTCOMES)))


def sgf(moves: list[Move], re_value: str) -> bytes:
    nodes = "".join(f";{m.color.value}[{BOARD_LETTERS[m.x]}{BOARD_LETTERS[m.y]}]" for m in moves)
    return f"(;FF[4]GM[4]SZ[15]RE[{re_value}]{nodes})".encode()


@settings(max_examples=examples(1000), deadline=None)
@given(game=games(), chunk=st.sampled_from([7, 64, 1 << 16]))
def test_sgf_check_agrees_with_the_replay_engine(game: tuple[list[Move], str], chunk: int) -> None:
    moves, re_value = game
    data = sgf(moves, re_value)
    report = check_chunks([data[i : i + chunk] for i in range(0, len(data), chunk)])
    codes = {finding.code for finding in report.findings}
    verdict = replay(moves, *OUTCOMES[re_value])
    event(str(verdict.reason))
    assert report.parse_error is None
    assert (verdict.reason is Reason.TURN_ORDER) == bool(codes & TURN_CODES), (data, codes)
    assert (verdict.reason is None) == (not codes), (data, codes, verdict)


def test_the_turn_order_is_checked_after_a_five_too() -> None:
    """Found by the property above: Black moves twice in a row after the game ended in a five.
    The replay calls that turn_order (it checks the turn order over the whole list first);
    sgf check used to stop looking at the turn order once a five was made."""
    data = (
        b"(;FF[4]GM[4]SZ[15]RE[B+];B[fe];W[ee];B[ih];W[ee];B[hg];W[ee];B[ee];W[ee];B[gf];"
        b"W[ee];B[ji];B[ee])"
    )
    codes = {finding.code for finding in check_chunks([data]).findings}
    assert {"GK001", "GK004"} <= codes
