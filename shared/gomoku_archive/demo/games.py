"""Realistic, reproducible demo rows for the game server's ``games`` table (``seed-demo``).

Each closed month gets exactly the requested number of valid ranked freestyle games, really
played by the heuristic in ``gomoku_archive.demo.player``, plus about 20% out-of-scope rows (other
modes, unrated, other rulesets, games still in progress) and a set of broken in-scope rows that
covers every exclusion reason, each labelled with the reason the export must give it. Pure: no
I/O; the CLI inserts the rows.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from functools import partial
from statistics import NormalDist

from gomoku_archive.demo.defects import DEFECTS, Recipe, moves_json
from gomoku_archive.demo.player import PlayedGame, fill_board_without_five, play_game
from gomoku_archive.demo.rows import SourceGame
from gomoku_archive.gomoku.game import BOARD_SIZE, Color, Reason, Result, Termination
from gomoku_archive.profile.months import Month

SCOPE_MODE = "RANKED"
SCOPE_RULESET = "FREESTYLE"
OTHER_MODES = ("CASUAL", "FRIENDLY", "PRIVATE", "TOURNAMENT", "CHALLENGE", "REMATCH", "PUZZLE")
OTHER_RULESETS = ("STANDARD", "RENJU", "SWAP2", "PENTE", "NINUKI_RENJU", "CARO")

_TIME_CONTROLS = (60, 180, 300, 600, None)
_TIME_CONTROL_WEIGHTS = (28, 32, 22, 14, 4)
# How valid games end, before the guarantees below. Board-full and agreement draws are rare
# online; a natural board-full draw (no five in 225 moves) also comes out of play now and then.
_ENDINGS = (
    Termination.FIVE,
    Termination.RESIGNATION,
    Termination.TIMEOUT,
    Termination.AGREEMENT,
    Termination.BOARD_FULL,
)
_ENDING_WEIGHTS = (70.0, 20.0, 8.0, 1.5, 0.5)
_GUARANTEE_ENDINGS_FROM = 50
_GUARANTEE_EDGES_FROM = 10
_MICROSECOND = timedelta(microseconds=1)
_ELO = NormalDist(1500, 300)
_SHORT_GAME = 200


def generate_month(month: Month, games: int, *, seed: int) -> Iterator[SourceGame]:
    """The demo rows of one month, lazily, in a shuffled order, all finishing inside the month
    (or not finished at all).

    Exactly ``games`` rows are valid in-scope games; on top come about 20% out-of-scope rows
    (at least one of each kind) and at least one broken row per exclusion reason, with one more
    per hundred games. From ``games >= 50`` the valid games include at least one of every
    termination; from ``games >= 10`` one finishes exactly at 00:00:00 UTC on the first (having
    started in the previous month), one in the month's last second and one just after a
    midnight inside the month. The same seed and month
    always give the same rows, whatever other months are generated.
    """
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    # Not for security (S311): a seeded generator is the point, so the demo is reproducible.
    rng = random.Random(f"gomoku-party-demo/{seed}/{month}")  # noqa: S311
    rows = _MonthRows(month, rng, games)
    yield from (make() for make in rows.plan(games))


def generate_months(
    first: Month, last: Month, games_per_month: int, *, seed: int = 2026
) -> Iterator[SourceGame]:
    """``generate_month`` for every month from ``first`` to ``last`` inclusive, oldest first."""
    month = first
    while month <= last:
        yield from generate_month(month, games_per_month, seed=seed)
        month = month.next()


def _in_scope(mode: str, rated: bool, ruleset: str, finished_at: datetime | None) -> bool:
    return mode == SCOPE_MODE and rated and ruleset == SCOPE_RULESET and finished_at is not None


class _Placement(Enum):
    """Where a game's finish falls in its month."""

    ANYWHERE = "anywhere"
    DAY_EDGE = "day_edge"  # started before midnight, finished after it
    MONTH_EDGE = "month_edge"  # started in the previous month
    MONTH_START = "month_start"  # finished at exactly 00:00:00.000000 on the first
    MONTH_LAST_SECOND = "month_last_second"  # finished in the month's very last second


