"""SGF data types: equality ignores positions, and deep trees need no recursion."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from gomoku_archive.sgf import GameTree, Node, Property
from gomoku_archive.sgf.tree import new_node, new_property
from tests.support import main_line


def chain(depth: int, value: str = "aa") -> GameTree:
    tree = GameTree((Node((Property("B", (value,)),)),))
    for _ in range(depth - 1):
        tree = GameTree((Node((Property("B", ("aa",)),)),), (tree,))
    return tree


def test_equality_ignores_positions_but_not_content() -> None:
    here = Property("B", ("aa",), line=1, column=3)
    there = Property("B", ("aa",), line=7, column=9)
    assert here == there and hash(here) == hash(there)
    assert Property("B", ("ab",)) != here
    assert Node((here,), 1, 2) == Node((there,), 5, 5)
    assert GameTree((Node((here,)),), (), 1, 1) == GameTree((Node((there,)),), (), 9, 9)


def test_game_trees_compare_their_variations_in_order() -> None:
    a = GameTree((Node(()),), (chain(1, "aa"), chain(1, "bb")))
    b = GameTree((Node(()),), (chain(1, "bb"), chain(1, "aa")))
    assert a != b
    assert a == GameTree((Node(()),), (chain(1, "aa"), chain(1, "bb")))
    assert a != GameTree((Node(()),), (chain(1, "aa"),))
    assert a.__eq__("not a tree") is NotImplemented


@pytest.mark.slow  # trees 100,000 deep: seconds
def test_deep_trees_compare_hash_and_print_without_recursion() -> None:
    depth = 100_000
    assert depth > sys.getrecursionlimit() * 10
    left, right, other = chain(depth), chain(depth), chain(depth, "bb")
    assert left == right
    assert left != other
    assert hash(left) == hash(right)
    text = repr(left)
    assert text.startswith("GameTree(nodes=(Node(properties=(Property(ident='B'")
    assert text.count("GameTree(") == depth


def test_repr_reads_like_a_dataclass_repr() -> None:
    tree = GameTree((Node((Property("B", ("aa",), 1, 3),), 1, 2),), (chain(1),), 1, 1)
    assert repr(tree) == (
        "GameTree(nodes=(Node(properties=(Property(ident='B', values=('aa',), line=1, column=3),"
        "), line=1, column=2),), variations=(GameTree(nodes=(Node(properties=(Property(ident='B',"
        " values=('aa',), line=0, column=0),), line=0, column=0),), variations=(), line=0, "
        "column=0),), line=1, column=1)"
    )


def test_get_finds_the_first_property_by_its_ff4_name() -> None:
    node = Node((Property("C", ("one",)), Property("AddBlack", ("aa",)), Property("C", ("two",))))
    assert node.get("C") == Property("C", ("one",))
    assert node.get("AB") == Property("AddBlack", ("aa",))
    assert node.get("AddBlack") == Property("AddBlack", ("aa",))
    assert node.get("W") is None


def test_main_line_follows_the_first_variation() -> None:
    tree = GameTree(
        (Node((Property("GM", ("4",)),)),),
        (chain(2, "cc"), chain(1, "zz")),
    )
    assert [node.properties[0].values[0] for node in main_line(tree)] == ["4", "aa", "cc"]


def test_the_parsers_fast_constructors_set_every_field() -> None:
    prop = new_property("AB", ("aa", "bb"), 3, 7)
    node = new_node((prop,), 3, 6)
    assert prop == Property("AB", ("aa", "bb"))
    assert node == Node((Property("AB", ("aa", "bb")),))
    for made, fields_of in ((prop, Property), (node, Node)):
        expected = {f.name: getattr(made, f.name) for f in dataclasses.fields(fields_of)}
        assert set(expected) == set(fields_of.__slots__)
    assert (prop.line, prop.column, node.line, node.column) == (3, 7, 3, 6)
