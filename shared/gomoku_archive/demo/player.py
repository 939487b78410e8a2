"""A fast, simple but not dumb freestyle Gomoku player, and a five-free board filler, for demo data.

Points are indices ``y * BOARD_SIZE + x``. The board is tracked as the 572 "windows" of five
consecutive intersections: a window holding only one colour's stones is live for that colour,
and its stone count says how close it is to a five. Placing a stone touches at most 20 windows,
so every threat the player looks at (a four, an open three) is kept up to date in constant time
instead of rescanning the board on each move.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from operator import itemgetter

from gomoku_archive.gomoku.game import BOARD_SIZE, POINTS, Color

_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
_CENTRE = (BOARD_SIZE // 2) * BOARD_SIZE + BOARD_SIZE // 2
_COLOUR = (Color.BLACK, Color.BLACK, Color.WHITE)  # colour code 1 = black, 2 = white


def _on_board(x: int, y: int) -> bool:
    return 0 <= x < BOARD_SIZE and 0 <= y < BOARD_SIZE


def _build_windows() -> tuple[tuple[int, ...], ...]:
    windows = []
    for y in range(BOARD_SIZE):
        for x in range(BOARD_SIZE):
            for dx, dy in _DIRECTIONS:
                if _on_board(x + 4 * dx, y + 4 * dy):
                    windows.append(tuple((y + i * dy) * BOARD_SIZE + x + i * dx for i in range(5)))
    return tuple(windows)


def _build_near() -> tuple[tuple[int, ...], ...]:
    near = []
    for p in range(POINTS):
        x, y = p % BOARD_SIZE, p // BOARD_SIZE
        steps = [(dx * s, dy * s) for s in (1, 2) for dx, dy in _DIRECTIONS]
        steps += [(-dx, -dy) for dx, dy in steps]
        on_board = [(dx, dy) for dx, dy in steps if _on_board(x + dx, y + dy)]
        near.append(tuple((y + dy) * BOARD_SIZE + x + dx for dx, dy in on_board))
    return tuple(near)


_WINDOWS = _build_windows()
_WINDOWS_AT = tuple(tuple(w for w, ps in enumerate(_WINDOWS) if p in ps) for p in range(POINTS))
_NEAR = _build_near()
"""For each point, the points one or two steps away along a line: where a reply usually goes."""
# C-level gathers (several times faster than a Python loop): the values of the windows through a
# point, and the cells of a window.
_VALUES_AT = tuple(itemgetter(*windows) for windows in _WINDOWS_AT)
_CELLS_OF = tuple(itemgetter(*cells) for cells in _WINDOWS)

# Worth of playing into a window that holds k stones of one colour only: ATTACK when they are the
# mover's (k + 1 in a row is closer to five), DEFEND when they are the opponent's (it kills the
# window). Four-stone windows are handled as forced moves before any scoring, hence 0.
_ATTACK = (1, 10, 60, 200, 0, 0)
_DEFEND = (1, 4, 15, 40, 0, 0)


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """One game played to its natural end, moves as points, black first."""

    points: list[int]
    winner: Color | None
    """Who made five or more with the last move; None when the board filled up without a five."""


@dataclass(frozen=True, slots=True)
class _Style:
    """How reliably a player of a given skill sees what matters (probabilities) and how much
    randomness blurs their positional judgement."""

    block_four: float
    spot_open_four: float
    block_three: float
    noise: float

    @classmethod
    def of(cls, skill: float) -> _Style:
        s = min(1.0, max(0.0, skill))
        return cls(0.985 + 0.015 * s, 0.8 + 0.2 * s, 0.72 + 0.26 * s, 60.0 - 45.0 * s)


class _Board:
    __slots__ = ("cells", "count", "live", "seen", "value")

    def __init__(self) -> None:
        n = len(_WINDOWS)
        self.cells = [0] * POINTS
        # seen[q] == seen[POINTS] marks a point already scored in the current choice.
        self.seen = [0] * (POINTS + 1)
        # Indexed by colour code 1 (black) and 2 (white); slot 0 keeps the indexing direct.
        self.count: tuple[list[int], ...] = ([], [0] * n, [0] * n)
        # live[c][k], k = 3 or 4: the windows holding k stones of c and none of the other colour.
        # A set of small ints iterates in an order fixed by its history (an int hashes to
        # itself), so picking "the first" of them keeps a seeded game reproducible.
        self.live: tuple[tuple[set[int], ...], ...] = (
            (),
            tuple(set() for _ in range(5)),
            tuple(set() for _ in range(5)),
        )
        # value[c][w]: what playing into window w is worth to colour c (attack or defence).
        self.value: tuple[list[int], ...] = ([], [_ATTACK[0]] * n, [_ATTACK[0]] * n)

    def play(self, p: int, c: int) -> bool:
        """Place colour ``c`` on ``p``; True when that makes five or more in a row."""
        o = 3 - c
        self.cells[p] = c
        mine, theirs = self.count[c], self.count[o]
        live_mine, live_theirs = self.live[c], self.live[o]
        value_mine, value_theirs = self.value[c], self.value[o]
        five = False
        for w in _WINDOWS_AT[p]:
            t = theirs[w]
            if t:
                # A window holding both colours is dead for good; its counts no longer matter,
                # so only the first stone that kills it is recorded.
                if not mine[w]:
                    mine[w] = 1
                    if t >= 3:
                        live_theirs[t].discard(w)
                    value_mine[w] = value_theirs[w] = 0
                continue
            k = mine[w] + 1
            mine[w] = k
            value_mine[w] = _ATTACK[k]
            value_theirs[w] = _DEFEND[k]
            # Only threes and fours are looked up by the player, so only they are indexed.
            if k >= 3:
                if k == 5:
                    live_mine[4].discard(w)
                    five = True
                    continue
                if k == 4:
                    live_mine[3].discard(w)
                live_mine[k].add(w)
        return five

    def empty_in(self, w: int) -> int:
        cells = self.cells
        for q in _WINDOWS[w]:
            if not cells[q]:
                return q
        raise AssertionError("a four-stone window always has its fifth point empty")

    def open_four_points(self, threes: set[int]) -> list[int]:
        """Points that turn these three-stone windows into two different winning points at once:
        an open four or a double four, which one move cannot stop."""
        cells = self.cells
        partner: dict[int, int] = {}
        found: list[int] = []
        for w in threes:
            stones = _CELLS_OF[w](cells)
            i = stones.index(0)
            window = _WINDOWS[w]
            a, b = window[i], window[stones.index(0, i + 1)]
            for q, other in ((a, b), (b, a)):
                seen = partner.setdefault(q, other)
                if seen != other and q not in found:
                    found.append(q)
        return found

    def score(self, q: int, c: int) -> int:
        return sum(_VALUES_AT[q](self.value[c]))


def _choose(
    board: _Board, c: int, last: int, mine_last: int, rng: random.Random, style: _Style
) -> int:
    live_mine, live_theirs = board.live[c], board.live[3 - c]
    if live_mine[4]:
        return board.empty_in(next(iter(live_mine[4])))
    # With two or more winning points against us the game is lost; blocking one is still natural.
    if live_theirs[4] and rng.random() < style.block_four:
        return board.empty_in(next(iter(live_theirs[4])))
    if live_mine[3] and rng.random() < style.spot_open_four:
        attack = board.open_four_points(live_mine[3])
        if attack:
            return rng.choice(attack)
    if live_theirs[3] and rng.random() < style.block_three:
        defence = board.open_four_points(live_theirs[3])
        if defence:
            return max(defence, key=lambda q: board.score(q, c))
    cells, value, noise, random_ = board.cells, board.value[c], style.noise, rng.random
    best, best_score = -1, -1.0
    seen = board.seen
    stamp = seen[POINTS] = seen[POINTS] + 1
    for q in _NEAR[last] + _NEAR[mine_last]:
        if not cells[q] and seen[q] != stamp:
            seen[q] = stamp
            s = sum(_VALUES_AT[q](value)) + random_() * noise
            if s > best_score:
                best, best_score = q, s
    if best < 0:  # both recent stones are walled in: look at the whole board
        best = max((q for q in range(POINTS) if not cells[q]), key=lambda q: board.score(q, c))
    return best


def play_game(rng: random.Random, *, black_skill: float, white_skill: float) -> PlayedGame:
    """Play one freestyle game between two heuristic players until a five or a full board.

    Each side wins at once when it can, blocks a four, makes an open four from an open three,
    blocks the opponent's open three, and otherwise plays the best-valued point near the last
    two moves, blurred by noise. Skill in [0, 1] (about rating 900..2100) sets how often a
    threat is missed and how noisy the choice is.
    """
    styles = (_Style.of(black_skill), _Style.of(black_skill), _Style.of(white_skill))
    board = _Board()
    # Most players open on the centre point, the rest a step or two away from it.
    if rng.random() < 0.65:
        first = _CENTRE
    else:
        first = _CENTRE + rng.randint(-2, 2) * BOARD_SIZE + rng.randint(-2, 2)
    points = [first]
    board.play(first, 1)
    last = mine_last = first
    for ply in range(1, POINTS):
        c = 1 + (ply & 1)
        p = _choose(board, c, last, mine_last, rng, styles[c])
        points.append(p)
        if board.play(p, c):
            return PlayedGame(points, _COLOUR[c])
        mine_last, last = last, p
    return PlayedGame(points, None)


def _longest_run(cells: list[int], p: int) -> int:
    c, x, y = cells[p], p % BOARD_SIZE, p // BOARD_SIZE
    longest = 0
    for dx, dy in _DIRECTIONS:
        run = 1
        for sign in (1, -1):
            i, j = x + sign * dx, y + sign * dy
            while _on_board(i, j) and cells[j * BOARD_SIZE + i] == c:
                run += 1
                i, j = i + sign * dx, j + sign * dy
        longest = max(longest, run)
    return longest


def fill_board_without_five(rng: random.Random) -> list[int]:
    """All 225 points in a legal alternating order (113 black, 112 white) whose final position
    has no five anywhere, so no earlier position has one either: a genuine board-full draw.

    Natural play almost never fills the board, so the position is constructed: colour
    ``((x + 2y + k) // 2) % 2`` has no run longer than two in any direction and splits 113/112;
    random colour swaps that keep every run under five make each board different, and stones
    are ordered from the centre outwards, roughly as such a game grows.
    """
    offset = rng.randrange(4)
    flip_x, flip_y, transpose = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5
    cells = [0] * POINTS
    for y in range(BOARD_SIZE):
        for x in range(BOARD_SIZE):
            i = BOARD_SIZE - 1 - x if flip_x else x
            j = BOARD_SIZE - 1 - y if flip_y else y
            i, j = (j, i) if transpose else (i, j)
            cells[y * BOARD_SIZE + x] = 1 + ((i + 2 * j + offset) // 2) % 2
    majority = 1 if cells.count(1) > cells.count(2) else 2
    cells = [1 if v == majority else 2 for v in cells]  # black, who moves first, has the 113th
    for _ in range(300):
        a, b = rng.randrange(POINTS), rng.randrange(POINTS)
        if cells[a] == cells[b]:
            continue
        cells[a], cells[b] = cells[b], cells[a]
        if _longest_run(cells, a) >= 5 or _longest_run(cells, b) >= 5:
            cells[a], cells[b] = cells[b], cells[a]

    def distance(p: int) -> float:
        dx, dy = p % BOARD_SIZE - BOARD_SIZE // 2, p // BOARD_SIZE - BOARD_SIZE // 2
        return math.hypot(dx, dy) + rng.gauss(0.0, 1.2)

    black = sorted((p for p in range(POINTS) if cells[p] == 1), key=distance)
    white = sorted((p for p in range(POINTS) if cells[p] == 2), key=distance)
    order = [p for pair in zip(black, white, strict=False) for p in pair]
    return [*order, black[-1]]
