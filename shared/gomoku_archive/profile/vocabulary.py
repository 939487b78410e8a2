"""The ``gomoku-party-sgf-1`` profile's vocabulary: its name, the months it covers, the longest
game it publishes, and the words the pages and the manifest use for results, terminations and
exclusion reasons. The line itself is the writer's (``profile.writer``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.months import Month

PROFILE_ID = "gomoku-party-sgf-1"
FIRST_PUBLISHED_MONTH = Month(2026, 8)
"""The profile: "Only closed months are published, starting with August 2026"."""


LONGEST_GAME = timedelta(days=31)
"""The longest a published game may last from XST to XET. A start further back is no real start
(a clock reset to 1970, a placeholder date): such a record is excluded as ``incomplete``, never
published with a DT listing thousands of dates. No rated game of a real-time server lasts a
month, and a game started in one month and finished in the next still fits."""

RE_VALUES: Mapping[str, str] = {
    "B+": "Black won by making five or more in a row (XER FIVE)",
    "W+": "White won by making five or more in a row (XER FIVE)",
    "B+R": "Black won because White resigned (XER RESIGNATION)",
    "W+R": "White won because Black resigned (XER RESIGNATION)",
    "B+T": "Black won because White ran out of time (XER TIMEOUT)",
    "W+T": "White won because Black ran out of time (XER TIMEOUT)",
    "Draw": "Drawn: the board filled up (XER BOARD_FULL) or both players agreed (XER AGREEMENT)",
}

TERMINATION_DOCS: Mapping[Termination, str] = {
    Termination.FIVE: "The last move made five or more in a row for the player who played it",
    Termination.RESIGNATION: "A player resigned; the other player wins",
    Termination.TIMEOUT: "A player's clock ran out; the other player wins",
    Termination.BOARD_FULL: "All 225 intersections were filled without a five: a draw",
    Termination.AGREEMENT: "Both players agreed to a draw",
}

REASON_DOCS: Mapping[Reason, str] = {
    Reason.ABORTED: "The game was aborted before it finished",
    Reason.INCOMPLETE: "The record does not describe a whole finished game: its status is not "
    "FINISHED, its result or termination is missing or unknown, its board is not 15 x 15, or it "
    "has no usable start time (none, infinite, outside the years 1 to 9999, after the finish, or "
    f"more than {LONGEST_GAME.days} days before it)",
    Reason.EMPTY: "The game has no moves",
    Reason.MALFORMED: "The stored move list cannot be read as moves with a colour and two "
    "integer coordinates",
    Reason.TURN_ORDER: "Black does not move first, or the colours do not alternate",
    Reason.OUT_OF_BOUNDS: "A move lies outside the 15 x 15 board",
    Reason.OCCUPIED: "A move is played on an intersection that already holds a stone",
    Reason.MOVES_AFTER_FIVE: "Moves continue after a five was made",
    Reason.RESULT_MISMATCH: "The recorded result or termination does not agree with the board",
}

TERMINATION_LABELS: Mapping[Termination, str] = {
    Termination.FIVE: "Five in a row",
    Termination.RESIGNATION: "Resignation",
    Termination.TIMEOUT: "Time ran out",
    Termination.BOARD_FULL: "Board full (draw)",
    Termination.AGREEMENT: "Draw by agreement",
}
"""Short names for the pages, shown beside the codes (the DOCS above say them in full)."""

REASON_LABELS: Mapping[Reason, str] = {
    Reason.ABORTED: "Aborted",
    Reason.INCOMPLETE: "No recorded end",
    Reason.EMPTY: "No moves",
    Reason.MALFORMED: "Unreadable moves",
    Reason.TURN_ORDER: "Wrong turn order",
    Reason.OUT_OF_BOUNDS: "Move off the board",
    Reason.OCCUPIED: "Move on an occupied point",
    Reason.MOVES_AFTER_FIVE: "Moves after a five",
    Reason.RESULT_MISMATCH: "Result disagrees with the board",
}

ALL_REASONS: tuple[str, ...] = tuple(r.value for r in Reason)
"""The manifest's exclusion keys, every one present in every month (zero included)."""
ALL_TERMINATIONS: tuple[str, ...] = tuple(t.value for t in Termination)
"""The manifest's result keys, every one present in every month (zero included)."""
