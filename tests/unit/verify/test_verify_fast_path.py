"""``check_line_fast`` (the profile's exact line shape read by regex) gives exactly what the full
parser path gives, on every line it accepts, for real archive lines and for mutations of them;
and it accepts the lines the exporter writes."""

from __future__ import annotations

import gzip
from datetime import date

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from gomoku_archive.demo.examples import EXAMPLES_DIR
from gomoku_archive.gomoku.game import Color, Move
from gomoku_archive.gomoku.replay import replay
from gomoku_archive.profile.writer import RE_BY_OUTCOME, format_dates
from gomoku_archive.sgf import SgfParseError, parse
from gomoku_archive.verify.line_check import GameFacts, check_game, check_line_fast
from tests.budget import examples

EXAMPLE = next(EXAMPLES_DIR.glob("*.sgf.gz"))
LINES = gzip.decompress(EXAMPLE.read_bytes()).decode().splitlines()


def full_path(text: str) -> object:
    try:
        trees = parse(text)
    except SgfParseError:
        return "syntax"
    return check_game(trees[0]) if len(trees) == 1 else "trees"


def test_every_exported_line_takes_the_fast_path_with_the_same_verdict() -> None:
    for line in LINES:
        fast = check_line_fast(line)
        assert fast is not None, line
        assert fast == full_path(line)


OTHER_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())
"""Every decimal digit of Unicode but ASCII's: int() and an unanchored \\d take them all."""
# Characters worth dropping into a line: SGF syntax, escapes, digits of every script, letters
# past "o", "tt".
NASTY = st.one_of(
    st.sampled_from([*"\\][;()BW0123456789:-, \tTZtoxp", "tt", "\u00e9", "BR[", "C[x]", "\\]"]),
    OTHER_DIGITS,
)
# Pieces that keep a line free of white space and escapes, which the parser reads and the fast
# path leaves to it: on such a line, a verdict of "no problem" must come from the fast path.
SHAPED = st.one_of(
    st.sampled_from([*"0123456789:-,TZBWtox+", "Draw", "B+R", "W+T", ";B[hh]", ";W[aa]"]),
    OTHER_DIGITS,
)
Edit = tuple[int, int, str]
POSITION = st.integers(0, 1 << 20)
"""Where an edit goes, modulo the line's length: about uniform over the line."""


def mutate(line: str, edits: list[Edit]) -> str:
    text = line
    for position, kind, piece in edits:
        at = position % (len(text) + 1)
        if kind == 0:
            text = text[:at] + piece + text[at:]  # insert
        elif kind == 1:
            text = text[:at] + text[at + 1 :]  # delete
        elif kind == 2:
            text = text[:at] + piece + text[at + len(piece) :]  # overwrite
        else:
            text = text[:at] + text[at:].replace("]", "]" + piece, 1)  # after a value
    return text


@settings(max_examples=examples(1500), deadline=None)
@given(
    line=st.sampled_from(LINES),
    edits=st.lists(st.tuples(POSITION, st.integers(0, 3), NASTY), max_size=4),
)
def test_mutated_lines_get_the_same_verdict_or_the_full_path(line: str, edits: list[Edit]) -> None:
    text = mutate(line, edits)
    fast = check_line_fast(text)
    if fast is not None:
        assert fast == full_path(text), text


@settings(max_examples=examples(1500), deadline=None)
@given(
    line=st.sampled_from(LINES),
    edits=st.lists(st.tuples(POSITION, st.integers(0, 3), SHAPED), max_size=3),
)
def test_a_mutated_line_the_full_path_finds_valid_takes_the_fast_path(
    line: str, edits: list[Edit]
) -> None:
    """The other half of the differential test: the full path never accepts a line of the
    profile's plain shape that the fast path refuses (it accepted XST in Arabic-Indic digits,
    which int() reads; the fast path, ASCII only, left it to the full path)."""
    text = mutate(line, edits)
    # check_line reports text around the tree before either path reads it (and the parser
    # skips text before the first tree)
    assume(text.startswith("(") and text.endswith(")"))
    full = full_path(text)
    fast = check_line_fast(text)
    full_finds_it_valid = isinstance(full, GameFacts) and not full.problems
    if full_finds_it_valid or fast is not None:
        assert fast == full, text


