"""SGF reader: a tokenizer and state machine over the FF[4] grammar

    Collection = GameTree+      GameTree = "(" Sequence GameTree* ")"      Sequence = Node+
    Node = ";" Property*        Property = PropIdent PropValue+
    PropValue = "[" CValueType "]"

with white space allowed between any two tokens. It decides structure only; what the properties
mean is the checker's business.

Decisions where FF[4] leaves room:

* Text before the first ``(`` is skipped (mail headers, a byte-order mark): FF[4]'s notes on
  damaged files mention such junk in front of a collection. Anything but white space between or
  after game trees is an error.
* Identifiers may hold FF[3] lowercase letters (``AddBlack``); one with no uppercase letter is an
  error. ``Property.ident`` keeps the text as written, ``Property.name`` the FF[4] meaning.
* Values are decoded the FF[4] way for every property (the reader does not know types): ``\\``
  followed by a line break (LF, CR, CRLF or LFCR) is removed, ``\\x`` is ``x``, all other
  characters are kept as they are.
* Bytes are split on the ASCII grammar first, then each top-level game tree's values are decoded
  with the charset of its own root ``CA`` (UTF-8 when absent). A value that is not valid in that
  charset is decoded as latin-1 on its own, so one broken comment does not garble the others.
* Positions are 1-based; a column counts bytes (for ``str`` input, characters) from the start of
  the line, as C compilers do. CRLF, CR and LF each end a line.

Speed: the whole input is read as latin-1 (one byte, one character, one C call), and one compiled
regex matches a token per step; its first alternative takes a whole ``B[hh]``-like property with
a plain one-value ASCII value, which is nearly every property of an archive. Values with escapes
or other bytes take a slower path that searches for the next ``]`` or ``\\``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from gomoku_archive.sgf.charset import (
    DEFAULT_CODEC,
    FALLBACK_CODEC,
    decode_latin1_value,
    resolve_codec,
)
from gomoku_archive.sgf.findings import shown
from gomoku_archive.sgf.frames import Appendable, Frame, Stack, StreamStack
from gomoku_archive.sgf.tree import GameTree, Node, Property, new_node, new_property

_PLAIN = r"\[([^\]\\\n\r\x80-\xff]*)\]"  # a value with nothing to decode or count lines in
_HOT_TOKENS = (
    # 1, 2: a whole node of one property with one plain value, followed by the next node or a
    # parenthesis: ";B[hh]", nearly every node of an archive.
    r";([A-Z]+)" + _PLAIN + r"(?=[;()])"
    # 3, 4: an uppercase identifier with one plain value, followed by something other than
    # another value (the lookahead).
    r"|([A-Z]+)" + _PLAIN + r"(?=[;()A-Za-z]|[ \t\n\r\f\v]+[;()A-Za-z])"
)
"""The speed path: what the general tokens below read in several steps, taken in one. Each must
read exactly as the general path does, errors and their wording included (a property test runs
the parser with these disabled and compares)."""
_GENERAL_TOKENS = (
    r"(;)"  # 5
    r"|(\()"  # 6
    r"|(\))"  # 7
    r"|([ \t\n\r\f\v]+)"  # 8
    r"|([A-Za-z]+)"  # 9: any other property: the values are read by _read_property
)
_TOKEN = re.compile(_HOT_TOKENS + "|" + _GENERAL_TOKENS)
_HOT_NODE, _HOT, _SEMICOLON, _OPEN, _CLOSE, _SPACE, _IDENT = 2, 4, 5, 6, 7, 8, 9
_NODE_AFTER_VARIATION = "node after a variation: a game tree's nodes come before its variations"
_MOVE_RUN = re.compile(r"(?:;[BW]\[[a-z][a-z]\](?=[;()]))+")
"""Nodes that ``_TOKEN``'s first alternative would each read as one move of a plain value."""
_BLANKS = re.compile(r"[ \t\n\r\f\v]*")
_VALUE_STOP = re.compile(r"[\]\\]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_RESCAN_LIMIT = 1 << 16


class SgfParseError(ValueError):
    """The input is not an SGF collection; ``line`` and ``column`` (1-based) say where it went
    wrong, ``message`` what."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column

    def __reduce__(self) -> tuple[type[SgfParseError], tuple[str, int, int]]:
        return (type(self), (self.message, self.line, self.column))


@dataclass(slots=True)
class TreeCharset:
    """How the text values of one top-level game tree were decoded (the checker reports it)."""

    declared: str | None = None
    """The root ``CA`` value as written, or None when the root has none."""
    codec: str = DEFAULT_CODEC
    """The Python codec the values were decoded with."""
    known: bool = True
    """False when ``declared`` names a charset this reader cannot use (latin-1 was used)."""
    fallbacks: list[Property] = field(default_factory=list)
    """The first property with a value that was not valid in ``codec`` and was decoded as
    latin-1 (only the first is kept, so a huge game cannot make the list grow with it)."""
    fallback_count: int = 0
    """How many properties were decoded as latin-1."""


def parse(data: bytes | str) -> list[GameTree]:
    """Parse a whole collection: every game tree of ``data``, in order.

    ``bytes`` are decoded per game tree with the tree's root ``CA`` (see the module docstring);
    ``str`` is taken as already decoded. Raises ``SgfParseError`` for anything that is not a
    collection of at least one game tree, and never raises anything else.
    """
    return [tree for tree, _ in parse_with_charsets(data)]


def parse_with_charsets(data: bytes | str) -> list[tuple[GameTree, TreeCharset]]:
    """``parse``, with how each tree's values were decoded."""
    if isinstance(data, str):
        reader = _Reader(decode=False)
        reader.append(data)
    else:
        reader = _Reader(decode=True)
        reader.append(data.decode(FALLBACK_CODEC))
    return list(reader.read(final=True))


def iter_game_trees(chunks: Iterable[bytes]) -> Iterator[GameTree]:
    """Parse a collection arriving in chunks, yielding each top-level game tree as soon as the
    chunk holding its closing ``)`` has been read (one exception: after a single token over
    64 KiB was cut by a chunk boundary, reading waits for as much text again; see
    ``_Reader.append``). Only the tree being read and an unfinished token are held, so memory is
    bounded by the largest tree, never by the collection. Chunks may split the input anywhere.
    Raises ``SgfParseError`` (after yielding the trees before the error)."""
    for tree, _ in iter_game_trees_with_charsets(chunks):
        yield tree


def iter_game_trees_with_charsets(
    chunks: Iterable[bytes],
) -> Iterator[tuple[GameTree, TreeCharset]]:
    """``iter_game_trees``, with how each tree's values were decoded."""
    reader = _Reader(decode=True)
    for chunk in chunks:
        if reader.append(chunk.decode(FALLBACK_CODEC)):
            yield from reader.read(final=False)
    yield from reader.read(final=True)


class TreeListener(Protocol):
    """Hears one top-level game tree as it is read (``stream_game_trees``): ``open_tree`` for
    every ``(`` of it, the nodes in file order, ``close_tree`` for every ``)``."""

    def open_tree(self) -> None: ...

    def node(self, node: Node) -> None: ...

    def close_tree(self) -> None: ...

    def moves(self, run: str, line: int, column: int) -> bool:
        """Take a run of plain move nodes at once: ``run`` is one or more ``;B[xy]`` or
        ``;W[xy]`` (six characters each, two lowercase letters), the first node at ``line`` and
        ``column``. It must do what ``node`` would do for each; when it cannot say that cheaply
        it returns False having changed nothing, and the nodes then come one by one."""
        ...


def stream_game_trees(
    chunks: Iterable[bytes], start_game: Callable[[TreeCharset], TreeListener]
) -> Iterator[TreeListener]:
    """Parse a collection arriving in chunks without building its trees: each top-level game
    tree gets a listener from ``start_game`` (called at its ``(`` with the tree's charset, which
    is complete once the root node is read), hears the tree's structure and nodes as they are
    read, and is yielded once the tree's ``)`` was read. Memory is bounded by the unread text
    and the nesting depth, never by the size of a game. Raises ``SgfParseError`` (after
    yielding the complete games; the listener of the game being read heard part of it)."""
    reader = _Reader(decode=True, start_game=start_game)
    for chunk in chunks:
        if reader.append(chunk.decode(FALLBACK_CODEC)):
            for _ in reader.read(final=False):
                yield reader.listener()
    for _ in reader.read(final=True):
        yield reader.listener()


_STREAMED = GameTree((), ())
_NO_NODES: list[Node] = []
_NO_CHILDREN: list[GameTree] = []
"""What stands for a game tree that was streamed to a listener rather than built."""


class _Reader:
    """The state machine. ``append`` buffers text; ``read`` consumes every complete token and
    stops before an unfinished one (unless ``final``), so it can resume when more text comes."""

    def __init__(
        self, *, decode: bool, start_game: Callable[[TreeCharset], TreeListener] | None = None
    ) -> None:
        self._decode = decode
        self._start_game = start_game
        self._listener: TreeListener | None = None
        self._text = ""
        self._pos = 0
        self._pending: list[str] = []
        self._pending_size = 0
        self._wanted = 0
        self._line = 1
        self._line_start = 0  # offset in _text of the current line's first character
        self._stack: Stack = [] if start_game is None else StreamStack(self._stream_node)
        self._props: list[Property] | None = None  # the open node's properties
        self._node_line = 0
        self._node_column = 0
        self._node_non_ascii = False
        self._seen_tree = False
        self._charset = TreeCharset()

    def append(self, text: str) -> bool:
        """Buffer ``text``; True when it is worth reading now. A token cut by the end of the
        buffer is read again from its start when more text comes. That is cheap while the cut
        token is small, so every chunk is read at once and each game tree comes out as soon as
        the chunk with its ")" arrives. A cut token over 64 KiB (a huge comment) is read again
        only once the unread text has doubled, which keeps the total work linear."""
        self._pending.append(text)
        self._pending_size += len(text)
        return self._pending_size >= self._wanted

    def read(self, *, final: bool) -> Iterator[tuple[GameTree, TreeCharset]]:
        if self._pending:
            self._line_start -= self._pos
            self._text = self._text[self._pos :] + "".join(self._pending)
            self._pos = 0
            self._pending.clear()
            self._pending_size = 0
        yield from self._run(final)
        if final:
            self._finish()
        unread = len(self._text) - self._pos
        self._wanted = unread if unread > _RESCAN_LIMIT else 0

    def _run(self, final: bool) -> Iterator[tuple[GameTree, TreeCharset]]:
        # The hot loop keeps its state in locals and stores it back before returning.
        text = self._text
        size = len(text)
        pos = self._pos
        line = self._line
        line_start = self._line_start
        stack = self._stack
        props = self._props
        match = _TOKEN.match
        runs = self._start_game is not None  # a listener may take runs of moves at once
        single_until = 0  # a run the listener did not take is read node by node up to here
        while pos < size:
            if not stack and not self._seen_tree:
                # Skip whatever precedes the first game tree.
                start = text.find("(", pos)
                if start < 0:
                    # Keep a final CR: with an LF from the next chunk it is one line break.
                    start = size - 1 if not final and text.endswith("\r") else size
                line, line_start = _count_lines(text, pos, start, line, line_start)
                pos = start
                if pos >= size or text[pos] != "(":
                    break
            found = match(text, pos)
            if found is None:
                what = (
                    "property value without an identifier"
                    if text[pos] == "["
                    else (f"unexpected character {text[pos]!r}")
                )
                if props is not None:
                    raise _error(what, line, pos - line_start + 1)
                raise self._misplaced(what, pos, line, line_start)
            kind = found.lastindex
            if kind == _HOT_NODE:
                if stack:
                    nodes, children = stack[-1][0], stack[-1][1]
                    if props is not None:
                        nodes.append(self._close_node(props, len(stack) == 1 and not nodes))
                        props = None
                        hot = True
                    else:
                        # Not for a root node (its CA must be read) nor where ';' is an error.
                        hot = not children and (len(stack) > 1 or bool(nodes))
                    if hot and runs and nodes and pos >= single_until:
                        run = _MOVE_RUN.match(text, pos)
                        if run is not None:
                            assert self._listener is not None
                            if self._listener.moves(run[0], line, pos - line_start + 1):
                                pos = run.end()
                                continue
                            single_until = run.end()
                    if hot:
                        column = pos - line_start + 1
                        prop = new_property(found[1], (found[2],), line, column + 1)
                        nodes.append(new_node((prop,), line, column))
                        pos = found.end()
                        continue
                kind = _SEMICOLON  # read just the ';' and let the loop go on from there
            if kind == _HOT:
                if props is None:
                    raise self._misplaced(_identifier(found[3], stack), pos, line, line_start)
                props.append(new_property(found[3], (found[4],), line, pos - line_start + 1))
                pos = found.end()
            elif kind == _SEMICOLON:
                if not stack:
                    raise self._misplaced("';'", pos, line, line_start)
                nodes, children = stack[-1][0], stack[-1][1]
                if props is not None:
                    nodes.append(self._close_node(props, len(stack) == 1 and not nodes))
                elif children:
                    raise _error(_NODE_AFTER_VARIATION, line, pos - line_start + 1)
                props = []
                self._node_line = line
                self._node_column = pos - line_start + 1
                self._node_non_ascii = False
                pos += 1
            elif kind == _OPEN:
                if stack:
                    nodes = stack[-1][0]
                    if props is not None:
                        nodes.append(self._close_node(props, len(stack) == 1 and not nodes))
                        props = None
                    elif not nodes:
                        raise _error("expected ';' after '('", line, pos - line_start + 1)
                else:
                    self._seen_tree = True
                    self._charset = TreeCharset()
                    if self._start_game is not None:
                        self._listener = self._start_game(self._charset)
                stack.append(self._open_frame(line, pos - line_start + 1))
                pos += 1
            elif kind == _CLOSE:
                if not stack:
                    raise self._misplaced("')'", pos, line, line_start)
                nodes, children, tree_line, tree_column = stack.pop()
                if props is not None:
                    nodes.append(self._close_node(props, not stack and not nodes))
                    props = None
                elif not nodes:
                    raise _error(
                        "empty game tree '()': a game tree needs at least one ';' node",
                        line,
                        pos - line_start + 1,
                    )
                tree = self._close_frame(nodes, children, tree_line, tree_column)
                pos += 1
                if stack:
                    stack[-1][1].append(tree)
                else:
                    yield tree, self._charset
            elif kind == _SPACE:
                end = found.end()
                if end == size and not final:
                    break  # a CR here may pair with an LF in the next chunk
                line, line_start = _count_lines(text, pos, end, line, line_start)
                pos = end
            else:
                if found.end() == size and not final:
                    break  # the identifier may go on in the next chunk
                ident = found[_IDENT]
                if props is None:
                    raise self._misplaced(_identifier(ident, stack), pos, line, line_start)
                if ident.islower():
                    raise _error(
                        f"property identifier {shown(ident)!r} has no uppercase letter",
                        line,
                        pos - line_start + 1,
                    )
                read = self._read_property(text, pos, found.end(), final, line, line_start)
                if read is None:
                    break
                prop, pos, line, line_start = read
                props.append(prop)
        self._pos = pos
        self._line = line
        self._line_start = line_start
        self._props = props

    def listener(self) -> TreeListener:
        """The listener of the game tree read last (streaming only)."""
        assert self._listener is not None
        return self._listener

    def _open_frame(self, line: int, column: int) -> Frame:
        if self._listener is None:
            return ([], [], line, column)
        self._listener.open_tree()
        return (_NO_NODES, _NO_CHILDREN, line, column)  # StreamStack keeps the position only

    def _stream_node(self, node: Node) -> None:
        assert self._listener is not None
        self._listener.node(node)

    def _close_frame(
        self,
        nodes: Appendable[Node],
        children: Appendable[GameTree],
        line: int,
        column: int,
    ) -> GameTree:
        if self._listener is not None:
            self._listener.close_tree()
            return _STREAMED
        assert isinstance(nodes, list)
        assert isinstance(children, list)
        return GameTree(tuple(nodes), tuple(children), line, column)

    def _read_property(
        self, text: str, start: int, pos: int, final: bool, line: int, line_start: int
    ) -> tuple[Property, int, int, int] | None:
        """Read the values of the identifier at ``start`` (ending at ``pos``); None when the
        buffer ends before it is certain that no further value follows."""
        size = len(text)
        ident = text[start:pos]
        column = start - line_start + 1
        values: list[str] = []
        end_line, end_line_start = line, line_start
        while True:
            blanks = _BLANKS.match(text, pos)
            blank_end = blanks.end() if blanks else pos
            if blank_end == size and not final:
                return None
            if blank_end == size or text[blank_end] != "[":
                if not values:
                    raise _error(f"property {shown(ident)} has no value", line, column)
                return (
                    Property(ident, tuple(values), line, column),
                    pos,
                    end_line,
                    end_line_start,
                )
            end_line, end_line_start = _count_lines(text, pos, blank_end, end_line, end_line_start)
            scanned = _scan_value(text, blank_end)
            if scanned is None:
                if not final:
                    return None
                raise _error(
                    f"property value of {shown(ident)} is never closed: '[' without a matching ']'",
                    end_line,
                    blank_end - end_line_start + 1,
                )
            value, pos = scanned
            end_line, end_line_start = _count_lines(text, blank_end, pos, end_line, end_line_start)
            if not value.isascii():
                self._node_non_ascii = True
            values.append(value)

    def _close_node(self, props: list[Property], is_root: bool) -> Node:
        if is_root:
            self._resolve_charset(props)
        if self._decode and self._node_non_ascii and self._charset.codec != FALLBACK_CODEC:
            props = self._redecode(props)
        return new_node(tuple(props), self._node_line, self._node_column)

    def _resolve_charset(self, root: list[Property]) -> None:
        for prop in root:
            if prop.name == "CA":
                declared = prop.values[0]
                codec = resolve_codec(declared) if declared.isascii() else None
                self._charset.declared = declared
                self._charset.known = codec is not None
                self._charset.codec = codec or FALLBACK_CODEC
                return

    def _redecode(self, props: list[Property]) -> list[Property]:
        codec = self._charset.codec
        decoded: list[Property] = []
        for prop in props:
            if all(value.isascii() for value in prop.values):
                decoded.append(prop)
                continue
            values: list[str] = []
            fell_back = False
            for value in prop.values:
                text = value if value.isascii() else decode_latin1_value(value, codec)
                if text is None:
                    text = value  # already the latin-1 reading of the bytes
                    fell_back = True
                values.append(text)
            redecoded = Property(prop.ident, tuple(values), prop.line, prop.column)
            if fell_back:
                self._charset.fallback_count += 1
                if not self._charset.fallbacks:
                    self._charset.fallbacks.append(redecoded)
            decoded.append(redecoded)
        return decoded

    def _finish(self) -> None:
        if self._stack:
            _, _, line, column = self._stack[-1]
            raise _error("game tree is never closed: '(' without a matching ')'", line, column)
        if not self._seen_tree:
            column = len(self._text) - self._line_start + 1
            raise _error(
                "no game tree: expected '(' before the end of the input", self._line, column
            )

    def _misplaced(self, what: str, pos: int, line: int, line_start: int) -> SgfParseError:
        """The error for a token where the grammar does not allow it, worded for the place."""
        column = pos - line_start + 1
        if not self._stack:
            return _error(f"{what} outside a game tree", line, column)
        if not self._stack[-1][0]:
            return _error(f"expected ';' after '(', found {what}", line, column)
        return _error(f"{what} outside a node: variations end a game tree", line, column)


def _identifier(ident: str, stack: Stack) -> str:
    """A misplaced identifier as an error names it, whichever token read it: text outside any
    game tree, a property inside one."""
    return f"property {shown(ident)}" if stack else f"text {shown(ident)!r}"


def _error(message: str, line: int, column: int) -> SgfParseError:
    return SgfParseError(message, line, column)


def _count_lines(text: str, start: int, end: int, line: int, line_start: int) -> tuple[int, int]:
    """Advance (line, offset of the line's start) over text[start:end]."""
    for found in _LINE_BREAK.finditer(text, start, end):
        line += 1
        line_start = found.end()
    return line, line_start


def _scan_value(text: str, start: int) -> tuple[str, int] | None:
    """Decode the value whose ``[`` is at ``start``: (value, offset after its ``]``), or None
    if the text ends before the closing ``]``."""
    close = text.find("]", start + 1)
    if close < 0:
        return None
    if text.find("\\", start + 1, close) < 0:
        return text[start + 1 : close], close + 1
    parts: list[str] = []
    size = len(text)
    kept = search = start + 1
    while True:
        stop = _VALUE_STOP.search(text, search)
        if stop is None:
            return None
        at = stop.start()
        if text[at] == "]":
            parts.append(text[kept:at])
            return "".join(parts), at + 1
        parts.append(text[kept:at])
        if at + 1 >= size:
            return None
        escaped = text[at + 1]
        if escaped in "\r\n":
            # A soft line break (backslash + LF, CR, CRLF or LFCR) is removed entirely.
            kept = search = at + 2
            if kept < size and text[kept] in "\r\n" and text[kept] != escaped:
                kept = search = kept + 1
        else:
            kept = at + 1  # the escaped character itself starts the next kept run
            search = at + 2
