"""The SGF tree as plain, immutable data: a game tree is a sequence of nodes followed by child
game trees (its variations); a node is a list of properties; a property is an identifier with one
or more decoded values. Positions (1-based line and column) are kept for diagnostics and never
take part in equality.

A game tree may be nested 100,000 levels deep (a long game written as one variation per move),
so equality, hashing and repr of ``GameTree`` walk the tree with an explicit stack instead of
recursing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_DROP_LOWERCASE = str.maketrans("", "", "abcdefghijklmnopqrstuvwxyz")


def property_name(ident: str) -> str:
    """The FF[4] name of an identifier as written: its uppercase letters only.

    FF[1]-FF[3] allowed lowercase letters inside identifiers (``AddBlack``, ``White``); FF[4]'s
    conversion notes say to drop them, so ``AddBlack`` means ``AB``.
    """
    return ident if ident.isupper() else ident.translate(_DROP_LOWERCASE)


@dataclass(frozen=True, slots=True)
class Property:
    """One property of a node, e.g. ``AB[aa][bb]`` is ``Property("AB", ("aa", "bb"))``."""

    ident: str
    """The identifier as written, old FF[3] lowercase letters included (``AddBlack``)."""
    values: tuple[str, ...]
    """Decoded values: escapes removed (``\\x`` is ``x``) and soft line breaks dropped."""
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        """The identifier's meaning in FF[4]: its uppercase letters (``AddBlack`` -> ``AB``)."""
        return property_name(self.ident)


@dataclass(frozen=True, slots=True)
class Node:
    """A node: the properties written after one ``;``."""

    properties: tuple[Property, ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def get(self, ident: str) -> Property | None:
        """The first property whose FF[4] name is ``ident``'s (so ``get("AB")`` also finds an
        FF[3] ``AddBlack``), or None."""
        wanted = property_name(ident)
        for prop in self.properties:
            written = prop.ident
            if written == wanted or (not written.isupper() and property_name(written) == wanted):
                return prop
        return None


# Fast constructors for the parser, which makes about a hundred of these per game: a frozen
# dataclass's __init__ calls object.__setattr__ once per field, while setting the slots through
# their descriptors takes about half the time. They must set every field (a test checks this).
def _slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    setter: Callable[[object, object], None] = vars(cls)[name].__set__
    return setter


_new_object = object.__new__
_set_ident, _set_values = _slot_setter(Property, "ident"), _slot_setter(Property, "values")
_set_line, _set_column = _slot_setter(Property, "line"), _slot_setter(Property, "column")
_set_properties = _slot_setter(Node, "properties")
_set_node_line, _set_node_column = _slot_setter(Node, "line"), _slot_setter(Node, "column")


def new_property(ident: str, values: tuple[str, ...], line: int, column: int) -> Property:
    """``Property(ident, values, line, column)``, faster."""
    prop: Property = _new_object(Property)
    _set_ident(prop, ident)
    _set_values(prop, values)
    _set_line(prop, line)
    _set_column(prop, column)
    return prop


def new_node(properties: tuple[Property, ...], line: int, column: int) -> Node:
    """``Node(properties, line, column)``, faster."""
    node: Node = _new_object(Node)
    _set_properties(node, properties)
    _set_node_line(node, line)
    _set_node_column(node, column)
    return node


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GameTree:
    """``"(" Sequence GameTree* ")"``: the nodes of the sequence, then the child game trees.

    The first child continues the main line; the others are variations.
    """

    nodes: tuple[Node, ...]
    variations: tuple[GameTree, ...] = ()
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameTree):
            return NotImplemented
        pending: list[tuple[GameTree, GameTree]] = [(self, other)]
        while pending:
            left, right = pending.pop()
            if left is right:
                continue
            if left.nodes != right.nodes or len(left.variations) != len(right.variations):
                return False
            pending.extend(zip(left.variations, right.variations, strict=True))
        return True

    def __hash__(self) -> int:
        # Pre-order (nodes, number of children) pairs determine the tree's shape and content.
        return hash(tuple((tree.nodes, len(tree.variations)) for tree in self.walk()))

    def __repr__(self) -> str:
        parts: list[str] = []
        pending: list[GameTree | str] = [self]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            parts.append(f"GameTree(nodes={item.nodes!r}, variations=(")
            tail = f"), line={item.line!r}, column={item.column!r})"
            pending.append("," + tail if len(item.variations) == 1 else tail)
            for index in range(len(item.variations) - 1, -1, -1):
                pending.append(item.variations[index])
                if index:
                    pending.append(", ")
        return "".join(parts)

    def walk(self) -> Iterator[GameTree]:
        """This tree and every game tree below it, in file (pre-)order, without recursion."""
        pending: list[GameTree] = [self]
        while pending:
            tree = pending.pop()
            yield tree
            pending.extend(reversed(tree.variations))
