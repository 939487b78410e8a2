"""SGF writer: game trees back to text that ``parse`` reads as the same trees.

Values are escaped the FF[4] way: ``\\`` and ``]`` get a leading ``\\``; nothing else needs it,
since the values are already decoded. Each top-level game tree goes on its own line. Writing is
iterative, so a 100,000-deep tree is fine. The result is ``str``; encode it as the trees' ``CA``
says (this project: UTF-8).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gomoku_archive.sgf.tree import GameTree, Node

_IDENTIFIER = re.compile(r"[A-Za-z]*[A-Z][A-Za-z]*")


def write_collection(trees: Sequence[GameTree]) -> str:
    """The SGF text of a collection: every tree, one per line."""
    parts: list[str] = []
    for tree in trees:
        _write(tree, parts)
        parts.append("\n")
    return "".join(parts)


def write_game_tree(tree: GameTree) -> str:
    """The SGF text of one game tree."""
    parts: list[str] = []
    _write(tree, parts)
    return "".join(parts)


def _write(tree: GameTree, parts: list[str]) -> None:
    """Append ``tree``'s text to ``parts``, raising ``ValueError`` for what SGF cannot hold:
    a tree with no node, a property with no value or an identifier that is not letters with at
    least one uppercase letter."""
    pending: list[GameTree | None] = [tree]  # None closes the innermost open tree
    while pending:
        item = pending.pop()
        if item is None:
            parts.append(")")
            continue
        if not item.nodes:
            raise ValueError("a game tree needs at least one node")
        parts.append("(")
        for node in item.nodes:
            _write_node(node, parts)
        pending.append(None)
        pending.extend(reversed(item.variations))


def _write_node(node: Node, parts: list[str]) -> None:
    parts.append(";")
    for prop in node.properties:
        if not _IDENTIFIER.fullmatch(prop.ident):
            raise ValueError(f"{prop.ident!r} is not an SGF property identifier")
        if not prop.values:
            raise ValueError(f"property {prop.ident} has no value")
        parts.append(prop.ident)
        for value in prop.values:
            if "\\" in value or "]" in value:
                value = value.replace("\\", "\\\\").replace("]", "\\]")
            parts.append(f"[{value}]")