_NO_END = (Termination.FIVE, Result.DRAW)  # placeholders, replaced by NULLs for unfinished rows
_OUTSIDE = ("other_mode", "unrated", "other_ruleset", "in_progress")
_OUTSIDE_WEIGHTS = (55, 10, 25, 10)


def _win(colour: Color) -> Result:
    return Result.BLACK_WIN if colour is Color.BLACK else Result.WHITE_WIN


@dataclass(frozen=True, slots=True)
class _Player:
    id: uuid.UUID | None
    rating: int


@dataclass(frozen=True, slots=True)
class _Pairing:
    black: _Player
    white: _Player
    black_rating: int | None
    white_rating: int | None

    def skill(self, colour: Color) -> float:
        player = self.black if colour is Color.BLACK else self.white
        return (player.rating - 900) / 1200  # 0 at 900 Elo, 1 at 2100


@dataclass(frozen=True, slots=True)
class _Ending:
    points: list[int]
    termination: Termination
    result: Result
    flagged: Color | None = None
    """Whose clock ran out, for a timeout: their whole time budget is spent."""


class _MonthRows:
    """The random state of one month's generation and the helpers its recipes share."""

    def __init__(self, month: Month, rng: random.Random, games: int) -> None:
        self.month = month
        self.rng = rng
        # A player plays a handful of games a month, against opponents of similar rating, as
        # ranked matchmaking pairs them. Ratings are drawn one per quantile of N(1500, 300), so
        # that even a small pool has the right spread. A few accounts have been deleted since:
        # their games keep NULL player ids.
        size = max(24, games // 3)
        self.players = [
            _Player(
                None if rng.random() < 0.01 else self.uuid(),
                min(2700, max(600, round(_ELO.inv_cdf((i + rng.random()) / size)))),
            )
            for i in range(size)
        ]

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    # -- the plan ---------------------------------------------------------------------------

    def plan(self, games: int) -> list[Callable[[], SourceGame]]:
        rng = self.rng
        endings = rng.choices(_ENDINGS, _ENDING_WEIGHTS, k=games)
        if games >= _GUARANTEE_ENDINGS_FROM:
            spare = [i for i, e in enumerate(endings) if e is Termination.FIVE]
            rng.shuffle(spare)
            for ending in _ENDINGS[1:]:
                if ending not in endings:
                    endings[spare.pop()] = ending
        placements = [self._placement() for _ in range(games)]
        if games >= _GUARANTEE_EDGES_FROM:
            placements[:3] = (
                _Placement.MONTH_START,
                _Placement.MONTH_LAST_SECOND,
                _Placement.DAY_EDGE,
            )
        plan: list[Callable[[], SourceGame]] = [
            partial(self.valid, ending, placement)
            for ending, placement in zip(endings, placements, strict=True)
        ]
        outside = max(len(_OUTSIDE), round(games * 0.2))
        kinds = [*_OUTSIDE, *rng.choices(_OUTSIDE, _OUTSIDE_WEIGHTS, k=outside - len(_OUTSIDE))]
        plan += [partial(self.outside, kind) for kind in kinds]
        # Every recipe once, then extra broken rows in proportions like a live server's:
        # aborted games are by far the most common.
        recipes = [*DEFECTS]
        extra_weights = [6.0 if reason is Reason.ABORTED else 1.0 for reason, _ in DEFECTS]
        recipes += rng.choices(DEFECTS, extra_weights, k=games // 100)
        plan += [partial(self.defect, reason, recipe) for reason, recipe in recipes]
        rng.shuffle(plan)
        return plan

    def _placement(self) -> _Placement:
        r = self.rng.random()
        if r < 0.01:
            return _Placement.MONTH_EDGE
        if r < 0.04:
            return _Placement.DAY_EDGE
        return _Placement.ANYWHERE

    # -- row kinds --------------------------------------------------------------------------

    def valid(self, planned: Termination, placement: _Placement) -> SourceGame:
        pairing = self.pairing()
        if planned is Termination.BOARD_FULL:
            ending = _Ending(fill_board_without_five(self.rng), planned, Result.DRAW)
            return self.row(pairing, ending, placement=placement)
        played = self.play(pairing)
        # A game planned to end in a five may fill the board instead, a genuine rare draw; the
        # other endings need a winner to cut short, and are replayed so the plan holds.
        while played.winner is None and planned is not Termination.FIVE:
            played = self.play(pairing)
        return self.row(pairing, self.conclude(played, planned), placement=placement)

    def five_game(self) -> SourceGame:
        """A valid game won by a five, the base most broken rows are made from."""
        pairing = self.pairing()
        while True:
            played = self.play(pairing)
            # Well short of a full board, so that a broken copy can always be played on.
            if played.winner is not None and len(played.points) < _SHORT_GAME:
                return self.row(pairing, self.conclude(played, Termination.FIVE))

    def outside(self, kind: str) -> SourceGame:
        rng = self.rng
        if kind == "in_progress":  # still being played: no finish time, never a candidate
            pairing = self.pairing()
            played = self.play(pairing)
            ending = _Ending(played.points[: rng.randint(1, len(played.points) - 1)], *_NO_END)
            return replace(
                self.row(pairing, ending),
                status="IN_PROGRESS",
                finished_at=None,
                result=None,
                termination=None,
                in_scope=False,
            )
        game = self.five_game()
        if kind == "other_mode":
            mode = rng.choice(OTHER_MODES)
            mixed = mode in ("CHALLENGE", "REMATCH") and rng.random() < 0.5
            rated = mode == "TOURNAMENT" or mixed
            game = replace(game, mode=mode, rated=rated)
        elif kind == "unrated":
            game = replace(game, rated=False)
        else:
            ruleset = rng.choice(OTHER_RULESETS)
            game = replace(game, ruleset=ruleset, board_size=19 if ruleset == "PENTE" else 15)
        in_scope = _in_scope(game.mode, game.rated, game.ruleset, game.finished_at)
        return replace(game, in_scope=in_scope)

    def defect(self, reason: Reason, recipe: Recipe) -> SourceGame:
        row = replace(recipe(self), expected_reason=reason)
        assert row.in_scope
        return row

    # -- building blocks --------------------------------------------------------------------

    def pairing(self) -> _Pairing:
        rng, players = self.rng, self.players
        i = rng.randrange(len(players))
        j = min(len(players) - 1, max(0, i + rng.choice((-4, -3, -2, -1, 1, 2, 3, 4))))
        if j == i:
            j = i - 1 if i else i + 1
        black, white = (players[i], players[j]) if rng.random() < 0.5 else (players[j], players[i])
        return _Pairing(black, white, self._rating(black), self._rating(white))

    def _rating(self, player: _Player) -> int | None:
        # The stored rating is the one at game start, which drifts during the month; a few
        # rows have none (provisional accounts).
        if self.rng.random() < 0.01:
            return None
        return player.rating + round(self.rng.gauss(0, 15))

    def play(self, pairing: _Pairing) -> PlayedGame:
        return play_game(
            self.rng,
            black_skill=pairing.skill(Color.BLACK),
            white_skill=pairing.skill(Color.WHITE),
        )

    def conclude(self, played: PlayedGame, planned: Termination) -> _Ending:
        """Turn a game played to its natural end into the planned kind of ending.

        Cutting the move list short never leaves a five on the board, because play stops at the
        first one: the loser resigns on one of their last turns, a clock runs out somewhere in
        the second half, or the players agree a draw.
        """
        points, winner, rng = played.points, played.winner, self.rng
        if winner is None:
            return _Ending(points, Termination.BOARD_FULL, Result.DRAW)
        n = len(points)  # at least 9: a five needs five stones of one colour
        if planned is Termination.RESIGNATION:
            # Ply n - 2 is the loser's turn facing the winning threat; earlier ones are
            # resignations of a player who is behind.
            cut = n - 2 - 2 * rng.choice((0, 0, 0, 1, 1, 2, 3))
            return _Ending(points[:cut], planned, _win(winner))
        if planned is Termination.TIMEOUT:
            cut = rng.randint(n // 3, n - 1)
            flagged = Color.BLACK if cut % 2 == 0 else Color.WHITE
            return _Ending(points[:cut], planned, _win(flagged.other), flagged)
        if planned is Termination.AGREEMENT:
            return _Ending(points[: rng.randint((n + 1) // 2, n - 1)], planned, Result.DRAW)
        return _Ending(points, Termination.FIVE, _win(winner))

    def row(
        self, pairing: _Pairing, ending: _Ending, placement: _Placement = _Placement.ANYWHERE
    ) -> SourceGame:
        rng = self.rng
        time_control = rng.choices(_TIME_CONTROLS, _TIME_CONTROL_WEIGHTS)[0]
        if ending.flagged is not None and time_control is None:
            time_control = 60  # only a timed game can be lost on time
        duration = self._duration(ending, time_control)
        started_at, finished_at = self._times(duration, placement)
        return SourceGame(
            id=self.uuid(),
            mode=SCOPE_MODE,
            rated=True,
            ruleset=SCOPE_RULESET,
            board_size=BOARD_SIZE,
            status="FINISHED",
            started_at=started_at,
            finished_at=finished_at,
            result=ending.result.value,
            termination=ending.termination.value,
            moves=moves_json(ending.points),
            time_control_seconds=time_control,
            black_rating=pairing.black_rating,
            white_rating=pairing.white_rating,
            black_player_id=pairing.black.id,
            white_player_id=pairing.white.id,
            expected_reason=None,
            in_scope=True,
        )

    def _duration(self, ending: _Ending, time_control: int | None) -> timedelta:
        """A few seconds a move, scaled to the time control (a player's n exponential think
        times sum to a gamma variate); a player short of time plays faster, so a clock stays
        within its budget, and a flagged player's whole budget is spent."""
        rng = self.rng
        mean = time_control / 40 if time_control else 9.0
        n = len(ending.points)
        # 0.3 s of network and UI latency a move.
        clocks = [rng.gammavariate(k, mean) + 0.3 * k if k else 0.0 for k in ((n + 1) // 2, n // 2)]
        if ending.termination is Termination.RESIGNATION:
            clocks[n & 1] += rng.uniform(2, 3 * mean)  # the resigner's last thought
        if time_control:
            clocks = [min(c, time_control * rng.uniform(0.75, 0.98)) for c in clocks]
            if ending.flagged is not None:
                clocks[0 if ending.flagged is Color.BLACK else 1] = time_control
        return timedelta(seconds=sum(clocks))

    def _times(self, duration: timedelta, placement: _Placement) -> tuple[datetime, datetime]:
        rng, start, end = self.rng, self.month.start, self.month.end
        # About half the rows carry microseconds, as PostgreSQL's now() does; the rest come
        # from a client that rounds to the second.
        precise = rng.random() < 0.5
        if not precise:
            duration = timedelta(seconds=max(1, round(duration.total_seconds())))
        if placement is _Placement.MONTH_START:
            finished = start
        elif placement is _Placement.MONTH_LAST_SECOND:
            finished = end - (_MICROSECOND if precise else timedelta(seconds=1))
        elif placement is _Placement.MONTH_EDGE:
            finished = start + duration * rng.random()
        elif placement is _Placement.DAY_EDGE:
            midnight = start + timedelta(days=rng.randrange(1, (end - start).days))
            finished = midnight + duration * rng.random()
        else:
            finished = start + duration + (end - start - duration) * rng.random()
        if not precise:
            finished = finished.replace(microsecond=0)
        finished = min(finished, end - _MICROSECOND)
        return finished - duration, finished
