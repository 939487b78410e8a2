"""``check_line_fast`` (the profile's exact line shape read by regex) gives exactly what the full
parser path gives, on every line it accepts, for real archive lines and for mutations of them;
and it accepts the lines the exporter writes."""

from __future__ import annotations

import gzip

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.demo.examples import EXAMPLES_DIR
from shared.sgf import SgfParseError, parse
from shared.verify.game import check_game, check_line_fast

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


# Characters worth dropping into a line: SGF syntax, escapes, digits, letters past "o", "tt".
NASTY = st.sampled_from(
    [*"\\][;()BW0123456789:-, \tTZtoxp", "tt", "\u00e9", "BR[", "C[x]", "\\]"]
)


@settings(max_examples=1500, deadline=None)
@given(
    line=st.sampled_from(LINES),
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 3), NASTY), max_size=4),
)
def test_mutated_lines_get_the_same_verdict_or_the_full_path(
    line: str, edits: list[tuple[int, int, str]]
) -> None:
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
    fast = check_line_fast(text)
    if fast is not None:
        assert fast == full_path(text), text


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
