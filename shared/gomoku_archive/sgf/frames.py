"""The parser's stack of open game trees. Building trees, a frame is two lists (the tree's nodes
and finished children) and the position of its ``(``; streaming them (``stream_game_trees``),
``StreamStack`` keeps only two flags and the position per level in arrays, since one game may
nest a million variations deep: about 17 bytes a level where list frames take over 200."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Protocol, TypeVar

from gomoku_archive.sgf.tree import GameTree, Node

T_contra = TypeVar("T_contra", contravariant=True)


class Appendable(Protocol[T_contra]):
    def append(self, item: T_contra, /) -> None: ...


# A game tree being read: its nodes, its finished child trees, and the position of its "(".
Frame = tuple[Appendable[Node], Appendable[GameTree], int, int]


class Stack(Protocol):
    """The open game trees, innermost last: a list of frames, or a ``StreamStack``."""

    def append(self, frame: Frame, /) -> None: ...

    def pop(self) -> Frame: ...

    def __getitem__(self, index: int, /) -> Frame: ...

    def __len__(self) -> int: ...


_HAS_NODES, _HAS_CHILDREN = 1, 2


class StreamStack:
    """The stack when trees are streamed. The frames it hands out are views on its top:
    appending a node sets the flag and passes the node on."""

    def __init__(self, take: Callable[[Node], None]) -> None:
        self._flags = bytearray()
        self._positions = array("q")
        self._take = take
        self._nodes: Appendable[Node] = _TopFlag(self._flags, _HAS_NODES, take)
        self._children: Appendable[GameTree] = _TopFlag(self._flags, _HAS_CHILDREN, None)

    def append(self, frame: Frame, /) -> None:
        self._flags.append(0)
        self._positions.append(frame[2])
        self._positions.append(frame[3])

    def pop(self) -> Frame:
        flags = self._flags.pop()
        column, line = self._positions.pop(), self._positions.pop()
        nodes = _PoppedFlag(bool(flags & _HAS_NODES), self._take)
        children = _PoppedFlag(bool(flags & _HAS_CHILDREN), None)
        return nodes, children, line, column

    def __getitem__(self, index: int, /) -> Frame:
        if index != -1:
            raise IndexError("only the innermost tree is reachable")
        return self._nodes, self._children, self._positions[-2], self._positions[-1]

    def __len__(self) -> int:
        return len(self._flags)


class _TopFlag:
    __slots__ = ("_bit", "_flags", "_take")

    def __init__(self, flags: bytearray, bit: int, take: Callable[[Node], None] | None) -> None:
        self._flags, self._bit, self._take = flags, bit, take

    def append(self, item: object, /) -> None:
        self._flags[-1] |= self._bit
        if self._take is not None:
            assert isinstance(item, Node)
            self._take(item)

    def __bool__(self) -> bool:
        return bool(self._flags[-1] & self._bit)


class _PoppedFlag:
    __slots__ = ("_set", "_take")

    def __init__(self, is_set: bool, take: Callable[[Node], None] | None) -> None:
        self._set, self._take = is_set, take

    def append(self, item: object, /) -> None:
        self._set = True
        if self._take is not None:
            assert isinstance(item, Node)
            self._take(item)

    def __bool__(self) -> bool:
        return self._set
