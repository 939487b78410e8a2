"""The examples of reading an archive shown on the pages (and, word for word, in
docs/downloaders.md: a test holds them equal and runs them): standard-library Python on the
profile's fixed line shape, and sgfmill, whose rows count from the bottom."""

from __future__ import annotations

STDLIB_EXAMPLE = """\
import gzip, re, sys

PROPERTY = re.compile(r"([A-Z]+)\\[((?:[^\\\\\\]]|\\\\.)*)\\]")  # PROP[value], escapes honoured
MOVE = re.compile(r";([BW])\\[([a-o])([a-o])\\]")  # a move node: column, then row

with gzip.open(sys.argv[1], "rt", encoding="utf-8") as archive:
    for line in archive:  # one game per line, in the profile's fixed shape
        game = dict(PROPERTY.findall(line))  # root properties (B and W keep the last move)
        moves = [(c, ord(x) - 97, ord(y) - 97) for c, x, y in MOVE.findall(line)]
        # x counts columns from the left and y rows from the top: aa is (0, 0), hh the centre
        print(game["GN"], game["RE"], game["XER"], len(moves), moves[:3])
"""

SGFMILL_EXAMPLE = """\
import gzip, sys
from sgfmill import sgf

with gzip.open(sys.argv[1], "rb") as archive:
    for line in archive:
        game = sgf.Sgf_game.from_bytes(line)
        moves = []
        for node in game.get_main_sequence()[1:]:
            colour, (row, col) = node.get_move()
            moves.append((colour, col, game.get_size() - 1 - row))  # the profile's (x, y)
        print(game.get_root().get("GN"), game.get_root().get("RE"), moves[:3])
"""