@given(line=st.sampled_from(LINES), data=st.data())
def test_swapped_properties_and_moves(line: str, data: st.DataObject) -> None:
    root, *moves = line[1:-1].split(";")[1:]
    props = root.replace("]", "]\\0").split("\\0")[:-1]
    i, j = data.draw(st.integers(0, len(props) - 1)), data.draw(st.integers(0, len(props) - 1))
    props[i], props[j] = props[j], props[i]
    if moves:
        k = data.draw(st.integers(0, len(moves) - 1))
        moves[k] = data.draw(st.sampled_from(["B[tt]", "W[]", "B[zz]", "W[hh]C[x]", moves[k]]))
    text = "(;" + "".join(props) + "".join(";" + m for m in moves) + ")"
    fast = check_line_fast(text)
    if fast is not None:
        assert fast == full_path(text), text


# --- generated games: the fast path accepts exactly the valid ones, with the same facts --------

TEMPLATE = LINES[0]
ROOT_END = TEMPLATE.index(";", 2)
POINTS = [a + b for a in "ghijk" for b in "ghijk"]  # a 5 x 5 square: fives and repeats are common
OUTCOMES = ["B+", "W+", "B+R", "W+R", "B+T", "W+T", "Draw"]
ENDINGS = ["FIVE", "RESIGNATION", "TIMEOUT", "BOARD_FULL", "AGREEMENT"]
INSTANTS = st.sampled_from(
    [
        "2026-08-01T00:00:00Z",
        "2026-08-01T23:59:59Z",
        "2026-08-02T00:00:01Z",
        "2026-07-31T23:59:59Z",
        "2026-12-31T23:00:00Z",
        "2027-01-01T00:30:00Z",
        "2026-02-29T10:00:00Z",  # no such day
        "2026-13-01T10:00:00Z",
        "2026-08-01T24:00:00Z",
    ]
)


def set_value(line: str, ident: str, value: str) -> str:
    start = line.index(f"]{ident}[") + len(ident) + 2
    return line[:start] + value + line[line.index("]", start) :]


def consistent_outcomes(moves: list[Move]) -> list[tuple[str, str]]:
    """The (RE, XER) pairs that make ``moves`` a valid game."""
    return [
        (re_value, termination.value)
        for (termination, result), re_value in RE_BY_OUTCOME.items()
        if replay(moves, result, termination).valid
    ]


@settings(max_examples=examples(1500), deadline=None)
@given(
    distinct=st.sampled_from([True, True, True, False]),
    colours=st.sampled_from(["alternate"] * 6 + ["from white", "one swapped"]),
    outcome=st.sampled_from(["consistent"] * 3 + ["any"]),
    start=INSTANTS,
    end=INSTANTS,
    dt=st.sampled_from(["right"] * 4 + ["first day", "last day", "2026-08-01,02", "2026-08-01"]),
    data=st.data(),
)
def test_generated_games_fast_path_iff_valid(
    distinct: bool,
    colours: str,
    outcome: str,
    start: str,
    end: str,
    dt: str,
    data: st.DataObject,
) -> None:
    points = data.draw(st.lists(st.sampled_from(POINTS), min_size=1, max_size=25, unique=distinct))
    first = 0 if colours != "from white" else 1
    played = ["BW"[(i + first) % 2] for i in range(len(points))]
    if colours == "one swapped":
        played[len(points) // 2] = "BW"[(len(points) // 2 + 1) % 2]
    moves = [
        Move(Color(c), ord(p[0]) - 97, ord(p[1]) - 97) for c, p in zip(played, points, strict=True)
    ]
    pairs = consistent_outcomes(moves) if outcome == "consistent" else []
    re_value, ending = data.draw(
        st.sampled_from(pairs or [(r, e) for r in OUTCOMES for e in ENDINGS])
    )
    if data.draw(st.booleans()):
        start, end = min(start, end), max(start, end)
    if dt == "right":
        try:
            dt = format_dates(date.fromisoformat(start[:10]), date.fromisoformat(end[:10]))
        except ValueError:
            dt = start[:10]
    elif dt in ("first day", "last day"):
        dt = (start if dt == "first day" else end)[:10]
    root = TEMPLATE[:ROOT_END]
    for ident, value in (("RE", re_value), ("XER", ending), ("XST", start), ("XET", end)):
        root = set_value(root, ident, value)
    root = set_value(root, "DT", dt)
    text = root + "".join(f";{c}[{p}]" for c, p in zip(played, points, strict=True)) + ")"
    fast = check_line_fast(text)
    full = full_path(text)
    assert isinstance(full, GameFacts)
    event("valid" if not full.problems else "not valid")
    if fast is None:
        assert full.problems, text  # every valid line of the exact shape takes the fast path
    else:
        assert fast == full, text
        assert not full.problems
