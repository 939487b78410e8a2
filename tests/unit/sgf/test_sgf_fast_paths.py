"""``sgf check``'s speed paths against its general ones, on mutated archive lines and SGF-like
text cut into chunks anywhere: the parser's hot tokens (a whole ``;B[hh]`` node or ``GN[..]``
property in one regex step) against the general tokens alone, and the checker's runs of moves
against node-by-node checking. Same trees, same findings, and the same parse error, worded the
same, wherever a chunk ends (the audit found ``(;)A[b];`` read as "property A outside a game
tree" by one path and "text 'A' outside a game tree" by the other)."""

from __future__ import annotations

import gzip
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.demo.examples import EXAMPLES_DIR
from gomoku_archive.sgf import (
    CheckReport,
    SgfParseError,
    check_chunks,
    checker,
    iter_game_trees,
    parse,
    parser,
)
from tests.budget import examples
from tests.unit.sgf.test_sgf_parser import SGF_ALPHABET, layout

LINES = gzip.decompress(next(EXAMPLES_DIR.glob("*.sgf.gz")).read_bytes()).decode().splitlines()
GENERAL_ONLY = re.compile(r"(?!)()()|(?!)()()|" + parser._GENERAL_TOKENS)
"""The parser's token regex with its hot alternatives (groups 1 to 4) never matching."""

# Pieces worth dropping into an archive line: SGF syntax, escapes, white space, letters of
# identifiers and of points, digits, a byte that is not ASCII.
PIECES = st.sampled_from(
    [*"()[];\\ \n\r\tABWCGNabhotz09:", "B[", "W[hh]", "A[b]", ";B[hh]", ")(", "\u00e9", "C[x\\]y]"]
)
POSITION = st.integers(0, 1 << 20)
Edit = tuple[int, int, str]


def mutate(line: str, edits: list[Edit]) -> str:
    text = line
    for position, kind, piece in edits:
        at = position % (len(text) + 1)
        if kind == 0:
            text = text[:at] + piece + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + len(piece) :]
        else:
            text = text[:at] + piece + text[at + len(piece) :]
    return text


@st.composite
def inputs(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=3))
        edits = draw(st.lists(st.tuples(POSITION, st.integers(0, 2), PIECES), max_size=4))
        return mutate("\n".join(lines) + "\n", edits).encode()
    return draw(st.text(alphabet=SGF_ALPHABET + "()GMSZ[4]15\u00e9", max_size=120)).encode()


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def parsed(pieces: list[bytes]) -> tuple[list[tuple[object, ...]], tuple[int, int, str] | None]:
    trees = []
    try:
        for tree in iter_game_trees(iter(pieces)):
            trees.append(tree)
    except SgfParseError as error:
        return layout(trees), (error.line, error.column, error.message)
    return layout(trees), None


def summary(report: CheckReport) -> tuple[object, ...]:
    error = report.parse_error
    where = None if error is None else (error.message, error.line, error.column)
    return where, report.games, report.findings, report.counts


def general(run: object, *args: object) -> object:
    """``run(*args)`` with the parser's hot tokens and the checker's runs of moves disabled."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parser, "_TOKEN", GENERAL_ONLY)
        patch.setattr(checker._GameChecker, "moves", lambda self, run, line, column: False)
        return run(*args)  # type: ignore[operator]


@settings(max_examples=examples(2000), deadline=None)
@given(data=inputs(), size=st.sampled_from([1, 2, 3, 5, 8, 13, 64, 1000, 1 << 20]))
def test_the_speed_paths_read_and_check_as_the_general_paths(data: bytes, size: int) -> None:
    pieces = chunks(data, size)
    expected = general(parsed, [data])
    assert parsed(pieces) == expected, data
    assert general(parsed, pieces) == expected, data
    report = general(lambda: summary(check_chunks([data])))
    assert summary(check_chunks(pieces)) == report, data


@pytest.mark.parametrize(
    "data",
    [b"(;)A[b];", b"(;)A[b]", b"(;)A[b] ;", b"(;)A[b]\n(;)", b"x(;)A[b];", b"(;)AB[b][c];"],
)
@pytest.mark.parametrize("size", [1, 2, 4, 5, 7, 100])
def test_text_after_a_game_tree_is_one_error_whatever_the_path_or_chunks(
    data: bytes, size: int
) -> None:
    with pytest.raises(SgfParseError) as whole:
        parse(data)
    ident = "AB" if b"AB" in data else "A"
    error = (1, data.index(b")") + 2, f"text '{ident}' outside a game tree")
    assert (whole.value.line, whole.value.column, whole.value.message) == error
    assert parsed(chunks(data, size))[1] == error
    assert general(parsed, chunks(data, size))[1] == error  # type: ignore[index]
