"""Charsets of SGF text values (the root ``CA`` property).

The grammar is read on the ASCII level first (FF[4] §1: identifiers and non-text values are
US-ASCII), so only charsets that spell every printable ASCII character as that single byte can be
used here: UTF-8, ISO-8859-x, Windows-125x, EUC-*, ... (UTF-16 or EBCDIC cannot). A charset name
Python does not know, or one that is not ASCII-compatible, counts as unknown.

This project writes UTF-8 and uses it when ``CA`` is missing; FF[4]'s own default is ISO-8859-1
(latin-1), which is also the fallback for bytes that do not decode as the charset in force.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

DEFAULT_CODEC = "utf-8"
"""The codec used when a game's root has no ``CA``: this project's files are UTF-8."""
FALLBACK_CODEC = "iso8859-1"
"""Latin-1: FF[4]'s default charset, used when the bytes are not valid in the charset in force."""

_ASCII_SAMPLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"


@lru_cache(maxsize=64)
def resolve_codec(name: str) -> str | None:
    """Python's codec name for a ``CA`` value such as ``UTF-8`` or ``Latin1``, or None if the
    charset is unknown or not ASCII-compatible."""
    try:
        codec = codecs.lookup(name.strip()).name
        # Any registered codec may answer here, including bytes-to-bytes ones such as "hex" and
        # codecs that raise on every input: one trial decode settles all of them.
        usable = _ASCII_SAMPLE.decode(codec) == _ASCII_SAMPLE.decode("ascii")
    except Exception:  # arbitrary codec implementations may raise anything, see above
        return None
    return codec if usable else None


def decode_latin1_value(value: str, codec: str) -> str | None:
    """Re-decode a value read byte-for-byte as latin-1 in ``codec``; None if it is not valid."""
    try:
        return value.encode(FALLBACK_CODEC).decode(codec)
    except UnicodeError:
        return None
