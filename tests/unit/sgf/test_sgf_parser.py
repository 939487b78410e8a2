"""The SGF reader: grammar, value decoding, charsets, error positions, streaming, depth, speed."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gomoku_archive.sgf import GameTree, Node, Property, SgfParseError, iter_game_trees, parse
from gomoku_archive.sgf.parser import parse_with_charsets
from tests.budget import examples
from tests.support import main_line

SGF_ALPHABET = "();[]\\ABWab\n :"


def layout(trees: list[GameTree]) -> list[tuple[object, ...]]:
    """Everything about the trees, positions included (equality ignores positions)."""
    rows: list[tuple[object, ...]] = []
    for top in trees:
        for tree in top.walk():
            rows.append(("tree", tree.line, tree.column, len(tree.variations)))
            for node in tree.nodes:
                rows.append(("node", node.line, node.column))
                rows.extend(("prop", p.ident, p.values, p.line, p.column) for p in node.properties)
    return rows


def outcome(
    run: Iterator[GameTree],
) -> tuple[list[tuple[object, ...]], tuple[int, int, str] | None]:
    trees: list[GameTree] = []
    try:
        for tree in run:
            trees.append(tree)
    except SgfParseError as error:
        return layout(trees), (error.line, error.column, error.message)
    return layout(trees), None


def chunked(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def one(ident: str, *values: str) -> Property:
    return Property(ident, values)


def test_a_small_collection_parses_into_nodes_properties_and_variations() -> None:
    trees = parse(b"(;FF[4]GM[1]SZ[19];B[aa];W[bb](;B[cc])(;B[dd];W[ee]))(;GM[4])")
    assert trees == [
        GameTree(
            (
                Node((one("FF", "4"), one("GM", "1"), one("SZ", "19"))),
                Node((one("B", "aa"),)),
                Node((one("W", "bb"),)),
            ),
            (
                GameTree((Node((one("B", "cc"),)),)),
                GameTree((Node((one("B", "dd"),)), Node((one("W", "ee"),)))),
            ),
        ),
        GameTree((Node((one("GM", "4"),)),)),
    ]


def test_positions_are_one_based_line_and_column_of_each_token() -> None:
    [tree] = parse(b"\n  (;FF[4]\r\n   AB[aa]\n  [bb];W[cc]\n  (;C[x]))")
    assert (tree.line, tree.column) == (2, 3)
    root, move = tree.nodes
    assert (root.line, root.column) == (2, 4)
    assert [(p.ident, p.values, p.line, p.column) for p in root.properties] == [
        ("FF", ("4",), 2, 5),
        ("AB", ("aa", "bb"), 3, 4),
    ]
    assert (move.line, move.column, move.properties[0].line, move.properties[0].column) == (
        4,
        7,
        4,
        8,
    )
    child = tree.variations[0]
    assert (child.line, child.column, child.nodes[0].properties[0].column) == (5, 3, 5)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (rb"a\]b", "a]b"),
        (rb"a\\b", "a\\b"),
        (rb"a\:b", "a:b"),
        (rb"\x\y", "xy"),
        (b"soft\\\nbreak", "softbreak"),
        (b"soft\\\r\nbreak", "softbreak"),
        (b"soft\\\rbreak", "softbreak"),
        (b"soft\\\n\rbreak", "softbreak"),
        (b"hard\nbreak\r\nkept", "hard\nbreak\r\nkept"),
        (b"ends with \\\\", "ends with \\"),
        (b"", ""),
        (rb"(;B[aa\])", "(;B[aa])"),
        (b"tab\tand  spaces", "tab\tand  spaces"),
    ],
)
def test_values_are_decoded_the_ff4_way(raw: bytes, value: str) -> None:
    [tree] = parse(b"(;C[" + raw + b"])")
    assert tree.nodes[0].properties[0].values == (value,)


def test_the_fast_and_slow_value_paths_agree_on_lookahead_edge_cases() -> None:
    # A second value after white space must join the property, not start a stray value.
    [tree] = parse(b"(;AB[aa] [bb]\n[cc];W[dd]\n)")
    assert tree.nodes[0].properties == (one("AB", "aa", "bb", "cc"),)
    assert tree.nodes[1].properties == (one("W", "dd"),)


def test_old_identifiers_with_lowercase_letters_are_kept_as_written() -> None:
    [tree] = parse(b"(;AddBlack[aa]wHite[bb];Black[cc])")
    root = tree.nodes[0]
    assert [p.ident for p in root.properties] == ["AddBlack", "wHite"]
    assert [p.name for p in root.properties] == ["AB", "H"]
    assert root.get("AB") is root.properties[0]
    assert tree.nodes[1].get("B") == one("Black", "cc")
    assert root.get("W") is None


def test_text_before_the_first_game_tree_is_skipped() -> None:
    data = b"\xef\xbb\xbfFrom: someone\nSubject: a game\n\n(;B[aa])"
    [tree] = parse(data)
    assert (tree.line, tree.column) == (4, 1)


@pytest.mark.parametrize(
    ("data", "line", "column", "message"),
    [
        (b"", 1, 1, "no game tree: expected '(' before the end of the input"),
        (b"just text\n", 2, 1, "no game tree: expected '(' before the end of the input"),
        (b"()", 1, 2, "empty game tree '()': a game tree needs at least one ';' node"),
        (
            b"(;B[aa](;W[bb])()) ",
            1,
            17,
            "empty game tree '()': a game tree needs at least one ';' node",
        ),
        (b"(;B[aa", 1, 4, "property value of B is never closed: '[' without a matching ']'"),
        (
            b"(;B[aa])\n(;W[bb]\r\n;C[x\\]",
            3,
            3,
            "property value of C is never closed: '[' without a matching ']'",
        ),
        (b"(;B[aa])x", 1, 9, "text 'x' outside a game tree"),
        (b"(;B[aa]) ;", 1, 10, "';' outside a game tree"),
        (b"(;B[aa]))", 1, 9, "')' outside a game tree"),
        (b"(;b[aa])", 1, 3, "property identifier 'b' has no uppercase letter"),
        (b"(;B)", 1, 3, "property B has no value"),
        (b"(;B;W[aa])", 1, 3, "property B has no value"),
        (b"(;AB  \n)", 1, 3, "property AB has no value"),
        (
            b"(;B[aa](;W[bb]);B[cc])",
            1,
            16,
            "node after a variation: a game tree's nodes come before its variations",
        ),
        (b"(;B[aa](;W[bb])C[x])", 1, 16, "property C outside a node: variations end a game tree"),
        (b"(;B[aa](;W[bb])Cx[x])", 1, 16, "property Cx outside a node: variations end a game tree"),
        (b"((;B[aa]))", 1, 2, "expected ';' after '('"),
        (b"(B[aa])", 1, 2, "expected ';' after '(', found property B"),
        (b"(;[aa])", 1, 3, "property value without an identifier"),
        (b"(;B[aa]1)", 1, 8, "unexpected character '1'"),
        (b"(;C[two\nlines]B[aa] 1)", 2, 13, "unexpected character '1'"),
        (b"(;B[aa](;W[bb])", 1, 1, "game tree is never closed: '(' without a matching ')'"),
        (b"(;B[aa](;W[bb](;B[cc])", 1, 8, "game tree is never closed: '(' without a matching ')'"),
    ],
)
def test_errors_say_where_and_what(data: bytes, line: int, column: int, message: str) -> None:
    with pytest.raises(SgfParseError) as caught:
        parse(data)
    error = caught.value
    assert (error.line, error.column, error.message) == (line, column, message)
    assert str(error) == f"line {line}, column {column}: {message}"
    assert isinstance(error, ValueError)


def test_each_game_tree_is_decoded_with_its_own_charset() -> None:
    data = (
        "(;CA[ISO-8859-1]C[caf\xe9])".encode("latin-1")
        + "(;C[caf\xe9 \u68cb])".encode()
        + "(;C[caf\xe9])".encode("latin-1")  # no CA, not UTF-8: FF[4]'s latin-1
        + "(;CA[UTF-8]GN[\u68cb]C[caf\xe9])".encode("latin-1", errors="ignore")
    )
    results = parse_with_charsets(data)
    assert [tree.nodes[0].get("C") for tree, _ in results] == [
        one("C", "caf\xe9"),
        one("C", "caf\xe9 \u68cb"),
        one("C", "caf\xe9"),
        one("C", "caf\xe9"),
    ]
    assert [(charset.declared, charset.codec, charset.known) for _, charset in results] == [
        ("ISO-8859-1", "iso8859-1", True),
        (None, "utf-8", True),
        (None, "utf-8", True),
        ("UTF-8", "utf-8", True),
    ]
    assert [prop.ident for prop in results[2][1].fallbacks] == ["C"]
    assert [prop.ident for prop in results[3][1].fallbacks] == ["C"]


def test_the_grammar_is_read_on_bytes_before_the_charset_is_applied() -> None:
    # Shift_JIS "\u8868" is 0x95 0x5C: its second byte is a backslash, which the writer must
    # escape on the byte level, and the reader unescapes before decoding.
    data = b"(;CA[Shift_JIS]C[\x95\\\\])"
    [tree] = parse(data)
    assert tree.nodes[0].get("C") == one("C", "\u8868")


def test_an_unknown_charset_falls_back_to_latin1() -> None:
    [(tree, charset)] = parse_with_charsets("(;CA[klingon]C[caf\xe9])".encode("latin-1"))
    assert tree.nodes[0].get("C") == one("C", "caf\xe9")
    assert (charset.declared, charset.known, charset.codec) == ("klingon", False, "iso8859-1")


def test_text_input_is_taken_as_already_decoded() -> None:
    [tree] = parse("(;CA[ISO-8859-1]C[\u68cb \xe9])")
    assert tree.nodes[0].get("C") == one("C", "\u68cb \xe9")


STREAM_SAMPLE = (
    "junk before\r\n(;FF[4]CA[UTF-8]GN[\u68cb\u8b5c]C[a\\]b\\\\c\\\r\nd\\\n\re]\r\n"
    "AddBlack[aa:bb]\r\n[cc];B[dd]\n;W[ee]( ;B[ff] C[\xe9\r]\r)(;W[gg];B[hh]))\n"
    "(;CA[latin1]C[\xe9]) \n\n(;B[aa];W[bb];B[cc])\n"
).encode("utf-8")


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64, 10_000])
def test_streaming_in_chunks_gives_what_parse_gives(size: int) -> None:
    expected = outcome(iter(parse(STREAM_SAMPLE)))
    assert expected[1] is None
    assert outcome(iter_game_trees(chunked(STREAM_SAMPLE, size))) == expected


def test_streaming_yields_each_tree_before_reading_the_next() -> None:
    delivered: list[int] = []

    def chunks() -> Iterator[bytes]:
        for index, part in enumerate([b"(;B[aa]", b")(;W", b"[bb])", b"garbage"]):
            delivered.append(index)
            yield part

    trees = iter_game_trees(chunks())
    assert next(trees) == GameTree((Node((one("B", "aa"),)),))
    assert delivered == [0, 1]
    assert next(trees) == GameTree((Node((one("W", "bb"),)),))
    with pytest.raises(
        SgfParseError, match="line 1, column 17: text 'garbage' outside a game tree"
    ):
        next(trees)


def test_a_huge_value_in_small_chunks_is_read_in_linear_time() -> None:
    comment = b"x" * 2_000_000
    start = time.perf_counter()
    [tree] = iter_game_trees(chunked(b"(;C[" + comment + b"])", 4096))
    assert time.perf_counter() - start < 5
    assert len(tree.nodes[0].properties[0].values[0]) == len(comment)


def parse_or_error(data: bytes | str) -> list[GameTree] | SgfParseError:
    try:
        return parse(data)
    except SgfParseError as error:
        return error


def is_trees_or_located_error(result: list[GameTree] | SgfParseError) -> bool:
    if isinstance(result, SgfParseError):
        return result.line >= 1 and result.column >= 1 and bool(result.message)
    return bool(result) and all(isinstance(tree, GameTree) for tree in result)


@given(st.binary(max_size=300))
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
def test_any_bytes_give_trees_or_a_parse_error(data: bytes) -> None:
    assert is_trees_or_located_error(parse_or_error(data))


@given(st.text(alphabet=SGF_ALPHABET, max_size=120))
@settings(max_examples=examples(600))
def test_sgf_like_text_gives_trees_or_a_parse_error(text: str) -> None:
    assert is_trees_or_located_error(parse_or_error(text))
    assert is_trees_or_located_error(parse_or_error(text.encode()))


@given(
    st.text(alphabet=SGF_ALPHABET + "\r\xe9", max_size=80).map(lambda t: ("(;" + t).encode()),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=10),
)
@settings(max_examples=examples(400))
def test_any_split_into_chunks_gives_the_same_result(data: bytes, sizes: list[int]) -> None:
    def split() -> Iterator[bytes]:
        start, index = 0, 0
        while start < len(data):
            size = sizes[index % len(sizes)]
            yield data[start : start + size]
            start, index = start + size, index + 1

    streamed = outcome(iter_game_trees(split()))
    assert streamed == outcome(iter_game_trees([data]))
    whole = parse_or_error(data)
    if isinstance(whole, SgfParseError):
        assert streamed[1] == (whole.line, whole.column, whole.message)
    else:
        assert streamed == (layout(whole), None)


@pytest.mark.slow  # 100,000 variations: seconds
def test_100000_nested_variations_parse_without_recursion() -> None:
    depth = 100_000
    [tree] = parse("(;B[aa]" * depth + ")" * depth)
    levels = list(tree.walk())
    assert len(levels) == depth
    assert levels[-1].nodes == (Node((one("B", "aa"),)),)
    assert len(list(main_line(tree))) == depth


def _best_time(data: str) -> float:
    best = float("inf")
    gc.collect()
    gc.disable()  # collections of the growing result would blur the comparison
    try:
        for _ in range(3):
            # CPU time of this process: other processes on a loaded machine do not count.
            start = time.process_time()
            parse(data)
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


@pytest.mark.slow  # times parses of up to 100,000 games: seconds
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: "(;B[aa]" * n + ")" * n, id="nested"),
        pytest.param(lambda n: "(;GM[4]SZ[15];B[hh];W[ih])\n" * n, id="collection"),
    ],
)
def test_parsing_time_grows_linearly(make: Callable[[int], str]) -> None:
    small, large = _best_time(make(25_000)), _best_time(make(100_000))
    # Linear is 4x; quadratic would be 16x. 8x leaves room for a noisy machine.
    assert large < 8 * small, (small, large)


def test_error_messages_quote_long_identifiers_shortened() -> None:
    with pytest.raises(SgfParseError) as caught:
        parse(b"(;" + b"Ab" * 50_000 + b")")
    assert caught.value.message == "property " + "Ab" * 18 + "A... has no value"
